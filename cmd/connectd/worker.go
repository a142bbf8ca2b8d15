package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/herder"
	"github.com/connectd/connectd/framework/logging"
	"github.com/connectd/connectd/framework/metrics"
	"github.com/connectd/connectd/framework/rest"
	"github.com/connectd/connectd/framework/rest/client"
	"github.com/connectd/connectd/framework/worker"
	"github.com/connectd/connectd/framework/workerconfig"
	"github.com/connectd/connectd/internal/brokerpoll"
	"github.com/connectd/connectd/internal/glibcmalloc"
	"github.com/connectd/connectd/internal/kafkalog"
	"github.com/connectd/connectd/plugins/host"
)

// shutdownMargin is added to task.shutdown.graceful.timeout.ms to bound a
// graceful shutdown: committing, writing statuses, leaving the group and
// closing the Kafka clients.
const shutdownMargin = 10 * time.Second

var _ rest.Herder = (*herder.Herder)(nil)

func workerCommand() *command {
	return &command{
		name:    "worker",
		usage:   "<worker.properties>",
		summary: "run a worker of a connectd cluster (Kafka Connect distributed-mode properties)",
		run: func(ctx context.Context, env *cliEnv, _ *flag.FlagSet, args []string) error {
			if len(args) != 1 {
				return usageError("worker needs exactly one argument: the worker.properties file")
			}
			return runWorker(ctx, env, args[0])
		},
	}
}

// oneLine makes an error printable as the single line scripts read.
func oneLine(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	msg = strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", " ")), " ")
	return &exitError{code: exitFailure, msg: msg}
}

