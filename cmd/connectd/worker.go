package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/convert"
	"github.com/connectd/connectd/framework/convert/schemaregistry"
	"github.com/connectd/connectd/framework/daemon"
	"github.com/connectd/connectd/framework/workerconfig"
	"github.com/connectd/connectd/internal/brokerpoll"
	"github.com/connectd/connectd/internal/glibcmalloc"
)

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

// runWorker loads the worker properties, adds what only the process knows
// (build identity, the C allocator and librdkafka poll settings made at
// start) and hands them to daemon.Run, which owns the worker's assembly
// and its shutdown order.
func runWorker(ctx context.Context, env *cliEnv, path string) error {
	cfg, err := workerconfig.Load(path)
	if err != nil {
		return oneLine("invalid worker config %s: %v", path, err)
	}
	// The shipped plugins are built with the Schema Registry converters
	// (plugins.WithConverters), so the worker lists them too.
	opts := daemon.Opts{Config: cfg, Path: path, Version: version, Commit: commit, Stderr: env.stderr,
		Converters: convert.NewSet(schemaregistry.Infos()...)}
	if opts.Commit == "" {
		opts.Commit = vcsRevision()
	}

	// glibc fixes its arena limit while the runtime starts its threads, so
	// the limit holds from a process's start only through its environment:
	// restart once with it (same pid, same command line). Where that is not
	// possible, apply the settings from here (arenas made so far remain).
	mallocEnv := glibcmalloc.Environment(cfg.MallocArenaMax, cfg.MallocMmapThreshold)
	if env.reexec != nil && !glibcmalloc.StartedWith(mallocEnv) {
		err := env.reexec(glibcmalloc.WithEnvironment(os.Environ(), mallocEnv))
		opts.Notes = append(opts.Notes, daemon.Note{Level: slog.LevelWarn,
			Msg: "could not restart with the C allocator settings; applying them from here", Args: []any{"err", err}})
	}
	// Before the first librdkafka client: the wait applies to the whole
	// process (internal/brokerpoll).
	if err := brokerpoll.SetWaitMillis(cfg.RdkafkaBusyPollWaitMillis); err != nil {
		return oneLine("invalid worker config %s: %s: %v", path, workerconfig.RdkafkaBusyPollWait, err)
	}
	if err := glibcmalloc.Apply(cfg.MallocArenaMax, cfg.MallocMmapThreshold); err != nil {
		return oneLine("invalid worker config %s: %s, %s: %v", path, workerconfig.MallocArenaMax, workerconfig.MallocMmapThreshold, err)
	}
	arenas, _ := glibcmalloc.Arenas()
	opts.Notes = append(opts.Notes,
		daemon.Note{Level: slog.LevelDebug, Msg: "librdkafka busy polls", Args: []any{"replaced", brokerpoll.Active(), "wait_ms", brokerpoll.WaitMillis()}},
		daemon.Note{Level: slog.LevelDebug, Msg: "C allocator", Args: []any{"malloc_arena_max", cfg.MallocArenaMax, "arenas", arenas,
			"mmap_threshold", cfg.MallocMmapThreshold, "from_start", glibcmalloc.StartedWith(mallocEnv)}})
	if brokerpoll.Active() && brokerpoll.WaitMillis() > 0 {
		opts.Collectors = append(opts.Collectors, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "connectd_rdkafka_poll_naps_total",
			Help: "Busy polls of librdkafka's threads in this worker turned into a short wait (" + workerconfig.RdkafkaBusyPollWait + ").",
		}, func() float64 { return float64(brokerpoll.Waits()) }))
	}

	if err := daemon.Run(ctx, opts); err != nil {
		return oneLine("%v", err)
	}
	return nil
}
