// Command scalebench runs the scale benchmark (make bench-scale): N idle
// source connectors (tasks.max=1) on one worker, connectd (examples/linesource
// on an empty file) and Kafka Connect 4.1.1 (FileStreamSourceConnector on an
// empty file) one after the other on the same broker, each with internal
// topics of its own.
//
// For every N of -n (ascending) it creates the missing connectors one POST
// after the other and times from the first POST until
// GET /connectors?expand=status shows every connector and task RUNNING;
// after -settle it measures the worker's whole process tree (RSS and PSS
// from /proc/<pid>/smaps_rollup, processes, threads, CPU over -window as %
// of one core) and the latency of -requests sequential
// GET /connectors?expand=status. At the largest N it SIGKILLs the worker
// alone, starts it again (on another port, so that its worker id differs)
// and times until every connector runs on the new worker. Then it deletes
// every connector and measures again, to compare with N=0.
//
// It writes bench/out/scale/<time>/results.json (every row of every pass)
// and summary.md (medians over -reps, one table per system, and the ratios
// connectd / Kafka Connect); progress goes to stderr.
//
//	scalebench -bootstrap ... -connectd bin/connectd -plugin bin/connectd-lines -kc-classpath FILE -n 0,100,250
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	log.SetFlags(log.Ltime)
	log.SetPrefix("scalebench: ")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := cmdRun(ctx, os.Args[1:]); err != nil {
		log.Fatal(err)
	}
}

func cmdRun(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("scalebench", flag.ExitOnError)
	bs := fs.String("bootstrap", "", "bootstrap servers of the broker both systems use")
	connectd := fs.String("connectd", "bin/connectd", "connectd binary")
	plugin := fs.String("plugin", "", "connectd-lines binary (examples/linesource)")
	kcCP := fs.String("kc-classpath", "", "file holding Kafka Connect 4.1.1's classpath (bench/lib.sh kc_classpath)")
	nList := fs.String("n", "0,100,250,500,1000", "connector counts, ascending")
	systems := fs.String("systems", "connectd,kc", "systems to run, in this order: connectd, kc, baseline (connectd built from -baseline)")
	baseline := fs.String("baseline", "", "a second connectd binary (another commit's) for the system \"baseline\": same passes, side by side")
	baselinePlugin := fs.String("baseline-plugin", "", "connectd-lines binary of -baseline's commit (default: -plugin)")
	reps := fs.Int("reps", 1, "repetitions of every system's pass")
	window := fs.Duration("window", 30*time.Second, "CPU sampling window per N")
	settle := fs.Duration("settle", 10*time.Second, "wait after all RUNNING before measuring")
	requests := fs.Int("requests", 50, "GET /connectors?expand=status requests timed per N")
	timeout := fs.Duration("wait-timeout", 20*time.Minute, "longest wait for all RUNNING")
	workers := fs.Int("workers", 1, "workers: more than 1 runs the cluster mode instead (the largest N across them; kill, join, leave)")
	restart := fs.Bool("restart", true, "SIGKILL and restart the worker at the largest N")
	release := fs.Duration("release-wait", 150*time.Second, "after the \"deleted\" row, wait this long and measure again (\"deleted, later\"; 0: don't)")
	out := fs.String("out", "bench/out/scale", "output directory")
	_ = fs.Parse(args)

	ns, err := parseNs(*nList)
	if err != nil {
		return err
	}
	if *bs == "" {
		return errors.New("-bootstrap is required")
	}
	var syss []system
	for _, s := range strings.Split(*systems, ",") {
		switch strings.TrimSpace(s) {
		case "connectd":
			if *plugin == "" {
				return errors.New("-plugin is required for connectd")
			}
			syss = append(syss, &connectdSystem{label: "connectd", connectd: *connectd, plugin: *plugin})
		case "baseline":
			if *plugin == "" || *baseline == "" {
				return errors.New("-plugin and -baseline are required for baseline")
			}
			bp := *baselinePlugin
			if bp == "" {
				bp = *plugin
			}
			syss = append(syss, &connectdSystem{label: "connectd-baseline", connectd: *baseline, plugin: bp})
		case "kc":
			b, err := os.ReadFile(*kcCP)
			if err != nil {
				return fmt.Errorf("-kc-classpath: %w", err)
			}
			syss = append(syss, &kcSystem{classpath: strings.TrimSpace(string(b))})
		default:
			return fmt.Errorf("unknown system %q (want connectd, kc or baseline)", s)
		}
	}
	set := settings{ns: ns, settle: *settle, window: *window, requests: *requests, timeout: *timeout, restart: *restart, release: *release}
	stamp := time.Now().UTC().Format("20060102T150405Z")
	dir, err := filepath.Abs(filepath.Join(*out, stamp))
	if err != nil {
		return err
	}
	rep := &report{Started: stamp, Ns: ns, Window: window.String(), Settle: settle.String(), Requests: *requests}
	for i := range *reps {
		for _, sys := range syss {
			id := fmt.Sprintf("scale-%s-%d", strings.ToLower(stamp), i)
			r := &run{bootstrap: *bs, id: id, dir: filepath.Join(dir, fmt.Sprintf("%s-%d", sys.name(), i)),
				topic: id + "-" + sys.name()}
			r.file = filepath.Join(r.dir, "empty.txt")
			log.Printf("pass %d/%d: %s (logs in %s)", i+1, *reps, sys.name(), r.dir)
			var p pass
			var err error
			if *workers > 1 {
				p.Rows, p.Events, err = runCluster(ctx, sys, r, set, *workers)
			} else {
				p.Rows, err = runPass(ctx, sys, r, set)
			}
			p.System, p.Rep = sys.name(), i
			if err != nil {
				p.Err = err.Error()
				log.Printf("%s: %v", sys.name(), err)
			}
			rep.Passes = append(rep.Passes, p)
			if ctx.Err() != nil {
				return errors.Join(ctx.Err(), rep.write(dir))
			}
		}
	}
	return rep.write(dir)
}

func parseNs(s string) ([]int, error) {
	var ns []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("bad -n item %q", f)
		}
		ns = append(ns, n)
	}
	if !slices.IsSorted(ns) {
		return nil, fmt.Errorf("-n must be ascending: %s", s)
	}
	return ns, nil
}