func runWorker(ctx context.Context, env *cliEnv, path string) error {
	cfg, err := workerconfig.Load(path)
	if err != nil {
		return oneLine("invalid worker config %s: %v", path, err)
	}
	restCfg, restKeys, err := rest.ParseConfig(cfg.Props)
	if err != nil {
		return oneLine("invalid worker config %s: %v", path, err)
	}

	root, err := logging.ParseLevel(cfg.LogLevel)
	if err != nil {
		return oneLine("invalid worker config %s: log.level: %v", path, err)
	}
	levels := logging.New(root)
	base := newBaseLogger(env.stderr, cfg.LogFormat)
	log := levels.Logger(base, "connectd")
	// The start-up and shutdown milestones: plain lines for people and
	// scripts, records of the one log stream with log.format=json.
	progress := func(format string, args ...any) {
		fmt.Fprintf(env.stderr, "connectd worker: "+format+"\n", args...)
	}
	if cfg.LogFormat == "json" {
		progress = func(format string, args ...any) { log.Info(fmt.Sprintf(format, args...)) }
	}
	// glibc fixes its arena limit while the runtime starts its threads, so
	// the limit holds from a process's start only through its environment:
	// restart once with it (same pid, same command line). Where that is not
	// possible, apply the settings from here (arenas made so far remain).
	mallocEnv := glibcmalloc.Environment(cfg.MallocArenaMax, cfg.MallocMmapThreshold)
	if env.reexec != nil && !glibcmalloc.StartedWith(mallocEnv) {
		log.Debug("restarting with the C allocator settings in the environment", "environment", mallocEnv)
		err := env.reexec(glibcmalloc.WithEnvironment(os.Environ(), mallocEnv))
		log.Warn("could not restart with the C allocator settings; applying them from here", "err", err)
	}
	progress("reading %s", path)
	if err := warnKeys(log, cfg, restKeys); err != nil {
		return oneLine("invalid worker config %s: %v", path, err)
	}
	// Before the first librdkafka client: the wait applies to the whole
	// process (internal/brokerpoll).
	if err := brokerpoll.SetWaitMillis(cfg.RdkafkaBusyPollWaitMillis); err != nil {
		return oneLine("invalid worker config %s: %s: %v", path, workerconfig.RdkafkaBusyPollWait, err)
	}
	log.Debug("librdkafka busy polls", "replaced", brokerpoll.Active(), "wait_ms", brokerpoll.WaitMillis())
	if err := glibcmalloc.Apply(cfg.MallocArenaMax, cfg.MallocMmapThreshold); err != nil {
		return oneLine("invalid worker config %s: %s, %s: %v", path, workerconfig.MallocArenaMax, workerconfig.MallocMmapThreshold, err)
	}
	arenas, _ := glibcmalloc.Arenas()
	log.Debug("C allocator", "malloc_arena_max", cfg.MallocArenaMax, "arenas", arenas, "mmap_threshold", cfg.MallocMmapThreshold,
		"from_start", glibcmalloc.StartedWith(mallocEnv))

	if len(cfg.PluginPath) == 0 {
		return oneLine("invalid worker config %s: plugin.path: no plugin directory configured (install plugins with `connectd plugin install --plugin-path DIR`)", path)
	}
	catalog, err := host.OpenInstalled(cfg.PluginPath...)
	if err != nil {
		return oneLine("invalid worker config %s: %v", path, err)
	}
	installed, err := catalog.List()
	if err != nil {
		return oneLine("plugin.path: %v", err)
	}
	progress("%d connector plugins in %s", len(installed), strings.Join(catalog.Dirs(), ":"))

	if err := ensureTopics(ctx, cfg, log); err != nil {
		if ctx.Err() != nil {
			progress("stopped (signal received) before the internal topics were ready")
			return nil
		}
		return oneLine("%v", err)
	}
	progress("internal topics ready: config=%s offsets=%s status=%s", cfg.Herder.ConfigTopic, cfg.Herder.OffsetsTopic, cfg.Herder.StatusTopic)

	hcfg := cfg.Herder
	hcfg.Plugins = catalog
	hcfg.Version, hcfg.Commit = version, commit
	if hcfg.Commit == "" {
		hcfg.Commit = vcsRevision()
	}
	hcfg.Logger = levels.Logger(base, "connectd.herder")
	// One registry for the whole worker; /metrics adds the plugin
	// processes' families to it at scrape time.
	reg := metrics.NewRegistry(metrics.BuildInfo{Version: hcfg.Version, Commit: hcfg.Commit})
	if brokerpoll.Active() && brokerpoll.WaitMillis() > 0 {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "connectd_rdkafka_poll_naps_total",
			Help: "Busy polls of librdkafka's threads in this worker turned into a short wait (" + workerconfig.RdkafkaBusyPollWait + ").",
		}, func() float64 { return float64(brokerpoll.Waits()) }))
	}
	metricsLog := levels.Logger(base, "connectd.metrics")
	scrape, err := metrics.NewGatherer(reg, metrics.GathererOptions{Logger: metricsLog})
	if err != nil {
		return oneLine("%v", err)
	}
	metricsHandler := metrics.Handler(scrape, metricsLog)
	hcfg.Metrics = reg
	hcfg.LogLevels = levels
	tlsConf, err := restCfg.TLS.ClientConfig()
	if err != nil {
		return oneLine("%v", err)
	}
	// The herder reaches the leader through signed internal requests.
	var h *herder.Herder
	peer := client.NewPeer(func() ([]byte, bool) {
		k, _, ok := h.SessionKey()
		return k, ok
	}, client.WithTLSConfig(tlsConf))
	h, err = herder.New(hcfg, peer)
	if err != nil {
		return oneLine("%v", err)
	}

	srv, err := rest.NewServer(restCfg, h, rest.WithLogger(levels.Logger(base, "connectd.rest")),
		rest.WithRegisterer(reg), rest.WithLogLevels(levels), rest.WithMetricsHandler(metricsHandler))
	if err != nil {
		return oneLine("%v", err)
	}
	if err := srv.Listen(); err != nil {
		return oneLine("%v", err)
	}
	url, err := cfg.AdvertisedURL(srv.Listeners())
	if err != nil {
		return oneLine("%v", err)
	}
	h.SetWorkerURL(url)

	wcfg := cfg.Worker
	wcfg.WorkerID = herder.WorkerID(url)
	wcfg.Plugins = catalog
	wcfg.Logger = levels.Logger(base, "connectd.worker")
	wcfg.Metrics = reg
	// A fenced exactly-once task restarts only while the cluster still
	// assigns it here (no successor).
	wcfg.OwnsTask = h.OwnsTask
	w, err := worker.New(ctx, wcfg, h)
	if err != nil {
		return oneLine("%v", err)
	}
	scrape.SetPlugins(func() []metrics.PluginTarget {
		procs := w.PluginProcesses()
		out := make([]metrics.PluginTarget, len(procs))
		for i, p := range procs {
			out[i] = metrics.PluginTarget{Connector: p.Connector, Source: p.Process}
		}
		return out
	})
	stopMetrics, err := serveMetrics(cfg.MetricsListener, metricsHandler, log)
	if err != nil {
		closeWorker(w, cfg)
		return oneLine("metrics.listener: %v", err)
	}
	defer stopMetrics()
	if cfg.MetricsListener != "" {
		progress("metrics on %s/metrics", cfg.MetricsListener)
	}

	serveCtx, stopServing := context.WithCancel(context.WithoutCancel(ctx))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(serveCtx) }()
	progress("REST API listening on %s (advertised as %s)", strings.Join(srv.Listeners(), ", "), url)

	startCtx, cancelStart := context.WithTimeout(ctx, 2*time.Minute)
	err = h.Start(startCtx, w)
	cancelStart()
	if err != nil {
		stopServing()
		<-served
		closeWorker(w, cfg)
		if ctx.Err() != nil {
			return nil
		}
		return oneLine("joining the cluster: %v", err)
	}
	progress("joined cluster %s as %s; worker started", cfg.Herder.GroupID, url)

	var runErr, memberErr error
	select {
	case <-ctx.Done():
		progress("stopping (signal received): stopping tasks, committing, leaving the group")
	case runErr = <-served:
		progress("stopping: the REST server failed: %v", runErr)
		served <- nil
	case memberErr = <-h.Failed():
		progress("stopping: %v", memberErr)
	}
	deadline := cfg.Worker.TaskShutdownTimeout + shutdownMargin
	sctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	if err := h.Stop(sctx); err != nil {
		log.Warn("herder stop", "err", err)
	}
	if err := w.Close(sctx); err != nil {
		log.Warn("worker close", "err", err)
	}
	stopServing()
	<-served
	progress("stopped in %v", time.Since(start).Round(time.Millisecond))
	if runErr != nil {
		return oneLine("REST server: %v", runErr)
	}
	if memberErr != nil {
		return oneLine("%v", memberErr)
	}
	return nil
}

