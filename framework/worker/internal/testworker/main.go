// Command testworker runs connectors and their tasks through the worker
// API in a process of its own, so that the worker's crash tests can
// SIGKILL, SIGSTOP and restart a real worker process. It prints one line
// per state change on stdout:
//
//	task <connector>-<n> <STATE> <trace as a JSON string>
//	connector <name> <STATE> <trace as a JSON string>
//
// and stops gracefully on SIGTERM or SIGINT.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/connectd/connectd/framework/worker"
	"github.com/connectd/connectd/plugins/host"
)

type printer struct{ mu sync.Mutex }

func (p *printer) line(kind, name string, s worker.State, trace string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, _ := json.Marshal(trace)
	fmt.Printf("%s %s %s %s\n", kind, name, s, t)
}

func (p *printer) ConnectorState(name string, s worker.State, trace string) {
	p.line("connector", name, s, trace)
}

func (p *printer) TaskState(id worker.TaskID, s worker.State, trace string) {
	p.line("task", id.String(), s, trace)
}

func main() {
	var (
		bootstrap   = flag.String("bootstrap", "", "bootstrap.servers")
		group       = flag.String("group", "connect-test", "group.id")
		offsetsTop  = flag.String("offsets-topic", "", "offset.storage.topic")
		offsetParts = flag.Int("offsets-partitions", 0, "offset.storage.partitions to enforce (0: any)")
		pluginDir   = flag.String("plugins", "", "plugin.path directory")
		eos         = flag.Bool("eos", true, "exactly.once.source.support=enabled")
		name        = flag.String("connector", "", "connector name")
		configFile  = flag.String("config", "", "JSON file with the connector's properties")
		flush       = flag.Duration("flush-interval", time.Second, "offset.flush.interval.ms")
		shutdown    = flag.Duration("shutdown-timeout", 10*time.Second, "task.shutdown.graceful.timeout.ms")
		backoff     = flag.Duration("backoff", 200*time.Millisecond, "initial automatic restart backoff")
		sinkBatch   = flag.Int("sink-batch", 0, "records per sink Put (0: the worker's default)")
		session     = flag.Duration("session-timeout", 6*time.Second, "sink consumers' session.timeout.ms (a killed worker's members leave the group after it)")
		also        = map[string]string{}
	)
	flag.Func("also", "another connector to run, as name=config-file (repeatable)", func(v string) error {
		name, file, ok := strings.Cut(v, "=")
		if !ok {
			return fmt.Errorf("-also %q: want name=config-file", v)
		}
		also[name] = file
		return nil
	})
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	also[*name] = *configFile
	if err := run(log, *bootstrap, *group, *offsetsTop, *offsetParts, *pluginDir, *eos, also, *flush, *shutdown, *backoff, *session, *sinkBatch); err != nil {
		log.Error("testworker failed", "error", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger, bootstrap, group, offsetsTopic string, offsetParts int, pluginDir string, eos bool,
	connectors map[string]string, flush, shutdown, backoff, session time.Duration, sinkBatch int) error {
	cat, err := host.OpenCatalog(pluginDir)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	w, err := worker.New(ctx, worker.Config{
		WorkerID: fmt.Sprintf("testworker-%d", os.Getpid()), GroupID: group, BootstrapServers: bootstrap,
		ExactlyOnceSource: eos, OffsetsTopic: offsetsTopic, OffsetsPartitions: offsetParts,
		OffsetFlushInterval: flush, TaskShutdownTimeout: shutdown,
		RestartBackoffInitial: backoff, RestartBackoffMax: 10 * backoff,
		SinkBatchRecords: sinkBatch,
		ConsumerProps: map[string]string{
			"session.timeout.ms":    strconv.Itoa(int(session.Milliseconds())),
			"heartbeat.interval.ms": strconv.Itoa(int(session.Milliseconds() / 6)),
		},
		Plugins: cat, PluginLaunch: host.LaunchOptions{Logger: log},
		Logger: log,
	}, &printer{})
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 2*shutdown)
		defer cancel()
		_ = w.Close(cctx)
	}()
	for name, file := range connectors {
		if err := startConnector(ctx, log, w, name, file); err != nil {
			return err
		}
	}
	<-ctx.Done()
	return nil
}

// startConnector starts connector name with the properties in file, and
// its tasks.
func startConnector(ctx context.Context, log *slog.Logger, w *worker.Worker, name, file string) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var props map[string]string
	if err := json.Unmarshal(raw, &props); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if err := w.StartConnector(ctx, name, props, worker.TargetStarted, nil); err != nil {
		return err
	}
	tasks := 1
	if v := props["tasks.max"]; v != "" {
		if tasks, err = strconv.Atoi(v); err != nil {
			return fmt.Errorf("tasks.max: %w", err)
		}
	}
	var configs []map[string]string
	for {
		// The connector may be restarting (its plugin killed): ask again.
		configs, err = w.ConnectorTaskConfigs(ctx, name, tasks)
		if err == nil || ctx.Err() != nil {
			break
		}
		log.Warn("task configs not available yet", "error", err)
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		return err
	}
	for i, tc := range configs {
		if err := w.StartTask(ctx, worker.TaskID{Connector: name, Task: i}, props, tc, worker.TargetStarted); err != nil {
			return err
		}
	}
	return nil
}
