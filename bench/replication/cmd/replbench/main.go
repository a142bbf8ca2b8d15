// Command replbench runs the Kafka replication benchmark (make
// bench-replication): KafkaReplicationSource with exactly-once support vs
// MirrorMaker 2's MirrorSourceConnector with exactly-once support vs a raw
// Go transactional consume→produce loop, side by side on one broker, with
// the same data, in interleaved order.
//
// For every message size it preloads a 6-partition source topic once, then
// for every repetition runs each system (rotating the order): untimed
// start-up, then the clock runs from the start of the copy until the last
// record of every partition is committed on the target. It samples CPU
// time and RSS of every process of the system (plugins included) and of the
// broker from /proc, then reads the whole target with read_committed and
// checks exactly-once: every source record once, in order, unchanged. A
// run that fails the check is reported as failed and has no throughput.
//
// With -cross-cluster (make bench-replication-cross) the source topic is on
// cluster A and every worker, with the target, on cluster B: connectd (and,
// when its plugin is built, KafkaCheckpointSource) vs MirrorMaker 2's
// MirrorSourceConnector and MirrorCheckpointConnector in one worker, replicas
// named by DefaultReplicationPolicy. After the copy, with the workers still
// running, it measures the checkpoint lag: the time from a consumer group's
// commit on A to the checkpoint of that offset on B (checkpoint.go).
//
//	replbench run -bootstrap ... -sizes 1024:1000000,100:5000000 -reps 3 ...
//	replbench preload|verify ...   (the pieces, for debugging)
package main

import (
	"context"
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

	"github.com/connectd/connectd/bench/internal/benchkit"
)

func logf(format string, args ...any) {
	log.Printf(format, args...)
}

