package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

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
	opts := daemon.Opts{Config: cfg, Path: path, Version: version, Commit: commit, Stderr: env.stderr}
	if opts.Commit == "" {
		opts.Commit = vcsRevision()
	}

	// Bounded C-allocator arenas for the plugins too (the worker's own
	// were capped when the process started), unless the operator chose
	// MALLOC_ARENA_MAX.
	arenas := os.Getenv(glibcmalloc.EnvVar)
	if arenas == "" {
		arenas = strconv.Itoa(glibcmalloc.Default)
	}
	cfg.Worker.PluginLaunch.MallocArenaMax = arenas
	opts.Notes = append(opts.Notes,
		daemon.Note{Msg: "C allocator", Args: []any{"malloc_arena_max", arenas, "capped_at_start", glibcmalloc.Limited(),
			"mmap_threshold_fixed", glibcmalloc.MmapThresholdFixed()}},
		daemon.Note{Msg: "librdkafka busy polls", Args: []any{"replaced", brokerpoll.Active(), "nap_ms", brokerpoll.NapMillis()}})
	if brokerpoll.NapMillis() > 0 {
		opts.Collectors = append(opts.Collectors, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "connectd_rdkafka_poll_naps_total",
			Help: "Busy polls of librdkafka's threads in this worker turned into a short wait (" + brokerpoll.EnvVar + ").",
		}, func() float64 { return float64(brokerpoll.Naps()) }))
	}

	if err := daemon.Run(ctx, opts); err != nil {
		return oneLine("%v", err)
	}
	return nil
}