// serveMetrics serves /metrics alone on metrics.listener (http://host:port)
// until the returned stop is called; with no listener it does nothing.
func serveMetrics(listener string, h http.Handler, log *slog.Logger) (stop func(), err error) {
	if listener == "" {
		return func() {}, nil
	}
	addr := strings.TrimPrefix(listener, "http://")
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener failed", "listener", listener, "err", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}, nil
}

func closeWorker(w *worker.Worker, cfg *workerconfig.Config) {
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Worker.TaskShutdownTimeout+shutdownMargin)
	defer cancel()
	_ = w.Close(ctx)
}

func newBaseLogger(out io.Writer, format string) *slog.Logger {
	// Levels are filtered per logger by logging.Levels; the handler
	// passes everything.
	opts := &slog.HandlerOptions{Level: logging.LevelTrace}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(out, opts))
	}
	return slog.New(slog.NewTextHandler(out, opts))
}

// warnKeys reports worker properties that nothing uses, by name and with
// the known key each is most likely a typo of; a typo of a guarantee or
// security setting is an error (workerconfig.Config.UnknownKeys).
func warnKeys(log *slog.Logger, cfg *workerconfig.Config, restKeys []string) error {
	used := map[string]bool{}
	for _, k := range restKeys {
		used[k] = true
	}
	unknown, err := cfg.UnknownKeys(restKeys)
	for _, u := range unknown {
		used[u.Key] = true // not reported again as a dropped client setting
		if strings.HasPrefix(u.Key, "ssl.") {
			continue
		}
		if u.DidYouMean != "" {
			log.Warn(u.Message(), "key", u.Key, "did_you_mean", u.DidYouMean)
		} else {
			log.Warn(u.Message(), "key", u.Key)
		}
	}
	for k, why := range cfg.Ignored {
		log.Info("Kafka Connect worker property not used by connectd: "+k, "key", k, "reason", why)
	}
	for k, why := range cfg.Dropped {
		if !used[k] {
			log.Warn("client property not passed to Kafka clients: "+k, "key", k, "reason", why)
		}
	}
	return err
}

func ensureTopics(ctx context.Context, cfg *workerconfig.Config, log *slog.Logger) error {
	cm := kafka.ConfigMap{"bootstrap.servers": cfg.Herder.BootstrapServers, "client.id": cfg.Herder.GroupID + "-topics"}
	for k, v := range cfg.Herder.ClientProps {
		cm[k] = v
	}
	admin, err := kafkalog.NewAdmin(log, cm)
	if err != nil {
		return fmt.Errorf("kafka admin client: %w", err)
	}
	defer admin.Close()
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := herder.EnsureTopics(tctx, admin.AdminClient, log, cfg.Topics...); err != nil {
		var te *herder.TopicError
		if errors.As(err, &te) {
			return err
		}
		return fmt.Errorf("internal topics (is Kafka reachable at %s?): %w", cfg.Herder.BootstrapServers, err)
	}
	return nil
}