func main() {
	log.SetFlags(log.Ltime)
	log.SetPrefix("replbench: ")
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: replbench run|preload|verify [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "run":
		err = cmdRun(ctx, os.Args[2:])
	case "preload":
		err = cmdPreload(ctx, os.Args[2:])
	case "verify":
		err = cmdVerify(ctx, os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		log.Fatal(err)
	}
}

func cmdPreload(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("preload", flag.ExitOnError)
	bs := fs.String("bootstrap", "", "bootstrap servers")
	topic := fs.String("topic", "", "topic (created)")
	parts := fs.Int("partitions", 6, "partitions")
	n := fs.Int64("records", 1000, "records")
	size := fs.Int("size", 1024, "value size in bytes")
	_ = fs.Parse(args)
	if err := benchkit.CreateTopic(ctx, *bs, *topic, *parts); err != nil {
		return err
	}
	return preload(ctx, *bs, *topic, *parts, *n, *size, nil)
}

func cmdVerify(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("verify", flag.ExitOnError)
	bs := fs.String("bootstrap", "", "bootstrap servers")
	topic := fs.String("topic", "", "target topic")
	parts := fs.Int("partitions", 6, "partitions")
	n := fs.Int64("records", 1000, "records expected")
	size := fs.Int("size", 1024, "value size in bytes")
	_ = fs.Parse(args)
	v, err := verify(ctx, *bs, *topic, *parts, *n, *size)
	if err != nil {
		return err
	}
	fmt.Println(v)
	if !v.ok(*n) {
		return fmt.Errorf("exactly-once check failed")
	}
	return nil
}

type dataset struct {
	size    int
	records int64
}

func parseSizes(s string) ([]dataset, error) {
	var out []dataset
	for _, item := range strings.Split(s, ",") {
		sz, n, ok := strings.Cut(strings.TrimSpace(item), ":")
		size, err1 := strconv.Atoi(sz)
		records, err2 := strconv.ParseInt(n, 10, 64)
		if !ok || err1 != nil || err2 != nil || size < keyLen || records < 1 {
			return nil, fmt.Errorf("bad -sizes item %q (want bytes:records, bytes >= %d)", item, keyLen)
		}
		out = append(out, dataset{size, records})
	}
	return out, nil
}

func cmdRun(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	bs := fs.String("bootstrap", "", "bootstrap servers of the broker (the source cluster with -cross-cluster)")
	brokerPid := fs.Int("broker-pid", 0, "pid of the broker (its CPU is reported separately)")
	cross := fs.Bool("cross-cluster", false, "copy from -bootstrap (cluster A) to -bootstrap-b (cluster B), the workers on B; MM2 also runs MirrorCheckpointConnector and the checkpoint lag is measured")
	bsB := fs.String("bootstrap-b", "", "bootstrap servers of the target cluster (-cross-cluster)")
	brokerBPid := fs.Int("broker-b-pid", 0, "pid of the target cluster's broker (-cross-cluster; its CPU is added to the broker's)")
	ckptPlugin := fs.String("checkpoint-plugin", "", "connectd-kafka-checkpoint plugin binary (-cross-cluster; empty: connectd runs no checkpoint connector)")
	ckptSamples := fs.Int("checkpoint-samples", 5, "group commits per run whose checkpoint lag is measured (-cross-cluster)")
	sourceAlias := fs.String("source-alias", "a", "source cluster alias (-cross-cluster): replicas are <alias>.<topic>")
	sizes := fs.String("sizes", "1024:1000000,100:5000000", "data sets: value bytes:records, comma-separated")
	parts := fs.Int("partitions", 6, "source partitions")
	reps := fs.Int("reps", 3, "repetitions (systems run interleaved, order rotating)")
	systems := fs.String("systems", "connectd,mm2,mm2-interval,raw", "systems to run: connectd (interval boundary), connectd-poll, mm2 (poll boundary, its default), mm2-interval, raw")
	tasks := fs.Int("tasks", 6, "tasks.max for connectd and MM2")
	linger := fs.Int("linger-ms", 20, "producer linger.ms for every system")
	batch := fs.Int("batch-bytes", 1<<20, "producer batch.size for every system")
	interval := fs.Duration("commit-interval", 100*time.Millisecond, "transaction length of the raw loop and of the interval boundary (connectd, mm2-interval)")
	mm2cp := fs.String("mm2-classpath", "", "file holding the MirrorMaker 2 classpath")
	rawBin := fs.String("rawcopy", "", "rawcopy binary")
	connectdBin := fs.String("connectd", "", "connectd binary (worker daemon, plugin installer)")
	pluginBin := fs.String("plugin", "", "connectd-kafka-replication plugin binary")
	connectdProps := fs.String("connectd-props", "", "extra connector properties for connectd, k=v,k=v (tuning experiments)")
	workerProps := fs.String("connectd-worker-props", "", "extra worker properties for connectd, k=v,k=v (tuning experiments)")
	var variants variantFlag
	fs.Var(&variants, "connectd-variant", "another connectd build run beside the default one, interleaved: name=connectd-path[,plugin=path][,env=K=V]... (repeatable; plugin defaults to -plugin; env is added to the worker's environment)")
	out := fs.String("out", "bench/out/replication", "output directory")
	timeout := fs.Duration("run-timeout", 30*time.Minute, "give up on a run after this long")
	_ = fs.Parse(args)

	if len(variants) > 0 && !strings.Contains(*systems, "connectd") {
		return fmt.Errorf("-connectd-variant needs a connectd system in -systems")
	}
	target := *bs
	if *cross {
		if *bsB == "" || *bsB == *bs {
			return fmt.Errorf("-cross-cluster needs -bootstrap-b, the bootstrap servers of a second cluster")
		}
		if strings.Contains(*systems, "raw") {
			return fmt.Errorf("-cross-cluster: the raw loop copies within one cluster only; leave raw out of -systems")
		}
		target = *bsB
	}
	data, err := parseSizes(*sizes)
	if err != nil {
		return err
	}
	stamp := time.Now().UTC().Format("20060102T150405")
	dir := filepath.Join(*out, stamp)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	sys, err := systemFlags{
		names: *systems, mm2cp: *mm2cp, rawBin: *rawBin, connectdBin: *connectdBin, pluginBin: *pluginBin,
		ckptPlugin: *ckptPlugin, connectdProps: *connectdProps, workerProps: *workerProps,
		interval: *interval, variants: variants,
	}.systems()
	if err != nil {
		return err
	}
	rep := newReport(dir, *parts, *linger, *batch, *interval)
	rep.cross = *cross
	for _, ds := range data {
		source := fmt.Sprintf("bench-src-%d-%s", ds.size, strings.ToLower(stamp))
		logf("data set: %d records of %d B in %d partitions (%s)", ds.records, ds.size, *parts, source)
		if err := benchkit.CreateTopic(ctx, *bs, source, *parts); err != nil {
			return err
		}
		if err := preload(ctx, *bs, source, *parts, ds.records, ds.size, nil); err != nil {
			return err
		}
		for r := range *reps {
			for i := range sys {
				s := sys[(i+r)%len(sys)]
				rs := &runSpec{
					bootstrap: *bs, targetBootstrap: target, cross: *cross,
					source: source, partitions: *parts, records: ds.records, size: ds.size,
					runID:    fmt.Sprintf("%s-%d-%d-%s", strings.ToLower(stamp), ds.size, r, strings.ReplaceAll(s.name(), "@", "-")),
					lingerMs: *linger, batchBytes: *batch, tasks: *tasks,
				}
				if *cross {
					rs.sourceAlias = *sourceAlias
					rs.targetAlias = "b-" + rs.runID
					rs.checkpointsTopic = rs.sourceAlias + ".checkpoints.internal"
					rs.ckptSamples = *ckptSamples
					rs.ckptTopic = "bench-ckpt-" + rs.runID
				}
				rs.target = s.target(rs)
				rs.dir = filepath.Join(dir, rs.runID)
				if err := os.MkdirAll(rs.dir, 0o755); err != nil {
					return err
				}
				res := runOne(ctx, s, rs, []int{*brokerPid, *brokerBPid}, *timeout)
				res.rep = r + 1
				rep.add(res)
				if ctx.Err() != nil {
					return ctx.Err()
				}
			}
		}
		dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_ = benchkit.DeleteTopics(dctx, *bs, source)
		cancel()
	}
	return rep.write()
}

// systemFlags are the run flags that choose and shape the systems under test.
type systemFlags struct {
	names, mm2cp, rawBin, connectdBin, pluginBin, ckptPlugin, connectdProps, workerProps string
	interval                                                                             time.Duration
	variants                                                                             variantFlag
}

// systems builds the systems named by -systems, in that order.
func (f systemFlags) systems() ([]system, error) {
	var sys []system
	for _, name := range strings.Split(f.names, ",") {
		switch name = strings.TrimSpace(name); name {
		case "raw":
			sys = append(sys, rawSystem{bin: f.rawBin, interval: f.interval})
		case "mm2", "mm2-interval":
			cp, err := os.ReadFile(f.mm2cp)
			if err != nil {
				return nil, fmt.Errorf("MM2 classpath: %w", err)
			}
			m := &mm2System{classpath: strings.TrimSpace(string(cp)), boundary: "poll"}
			if name == "mm2-interval" {
				m.boundary, m.interval = "interval", f.interval
			}
			sys = append(sys, m)
		case "connectd", "connectd-poll":
			sys = append(sys, f.connectdSystems(name)...)
		default:
			return nil, fmt.Errorf("unknown system %q", name)
		}
	}
	return sys, nil
}

// connectdSystems is the default connectd build and each -connectd-variant.
func (f systemFlags) connectdSystems(name string) []system {
	extra := map[string]string{}
	for _, kv := range strings.Split(f.connectdProps, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			extra[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	boundary := "interval"
	if name == "connectd-poll" {
		boundary = "poll"
	}
	var worker strings.Builder
	for _, kv := range strings.Split(f.workerProps, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			fmt.Fprintf(&worker, "%s=%s\n", strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	sys := []system{&connectdSystem{connectd: f.connectdBin, pluginBin: f.pluginBin, ckptPlugin: f.ckptPlugin, extra: extra,
		workerProps: worker.String(), boundary: boundary, interval: f.interval}}
	for _, v := range f.variants {
		plugin := v.plugin
		if plugin == "" {
			plugin = f.pluginBin
		}
		sys = append(sys, &connectdSystem{connectd: v.connectd, pluginBin: plugin, ckptPlugin: f.ckptPlugin, variant: v.name, env: v.env,
			extra: extra, workerProps: worker.String(), boundary: boundary, interval: f.interval})
	}
	return sys
}

// waitCopied waits until the target holds the whole data set (or, for a
// system that finishes by exiting, its process exits) and returns when.
func waitCopied(ctx context.Context, s system, rs *runSpec, procs []*benchkit.Proc, tail *tailer, timeout time.Duration) (time.Time, error) {
	watch := newFailureWatch(s)
	for {
		for _, p := range procs {
			select {
			case <-p.Done():
				at, err := p.Exit()
				if !s.finishesByExit() || err != nil {
					return time.Time{}, fmt.Errorf("%s exited: %v (log in %s)", p.Name, err, rs.dir)
				}
				return at, nil
			default:
			}
		}
		if err := watch.check(ctx); err != nil {
			return time.Time{}, err
		}
		done, err := tail.complete(ctx)
		if err != nil {
			return time.Time{}, err
		}
		if done {
			return time.Now(), nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("not complete after %v", timeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// result is one run's measurements.
type result struct {
	system    string
	size      int
	records   int64
	rep       int
	seconds   float64
	cpuSUT    float64 // CPU seconds of the system's processes during the copy
	cpuBroker float64
	peakRSS   int64 // bytes, summed over the system's processes, whole run
	procs     string
	verdict   verdict
	err       string
	ckpt      *ckptResult // cross-cluster mode only
}

func (r result) ok() bool { return r.err == "" && r.verdict.ok(r.records) }

func runOne(ctx context.Context, s system, rs *runSpec, brokerPids []int, timeout time.Duration) (res result) {
	res = result{system: s.name(), size: rs.size, records: rs.records}
	fail := func(err error) result {
		res.err = err.Error()
		logf("%s: FAILED: %v", rs.runID, err)
		return res
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		s.cleanup(cctx, rs)
	}()

	sysSampler := benchkit.NewSampler(100 * time.Millisecond)
	defer sysSampler.Close()
	var broker *benchkit.Sampler
	if pids := slices.DeleteFunc(slices.Clone(brokerPids), func(p int) bool { return p <= 0 }); len(pids) > 0 {
		broker = benchkit.NewSampler(time.Second, pids...)
		defer broker.Close()
	}
	var procs []*benchkit.Proc
	defer func() {
		for _, p := range procs {
			p.Stop(20 * time.Second)
		}
	}()
	if rs.cross {
		// Before the workers start: MM2 lists topics and groups once at
		// start-up here (refresh.topics.enabled=false).
		if err := benchkit.CreateTopic(ctx, rs.bootstrap, rs.ckptTopic, 1); err != nil {
			return fail(err)
		}
		if err := commitGroup(ctx, rs.bootstrap, checkpointGroup(rs), rs.ckptTopic, []int64{0}); err != nil {
			return fail(err)
		}
	}
	pre, err := s.prepare(ctx, rs)
	if err != nil {
		return fail(fmt.Errorf("prepare: %w", err))
	}
	procs = append(procs, pre...)
	for _, p := range pre {
		sysSampler.AddRoot(p.Pid())
	}
	target := rs.target
	tail, err := newTailer(rs.targetBootstrap, target, rs.partitions, rs.records)
	if err != nil {
		return fail(err)
	}
	defer tail.close()

	cpu0 := sysSampler.Snapshot()
	var bcpu0 map[int]time.Duration
	if broker != nil {
		bcpu0 = broker.Snapshot()
	}
	started, t0, err := s.start(ctx, rs)
	if err != nil {
		return fail(fmt.Errorf("start: %w", err))
	}
	procs = append(procs, started...)
	for _, p := range started {
		sysSampler.AddRoot(p.Pid())
	}
	t1, err := waitCopied(ctx, s, rs, procs, tail, timeout)
	if err != nil {
		return fail(err)
	}
	cpu1 := sysSampler.Snapshot()
	for _, p := range procs {
		if c, ok := p.ExitCPU(); ok {
			cpu1[p.Pid()] = max(cpu1[p.Pid()], c)
		}
	}
	res.seconds = t1.Sub(t0).Seconds()
	res.cpuSUT = benchkit.CPUBetween(cpu0, cpu1).Seconds()
	if broker != nil {
		res.cpuBroker = benchkit.CPUBetween(bcpu0, broker.Snapshot()).Seconds()
	}
	if rs.cross {
		// While the processes still run: the copy is complete, so every
		// partition has offset syncs up to its end.
		res.ckpt = &ckptResult{}
		if cp, ok := s.(checkpointer); ok {
			if on, why := cp.checkpoints(); !on {
				res.ckpt.note = why
			} else {
				*res.ckpt = measureCheckpoints(ctx, rs, rs.ckptSamples, time.Minute)
			}
		}
	}
	for _, p := range procs {
		p.Stop(20 * time.Second)
	}
	res.peakRSS = sysSampler.PeakRSS()
	var parts []string
	for pid, pk := range sysSampler.Peaks() {
		parts = append(parts, fmt.Sprintf("%s[%d]=%dMB/%.1fs", pk.Name, pid, pk.RSS>>20, (cpu1[pid]-cpu0[pid]).Seconds()))
	}
	res.procs = strings.Join(parts, " ")

	v, err := verify(ctx, rs.targetBootstrap, target, rs.partitions, rs.records, rs.size)
	if err != nil {
		return fail(fmt.Errorf("verify: %w", err))
	}
	res.verdict = v
	if !v.ok(rs.records) {
		return fail(fmt.Errorf("exactly-once check failed: %s", v))
	}
	logf("%s: %.1fs %.0f rec/s cpu %.1fs (%.2f s/M) rss %dMB broker cpu %.1fs; check %s",
		rs.runID, res.seconds, float64(rs.records)/res.seconds, res.cpuSUT, res.cpuSUT/float64(rs.records)*1e6,
		res.peakRSS>>20, res.cpuBroker, v)
	return res
}
