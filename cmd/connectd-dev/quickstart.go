package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/connectd/connectd/framework/rest/client"
	"github.com/connectd/connectd/internal/quickstart"
)

// devQuickstartCommands are the Go half of scripts/quickstart.sh: topic
// preparation, the live progress display, the final check and the
// clean-up.
func devQuickstartCommands() []*command {
	var files quickstart.Files
	var bootstrap string
	common := func(fs *flag.FlagSet) {
		fs.StringVar(&files.Source, "source", "quickstart/connectors/orders-datagen.json", "the DatagenSource connector file")
		fs.StringVar(&files.Replication, "replication", "", "the KafkaReplicationSource connector file (optional)")
		fs.StringVar(&files.Sink, "sink", "", "the AerospikeSink connector file (optional)")
		fs.StringVar(&bootstrap, "bootstrap", os.Getenv("KAFKA_BOOTSTRAP"), "Kafka bootstrap servers (env KAFKA_BOOTSTRAP)")
	}
	load := func() (*quickstart.Pipeline, error) {
		if bootstrap == "" {
			return nil, usageError("no Kafka broker: set --bootstrap or KAFKA_BOOTSTRAP")
		}
		p, err := quickstart.Load(files, nil)
		if err != nil {
			return nil, &exitError{code: exitFailure, msg: err.Error()}
		}
		return p, nil
	}

	var partitions int
	prepare := &command{
		path: "quickstart prepare", usage: "--source FILE [--replication FILE] [--sink FILE] [--partitions N]",
		summary: "create the demo pipeline's topics",
		flags: func(fs *flag.FlagSet) {
			common(fs)
			fs.IntVar(&partitions, "partitions", 3, "partitions of each topic")
		},
		run: func(ctx context.Context, env *cliEnv) error {
			p, err := load()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			if err := quickstart.CreateTopics(ctx, bootstrap, p, partitions); err != nil {
				return &exitError{code: exitFailure, msg: err.Error()}
			}
			fmt.Fprintf(env.stdout, "topics ready: %s", p.OrdersTopic)
			if p.ReplicaTopic != "" {
				fmt.Fprintf(env.stdout, ", %s", p.ReplicaTopic)
			}
			fmt.Fprintln(env.stdout)
			return nil
		},
	}

	var (
		restURL, metricsURL, live string
		once                      bool
		timeout, interval         time.Duration
	)
	watch := &command{
		path: "quickstart watch", usage: "--source FILE [--replication FILE] [--sink FILE] [--url URL] [--once]",
		summary: "show the demo pipeline's progress; with --once exit 0 when every total matches, 1 otherwise",
		flags: func(fs *flag.FlagSet) {
			common(fs)
			fs.StringVar(&restURL, "url", client.DefaultURL, "the worker's REST URL")
			fs.StringVar(&metricsURL, "metrics-url", "", "Prometheus metrics URL of the worker: the sink's duplicates counter when the sink has no stats.set (that counter starts from 0 after a restart)")
			fs.BoolVar(&once, "once", false, "exit when the pipeline is complete and verified (or at --timeout)")
			fs.DurationVar(&timeout, "timeout", 10*time.Minute, "with --once: how long to wait for completion")
			fs.DurationVar(&interval, "interval", time.Second, "refresh period")
			fs.StringVar(&live, "live", "auto", "redraw in place: auto (on a terminal), always, never")
		},
		run: func(ctx context.Context, env *cliEnv) error {
			p, err := load()
			if err != nil {
				return err
			}
			var redraw bool
			switch live {
			case "always":
				redraw = true
			case "never":
			case "auto":
				redraw = isTerminal(env.stdout)
			default:
				return usageError("--live must be auto, always or never")
			}
			_, err = quickstart.Watch(ctx, p, quickstart.WatchOptions{
				Bootstrap: bootstrap, RESTURL: restURL, MetricsURL: metricsURL,
				Once: once, Timeout: timeout, Interval: interval, Out: env.stdout, Live: redraw,
				Width: terminalWidth(env.stdout),
			})
			if err != nil {
				return &exitError{code: exitFailure, msg: err.Error()}
			}
			return nil
		},
	}

	var workerConfig string
	cleanup := &command{
		path: "quickstart cleanup", usage: "--source FILE [--replication FILE] [--sink FILE] [--worker-config FILE]",
		summary: "delete the demo pipeline's topics and consumer groups (and the worker's internal topics) from a broker that outlives the quickstart",
		flags: func(fs *flag.FlagSet) {
			common(fs)
			fs.StringVar(&workerConfig, "worker-config", "", "worker.properties whose group and internal topics to delete too")
		},
		run: func(ctx context.Context, env *cliEnv) error {
			p, err := load()
			if err != nil {
				return err
			}
			topics := []string{p.OrdersTopic}
			if p.ReplicaTopic != "" {
				topics = append(topics, p.ReplicaTopic)
			}
			var groups []string
			if g := p.SinkGroup(); g != "" {
				groups = append(groups, g)
			}
			if workerConfig != "" {
				c, err := quickstart.LoadCluster(workerConfig, nil)
				if err != nil {
					return &exitError{code: exitFailure, msg: err.Error()}
				}
				topics = append(topics, c.ConfigTopic, c.OffsetsTopic, c.StatusTopic)
				groups = append(groups, c.GroupID)
			}
			// A consumer group member a stopped worker left behind goes
			// when its session times out (45 s by default).
			ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
			defer cancel()
			if err := quickstart.DeleteAll(ctx, bootstrap, topics, groups); err != nil {
				return &exitError{code: exitFailure, msg: err.Error()}
			}
			fmt.Fprintf(env.stdout, "deleted %d topics and %d consumer groups\n", len(topics), len(groups))
			return nil
		},
	}
	return []*command{prepare, watch, cleanup}
}

// terminalWidth is w's terminal width in columns, or 0.
func terminalWidth(w any) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
