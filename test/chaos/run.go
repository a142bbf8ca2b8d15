package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/connectors/aerospike/aerotest"
	"github.com/connectd/connectd/connectors/datagen/datagencheck"
	"github.com/connectd/connectd/framework/rest/client"
	"github.com/connectd/connectd/framework/verify"
)

// Options configure a chaos run.
type Options struct {
	// Duration is how long faults are injected.
	Duration time.Duration
	// Seed drives every random choice: which faults, in which order, with
	// which parameters and victims. Timing on a real machine varies, so a
	// seed reproduces the schedule, not the exact interleaving.
	Seed int64
	// Repo is the repository root (binaries are built from it, the broker
	// script lives in it).
	Repo string
	// Dir receives the binaries, logs, samples and the report.
	Dir string
	// BrokerRunDir is the broker script's state directory
	// (CONNECTD_RUN_DIR): the suite's own broker, never a shared one,
	// because it restarts it.
	BrokerRunDir string
	// SessionTimeout is the workers' session.timeout.ms (default 10 s).
	SessionTimeout time.Duration
	// ShutdownTimeout is task.shutdown.graceful.timeout.ms (default 5 s).
	ShutdownTimeout time.Duration
	// SampleEvery is the resource sampling period (default 5 s).
	SampleEvery time.Duration
	// StrictRecovery makes a missed recovery target (worker SIGKILL:
	// recovered within session timeout + 5 s) a violation; otherwise it is
	// reported only. Timing targets belong to the long run on a quiet
	// machine, not to CI.
	StrictRecovery bool
	// JudgeTrends makes a growing resource series a violation (soak mode).
	JudgeTrends bool
	// Exclude lists fault kinds never to inject. Excluding the worker
	// faults (worker-sigkill, worker-sigkill-restart, worker-sigstop,
	// worker-add) keeps the same worker processes alive for the whole
	// run, which is what judging their memory over time needs.
	Exclude []string
	// Out receives progress lines and the report.
	Out io.Writer
}

// run is one chaos run's state.
type run struct {
	opts      Options
	log       *slog.Logger
	out       io.Writer
	start     time.Time
	broker    *broker
	aero      *aeroServer
	cl        *cluster
	pl        *pipeline
	mon       *monitor
	smp       *sampler
	producer  *kafka.Producer
	pluginDir string
	classOf   map[string]string // plugin binary path → connector class
	events    events
	extra     int

	badMu   sync.Mutex
	badSeq  int
	badSent map[string]bool // "id:kind" of every acknowledged bad record

	restCounts struct {
		total, refused int
		byCode         map[int]int
	}

	vmu        sync.Mutex
	violations []string
}

func (r *run) violate(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.vmu.Lock()
	r.violations = append(r.violations, msg)
	r.vmu.Unlock()
	r.log.Error("VIOLATION: " + msg)
	r.progress("VIOLATION: %s", firstLine(msg))
}

func (r *run) progress(format string, args ...any) {
	fmt.Fprintf(r.out, "[chaos +%s] %s\n", fmtDur(time.Since(r.start)), fmt.Sprintf(format, args...))
}

func fmtDur(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%02d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

type binaries struct {
	connectd, connectdDev, plugins string
}

// build compiles connectd, connectd-dev (the Aerospike test server) and the
// three plugins of the pipeline.
func build(ctx context.Context, repo, dir string) (binaries, error) {
	b := binaries{connectd: filepath.Join(dir, "connectd"), connectdDev: filepath.Join(dir, "connectd-dev"), plugins: filepath.Join(dir, "plugins")}
	if err := os.MkdirAll(b.plugins, 0o755); err != nil {
		return b, err
	}
	for _, x := range []struct{ out, pkg string }{
		{b.connectd, "./cmd/connectd"},
		{b.connectdDev, "./cmd/connectd-dev"},
		{filepath.Join(b.plugins, "connectd-datagen"), "./connectors/datagen/cmd/connectd-datagen"},
		{filepath.Join(b.plugins, "connectd-kafka-replication"), "./connectors/kafka/cmd/connectd-kafka-replication"},
		{filepath.Join(b.plugins, "connectd-aerospike-sink"), "./connectors/aerospike/cmd/connectd-aerospike-sink"},
	} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", x.out, x.pkg)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			return b, fmt.Errorf("go build %s: %v\n%s", x.pkg, err, out)
		}
	}
	return b, nil
}

// Run performs one chaos run and returns its report. The error is for a
// harness that could not run (a build or a start-up failure); what the
// pipeline got wrong is in Report.Violations.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.SessionTimeout == 0 {
		o.SessionTimeout = 10 * time.Second
	}
	if o.ShutdownTimeout == 0 {
		o.ShutdownTimeout = 5 * time.Second
	}
	if o.SampleEvery == 0 {
		o.SampleEvery = 5 * time.Second
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	all := slices.Concat(disruptiveKinds, backgroundKinds)
	for _, k := range o.Exclude {
		if len(without(all, []string{k})) == len(all) {
			return nil, fmt.Errorf("chaos: unknown fault kind %q to exclude", k)
		}
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(o.Dir, "chaos.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	r := &run{opts: o, out: o.Out, start: time.Now(), badSent: map[string]bool{},
		log: slog.New(slog.NewTextHandler(logf, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	r.restCounts.byCode = map[int]int{}
	r.events.onAdd = func(e *event) {
		suffix := ""
		if e.Err != "" {
			suffix = " (error: " + firstLine(e.Err) + ")"
		}
		r.progress("#%d %s: %s%s", e.N, e.Kind, e.Detail, suffix)
	}
	// The monitor and the sampler stop before the teardown, so that
	// shutting the workers down is not counted as an outage.
	watchCtx, stopWatching := context.WithCancel(ctx)
	var rep *Report
	err = r.setup(ctx, watchCtx)
	if err == nil {
		r.faults(ctx)
		r.heal(ctx)
		rep = r.finish(ctx)
	}
	stopWatching()
	r.teardown()
	if rep != nil {
		r.vmu.Lock()
		rep.Violations = append([]string(nil), r.violations...)
		r.vmu.Unlock()
		rep.Elapsed = time.Since(r.start)
	}
	return rep, err
}

func (r *run) setup(ctx, watchCtx context.Context) error {
	o := r.opts
	r.progress("building connectd and the plugins; starting the suite's own Kafka broker (state in %s)", o.BrokerRunDir)
	brokerErr := make(chan error, 1)
	go func() {
		var err error
		r.broker, err = startBroker(ctx, o.Repo, o.BrokerRunDir)
		brokerErr <- err
	}()
	bins, err := build(ctx, o.Repo, filepath.Join(o.Dir, "bin"))
	if berr := <-brokerErr; berr != nil {
		return berr
	}
	if err != nil {
		return err
	}
	r.progress("built; broker up at %s", r.broker.Bootstrap)
	r.progress("starting the Aerospike test server process (or connecting to the cluster named by %s)", aerotest.EnvHosts)
	if r.aero, err = startAerospike(ctx, bins.connectdDev, filepath.Join(o.Dir, "aerospike.log")); err != nil {
		return err
	}
	if r.aero.external() {
		// Only the test server can fail or slow commands on demand.
		for _, k := range []string{KindAeroErrors, KindAeroLatency} {
			if !slices.Contains(r.opts.Exclude, k) {
				r.opts.Exclude = append(r.opts.Exclude, k)
			}
		}
		r.progress("writing to the external cluster %s, set %s.%s; Aerospike faults excluded (no fault injection there)", r.aero.hosts, r.aero.namespace, r.aero.set)
	}

	// Plugins: install the three, then the bad-input ones.
	r.pluginDir = filepath.Join(o.Dir, "plugin-path")
	out, err := exec.CommandContext(ctx, bins.connectd, "plugin", "install", "--plugin-path", r.pluginDir, bins.plugins).CombinedOutput()
	if err != nil {
		return fmt.Errorf("connectd plugin install: %v\n%s", err, out)
	}
	if err := installTampered(r.pluginDir, "DatagenSource"); err != nil {
		return fmt.Errorf("tampered plugin: %w", err)
	}
	if err := installGarbage(ctx, bins.connectd, r.pluginDir, o.Dir); err != nil {
		r.violate("plugin install: %v", err)
	}
	if r.classOf, err = pluginClasses(r.pluginDir); err != nil {
		return err
	}

	// Topics and the pipeline.
	prefix := fmt.Sprintf("chaos-%d-%d", o.Seed, time.Now().Unix()%100000)
	r.pl = newPipeline(r.broker.Bootstrap, prefix, r.aero.aeroTarget, o.Seed)
	admin, err := kafka.NewAdminClient(&kafka.ConfigMap{"bootstrap.servers": r.broker.Bootstrap})
	if err != nil {
		return err
	}
	actx, cancel := context.WithTimeout(ctx, time.Minute)
	res, err := admin.CreateTopics(actx, []kafka.TopicSpecification{
		{Topic: r.pl.source, NumPartitions: r.pl.partitions, ReplicationFactor: 1},
		{Topic: r.pl.source2, NumPartitions: r.pl.datagen2Tasks, ReplicationFactor: 1},
	})
	cancel()
	admin.Close()
	if err != nil {
		return fmt.Errorf("create %s, %s: %w", r.pl.source, r.pl.source2, err)
	}
	for _, t := range res {
		if t.Error.Code() != kafka.ErrNoError {
			return fmt.Errorf("create %s: %w", t.Topic, t.Error)
		}
	}
	if r.producer, err = kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": r.broker.Bootstrap, "enable.idempotence": true, "linger.ms": 5}); err != nil {
		return err
	}
	go func() {
		for range r.producer.Events() {
		}
	}()

	// Workers.
	group := prefix
	r.cl = &cluster{connectd: bins.connectd, dir: o.Dir, hc: &http.Client{Timeout: 30 * time.Second}, baseProps: map[string]string{
		"bootstrap.servers":                 r.broker.Bootstrap,
		"group.id":                          group,
		"config.storage.topic":              group + "-configs",
		"offset.storage.topic":              group + "-offsets",
		"status.storage.topic":              group + "-status",
		"config.storage.replication.factor": "1",
		"offset.storage.replication.factor": "1",
		"status.storage.replication.factor": "1",
		"offset.storage.partitions":         "5",
		"key.converter":                     "org.apache.kafka.connect.converters.ByteArrayConverter",
		"value.converter":                   "org.apache.kafka.connect.converters.ByteArrayConverter",
		"plugin.path":                       r.pluginDir,
		"session.timeout.ms":                strconv.FormatInt(o.SessionTimeout.Milliseconds(), 10),
		"heartbeat.interval.ms":             strconv.FormatInt((o.SessionTimeout / 10).Milliseconds(), 10),
		"task.shutdown.graceful.timeout.ms": strconv.FormatInt(o.ShutdownTimeout.Milliseconds(), 10),
		"offset.flush.interval.ms":          "1000",
		"exactly.once.source.support":       "enabled",
		// Sink consumers: the same failure detection as the workers'
		// (librdkafka's default session timeout is 45 s).
		"consumer.session.timeout.ms":    strconv.FormatInt(o.SessionTimeout.Milliseconds(), 10),
		"consumer.heartbeat.interval.ms": strconv.FormatInt((o.SessionTimeout / 10).Milliseconds(), 10),
		// Many restarts in a row must not back a task off for a minute.
		"task.restart.backoff.initial.ms": "500",
		"task.restart.backoff.max.ms":     "10000",
		"log.level":                       "INFO",
	}}
	r.progress("starting workers w1, w2, w3")
	werrs := make(chan error, 3)
	for i := 1; i <= 3; i++ {
		go func() {
			_, err := r.cl.add(ctx, "w"+strconv.Itoa(i))
			werrs <- err
		}()
	}
	for range 3 {
		if err := <-werrs; err != nil {
			return err
		}
	}

	// Deploy through the REST API.
	r.mon = newMonitor(r.cl, r.pl, r.pluginDir, r.classOf, r.log)
	cl := r.cl.any(0)
	for _, name := range connectorNames {
		if _, err := cl.Create(ctx, name, r.pl.config(name), ""); err != nil {
			return fmt.Errorf("create %s: %w", name, err)
		}
	}
	r.progress("deployed %s", r.pl)
	go r.mon.run(watchCtx)
	if err := r.mon.waitHealthy(ctx, 3*time.Minute); err != nil {
		return fmt.Errorf("pipeline did not start: %w\n%s", err, r.logTails())
	}
	if r.smp, err = newSampler(r, o.SampleEvery, filepath.Join(o.Dir, "processes.csv")); err != nil {
		return err
	}
	go r.smp.run(watchCtx)
	// Every counter exists before faults start (the float corpus record
	// needs integer counters to refuse it).
	deadline := time.Now().Add(3 * time.Minute)
	for {
		got, _, err := r.aero.counters(r.aero.set)
		if err == nil && len(got) >= r.pl.cardinality {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the sink wrote %d of %d counters within 3 min (%v)\n%s", len(got), r.pl.cardinality, err, r.logTails())
		}
		sleepCtx(ctx, time.Second)
	}
	r.progress("pipeline running; every counter exists")
	return nil
}

// pluginClasses maps each installed plugin binary to its connector class
// (pipeline.connectorsOf names the connectors that run in its process).
func pluginClasses(dir string) (map[string]string, error) {
	ms, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, m := range ms {
		b, err := os.ReadFile(m)
		if err != nil {
			return nil, err
		}
		var man struct{ Name, Binary string }
		if err := json.Unmarshal(b, &man); err != nil {
			return nil, fmt.Errorf("%s: %w", m, err)
		}
		out[filepath.Join(dir, man.Binary)] = man.Name
	}
	return out, nil
}

func (r *run) pickBaseWorker(rng *rand.Rand) *worker {
	var base []*worker
	for _, w := range r.cl.list() {
		if strings.HasPrefix(w.Name, "w") {
			base = append(base, w)
		}
	}
	// By name: the workers started concurrently, and the seed must pick
	// the same victims whatever order they registered in.
	sort.Slice(base, func(i, j int) bool { return base[i].Name < base[j].Name })
	return base[rng.IntN(len(base))]
}

func (r *run) extraWorker() *worker {
	for _, w := range r.cl.list() {
		if strings.HasPrefix(w.Name, "x") && w.pid() != 0 && !w.gone {
			return w
		}
	}
	return nil
}

func (r *run) workerByPID(pid int) *worker {
	for _, w := range r.cl.list() {
		if w.pid() == pid {
			return w
		}
	}
	return nil
}

// checkPluginsDie checks that a SIGKILLed worker's plugin processes exit
// within 5 s.
func (r *run) checkPluginsDie(ctx context.Context, workerPID int, name string) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left []int
		for _, p := range processesUnder(r.pluginDir) {
			if p.PPID == workerPID {
				left = append(left, p.PID)
			}
		}
		if len(left) == 0 || ctx.Err() != nil {
			return
		}
		if time.Now().After(deadline) {
			r.violate("plugin processes %v of SIGKILLed worker %s still run after 5 s", left, name)
			return
		}
		sleepCtx(ctx, 100*time.Millisecond)
	}
}

func (r *run) waitPaused(ctx context.Context, conn string, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if cl := r.cl.any(0); cl != nil {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			st, err := cl.Status(cctx, conn)
			cancel()
			if err == nil && st.Connector.State == "PAUSED" && len(st.Tasks) > 0 {
				all := true
				for _, t := range st.Tasks {
					all = all && t.State == "PAUSED"
				}
				if all {
					return
				}
			}
		}
		sleepCtx(ctx, 200*time.Millisecond)
	}
	r.log.Warn("connector not reported PAUSED in time", "connector", conn)
}

// faults runs the two fault loops for the configured duration.
func (r *run) faults(ctx context.Context) {
	deadline := time.Now().Add(r.opts.Duration)
	r.progress("injecting faults for %v (seed %d)", r.opts.Duration, r.opts.Seed)
	in := injector{r}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(uint64(r.opts.Seed), 1))
		disruptive := without(disruptiveKinds, r.opts.Exclude)
		if len(disruptive) == 0 {
			return
		}
		for {
			kind := pick(rng, disruptive)
			if kind == KindWorkerAdd && r.extraWorker() != nil {
				kind = KindWorkerRemove
			}
			sleepCtx(ctx, between(rng, 2*time.Second, 8*time.Second))
			if time.Now().After(deadline) || ctx.Err() != nil {
				return
			}
			if err := r.mon.waitHealthy(ctx, 3*time.Minute); err != nil {
				last := r.events.all()
				what := "start"
				if len(last) > 0 {
					what = fmt.Sprintf("#%d %s", last[len(last)-1].N, last[len(last)-1].Kind)
				}
				r.violate("no full recovery within 3 min (after %s): %v", what, err)
				continue
			}
			in.disruptive(ctx, rng, kind)
		}
	}()
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(uint64(r.opts.Seed), 2))
		background := without(backgroundKinds, r.opts.Exclude)
		if len(background) == 0 {
			return
		}
		for {
			kind := pick(rng, background)
			sleepCtx(ctx, between(rng, 3*time.Second, 12*time.Second))
			if time.Now().After(deadline) || ctx.Err() != nil {
				return
			}
			in.background(ctx, rng, kind)
		}
	}()
	wg.Wait()
	// The bad-input corpus is part of every run: a short schedule may not
	// have drawn the invalid REST requests (they also carry the plugin
	// with a wrong checksum), so they are replayed once before healing.
	for _, e := range r.events.all() {
		if e.Kind == KindBadREST {
			return
		}
	}
	if ctx.Err() == nil {
		in.disruptive(ctx, rand.New(rand.NewPCG(uint64(r.opts.Seed), 3)), KindBadREST)
	}
}

// heal ends every fault: no Aerospike fault rules, every base worker up,
// the added worker gone, and everything running.
func (r *run) heal(ctx context.Context) {
	r.events.closeWindows(time.Now())
	r.progress("faults over; healing")
	if err := r.aero.clearFaults(ctx); err != nil {
		r.violate("clearing Aerospike faults: %v", err)
	}
	for _, w := range r.cl.list() {
		switch {
		case strings.HasPrefix(w.Name, "x"):
			if w.pid() != 0 {
				w.remove(r.opts.ShutdownTimeout + 15*time.Second)
			}
		case w.pid() == 0:
			if err := r.cl.start(ctx, w); err != nil {
				r.violate("restarting %s: %v", w.Name, err)
			}
		default:
			_ = w.sigcont()
		}
	}
	if err := r.mon.waitHealthy(ctx, 5*time.Minute); err != nil {
		r.violate("after the faults: %v\n%s", err, r.logTails())
	}
}

func (r *run) logTails() string {
	var b strings.Builder
	for _, w := range r.cl.list() {
		fmt.Fprintf(&b, "--- %s (%s) ---\n%s\n", w.Name, w.logPath, fileTail(w.logPath, 15))
	}
	return b.String()
}

func (r *run) readOpts() verify.ReadOptions {
	return verify.ReadOptions{Bootstrap: r.broker.Bootstrap, Timeout: 5 * time.Minute}
}

// poll retries check every interval until it reports done or timeout.
func poll(ctx context.Context, timeout, interval time.Duration, check func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		done, err := check()
		if done {
			return nil
		}
		last = err
		if time.Now().After(deadline) || ctx.Err() != nil {
			if last == nil {
				last = fmt.Errorf("timed out after %v", timeout)
			}
			return last
		}
		sleepCtx(ctx, interval)
	}
}

// finish brings datagen to a known end, waits for the pipeline to drain
// and verifies every promise.
func (r *run) finish(ctx context.Context) *Report {
	rep := &Report{Seed: r.opts.Seed, Duration: r.opts.Duration, Pipeline: r.pl.String(), Dir: r.opts.Dir, Excluded: r.opts.Exclude,
		SessionTimeout: r.opts.SessionTimeout}
	cl := r.cl.any(0)

	// 1. Pause each datagen connector, see how far each task got, let
	// every task run to a common end (iterations), resume. 2. Each topic
	// reaches the end of every task's sequence.
	r.progress("ending the datagen sequences: pause, set iterations, resume")
	dgs := r.pl.datagens()
	// Both pause at once, so that their waits for PAUSED overlap.
	for _, dg := range dgs {
		if err := cl.Pause(ctx, dg.conn); err != nil {
			r.violate("pause %s: %v", dg.conn, err)
		}
	}
	for i := range dgs {
		if !r.endSequence(ctx, cl, &dgs[i]) {
			return r.complete(ctx, rep)
		}
	}
	rep.Iterations = dgs[0].spec.Iterations
	rep.Datagen = r.awaitSequence(ctx, dgs[0])
	rep.Iterations2 = dgs[1].spec.Iterations
	rep.Datagen2 = r.awaitSequence(ctx, dgs[1])
	dgRep := rep.Datagen

	// 3. The replica catches up with the source.
	var cmp *verify.CompareReport
	if err := poll(ctx, 5*time.Minute, 3*time.Second, func() (bool, error) {
		var err error
		cmp, err = verify.CompareTopics(ctx, r.pl.source, r.pl.replica, verify.CompareOptions{Source: r.readOpts()})
		if err != nil {
			return false, err
		}
		return cmp.Pending == 0 || !cmp.OK(true), fmt.Errorf("%d source records not in the replica yet", cmp.Pending)
	}); err != nil {
		r.violate("the replica did not catch up: %v", err)
	}
	rep.Compare = cmp

	// 4. The sink applies everything: each counter is its exact sum.
	if dgRep != nil {
		rep.ExpectedSums = dgRep.Sums
		if err := poll(ctx, 5*time.Minute, 2*time.Second, func() (bool, error) {
			got, odd, err := r.aero.counters(r.aero.set)
			if err != nil {
				return false, err
			}
			rep.Counters, rep.OddRecords = got, odd
			return maps.Equal(got, dgRep.Sums) || total(got) > total(dgRep.Sums),
				fmt.Errorf("%d of %d units applied", total(got), total(dgRep.Sums))
		}); err != nil {
			r.log.Warn("sink did not converge", "err", err)
		}
	}
	// 5. Every bad record is dead-lettered.
	if err := poll(ctx, 3*time.Minute, 2*time.Second, func() (bool, error) {
		if err := r.readDLQ(ctx, rep); err != nil {
			return false, err
		}
		return len(rep.DLQMissing) == 0, fmt.Errorf("%d bad records not dead-lettered yet", len(rep.DLQMissing))
	}); err != nil {
		r.log.Warn("DLQ did not converge", "err", err)
	}
	return r.complete(ctx, rep)
}

const iterationsKey = "iterations"

// endSequence waits for a paused datagen connector to be PAUSED, sets its
// iterations to a common length past what every task has written, and
// resumes it. It reports false when the topic could not be read (a
// violation is recorded).
func (r *run) endSequence(ctx context.Context, cl *client.Client, dg *datagenRun) bool {
	start := time.Now()
	r.waitPaused(ctx, dg.conn, time.Minute)
	r.log.Info("datagen paused", "connector", dg.conn, "waited", time.Since(start).Round(time.Millisecond))
	now, err := datagencheck.Check(ctx, r.readOpts(), dg.topic, dg.spec)
	if err != nil {
		r.violate("reading %s: %v", dg.topic, err)
		return false
	}
	var top int64
	for _, t := range now.PerTask {
		top = max(top, t.Records+t.Missing)
	}
	dg.spec.Iterations = top + 100
	cfg := r.pl.config(dg.conn)
	cfg[iterationsKey] = strconv.FormatInt(dg.spec.Iterations, 10)
	if _, _, err := cl.PutConfig(ctx, dg.conn, cfg); err != nil {
		r.violate("setting %s iterations: %v", dg.conn, err)
	}
	r.pl.set(dg.conn, cfg)
	if err := cl.Resume(ctx, dg.conn); err != nil {
		r.violate("resume %s: %v", dg.conn, err)
	}
	return true
}

// awaitSequence waits until a datagen topic holds every task's sequence
// up to its iterations (or holds something it must not) and returns the
// last check.
func (r *run) awaitSequence(ctx context.Context, dg datagenRun) *datagencheck.Report {
	var rep *datagencheck.Report
	if err := poll(ctx, 5*time.Minute, 3*time.Second, func() (bool, error) {
		var err error
		rep, err = datagencheck.Check(ctx, r.readOpts(), dg.topic, dg.spec)
		if err != nil {
			return false, err
		}
		return rep.Missing == 0 || rep.Duplicates+rep.Invalid+rep.Reordered > 0,
			fmt.Errorf("%d records of the datagen sequence missing", rep.Missing)
	}); err != nil {
		r.violate("%s did not reach %d records per task: %v", dg.conn, dg.spec.Iterations, err)
	}
	return rep
}

func total(m map[string]int64) int64 {
	var s int64
	for _, v := range m {
		s += v
	}
	return s
}

// readDLQ reads both dead-letter topics into rep.
func (r *run) readDLQ(ctx context.Context, rep *Report) error {
	r.badMu.Lock()
	sent := maps.Clone(r.badSent)
	r.badMu.Unlock()
	seen := map[string]int{}
	var unexpected []string
	n := 0
	_, err := verify.ReadTopic(ctx, r.readOpts(), r.pl.sinkDLQ, func(rec *verify.Record) {
		n++
		id, ok := rec.Header(badHeader)
		if !ok {
			stage, _ := rec.Header("__connect.errors.stage")
			msg, _ := rec.Header("__connect.errors.exception.message")
			unexpected = append(unexpected, fmt.Sprintf("%s-%d@%d key %q stage %s: %s", r.pl.sinkDLQ, rec.Partition, rec.Offset, rec.Key, stage, msg))
			return
		}
		seen[string(id)]++
	})
	if err != nil {
		return err
	}
	rep.DLQRecords = n
	rep.DLQDistinct = len(seen)
	rep.DLQUnexpected = unexpected
	rep.BadSent = len(sent)
	rep.DLQMissing = nil
	for id := range sent {
		if seen[id] == 0 {
			rep.DLQMissing = append(rep.DLQMissing, id)
		}
	}
	sort.Strings(rep.DLQMissing)
	rep.BadByKind = map[string]int{}
	for id := range sent {
		_, kind, _ := strings.Cut(id, ":")
		rep.BadByKind[kind]++
	}
	rep.ReplDLQRecords = 0
	if _, err := verify.ReadTopic(ctx, r.readOpts(), r.pl.replDLQ, func(*verify.Record) { rep.ReplDLQRecords++ }); err != nil && !strings.Contains(err.Error(), verify.ErrTopicNotFound.Error()) {
		return err
	}
	return nil
}

// complete runs the final checks and fills the report.
func (r *run) complete(ctx context.Context, rep *Report) *Report {
	r.checkRunning(ctx, rep)
	r.checkExactlyOnce(rep)
	r.checkCounters(rep)
	r.checkDeadLetters(rep)
	r.recordFaults(rep)
	r.recordResources(rep)
	return rep
}

// checkRunning: everything runs, as the REST API reports it.
func (r *run) checkRunning(ctx context.Context, rep *Report) {
	if cl := r.cl.any(0); cl != nil {
		for _, name := range connectorNames {
			st, err := cl.Status(ctx, name)
			if err != nil {
				r.violate("status of %s: %v", name, err)
				continue
			}
			running := 0
			for _, t := range st.Tasks {
				if t.State == "RUNNING" {
					running++
				}
			}
			rep.Status = append(rep.Status, fmt.Sprintf("%s %s, %d/%d tasks RUNNING", name, st.Connector.State, running, len(st.Tasks)))
			if st.Connector.State != "RUNNING" || running != r.pl.tasks(name) || len(st.Tasks) != r.pl.tasks(name) {
				r.violate("at the end %s is %s with tasks %+v (want %d RUNNING)", name, st.Connector.State, st.Tasks, r.pl.tasks(name))
			}
		}
	}
	if !r.mon.healthy(5 * time.Second) {
		r.violate("at the end not every unit runs: %s", r.mon.downSummary())
	}
}

// checkExactlyOnce: both datagen topics and the replica.
func (r *run) checkExactlyOnce(rep *Report) {
	if d := rep.Datagen2; d != nil {
		if !d.OK() {
			r.violate("%s topic: %d duplicates, %d missing, %d reordered, %d invalid records of the datagen sequence; %v",
				connDatagen2, d.Duplicates, d.Missing, d.Reordered, d.Invalid, d.Examples)
		}
		if d.Ignored != 0 {
			r.violate("%s topic holds %d records marked bad, none were written there", connDatagen2, d.Ignored)
		}
	}
	if d := rep.Datagen; d != nil {
		if !d.OK() {
			r.violate("source topic: %d duplicates, %d missing, %d reordered, %d invalid records of the datagen sequence; %v",
				d.Duplicates, d.Missing, d.Reordered, d.Invalid, d.Examples)
		}
		if int64(d.Ignored) != int64(rep.BadSent) {
			r.violate("source topic holds %d records marked bad, %d were written", d.Ignored, rep.BadSent)
		}
	}
	if c := rep.Compare; c != nil && !c.OK(false) {
		r.violate("replica vs source: %d duplicates, %d lost, %d pending, %d unexpected, %d reordered, %d moved; %v",
			c.Duplicates, c.Lost, c.Pending, c.Unexpected, c.Reordered, c.Moved, c.Examples)
	}
}

// checkCounters: effectively once, every counter exact, nothing else in the set.
func (r *run) checkCounters(rep *Report) {
	if rep.ExpectedSums == nil {
		return
	}
	var wrong []string
	for k, want := range rep.ExpectedSums {
		if got, ok := rep.Counters[k]; !ok || got != want {
			wrong = append(wrong, fmt.Sprintf("%s=%d (want %d)", k, got, want))
		}
	}
	for k, got := range rep.Counters {
		if _, ok := rep.ExpectedSums[k]; !ok {
			wrong = append(wrong, fmt.Sprintf("%s=%d (not a datagen key)", k, got))
		}
	}
	sort.Strings(wrong)
	rep.CounterMismatches = wrong
	if len(wrong) > 0 {
		r.violate("%d Aerospike counters differ from their exact sums: %v", len(wrong), wrong)
	}
	if len(rep.OddRecords) > 0 {
		r.violate("Aerospike records without an integer counter: %v", rep.OddRecords)
	}
}

// checkDeadLetters: every bad record, nothing else.
func (r *run) checkDeadLetters(rep *Report) {
	if len(rep.DLQMissing) > 0 {
		r.violate("%d bad records were not dead-lettered: %v", len(rep.DLQMissing), rep.DLQMissing)
	}
	if len(rep.DLQUnexpected) > 0 {
		r.violate("%d dead letters are not corpus records (good records dead-lettered): %v", len(rep.DLQUnexpected), rep.DLQUnexpected)
	}
	if rep.ReplDLQRecords > 0 {
		r.violate("the replication dead-lettered %d records (it copies bytes: nothing should fail)", rep.ReplDLQRecords)
	}
}

// recordFaults: the faults injected, the recoveries against their target,
// unit failures and REST outcomes.
func (r *run) recordFaults(rep *Report) {
	r.events.closeWindows(time.Now())
	evs := r.events.all()
	attribute(evs, r.mon.episodes())
	rep.Events = evs
	rep.ByKind = byKind(evs)
	for _, e := range evs {
		if e.Consequence {
			continue
		}
		rep.FaultsInjected++
		if e.Kind == KindWorkerKill && e.Err == "" {
			limit := r.opts.SessionTimeout + 5*time.Second
			if e.Recovery > limit {
				msg := fmt.Sprintf("fault #%d %s (%s): recovered after %v, target %v", e.N, e.Kind, e.Detail, e.Recovery.Round(100*time.Millisecond), limit)
				rep.TargetMisses = append(rep.TargetMisses, msg)
				if r.opts.StrictRecovery {
					r.violate("%s", msg)
				}
			}
		}
	}
	rep.Failures = map[string]string{}
	for u, tr := range r.mon.failures() {
		rep.Failures[u.String()] = tr
	}
	rep.REST.Total, rep.REST.Refused, rep.REST.ByCode = r.restCounts.total, r.restCounts.refused, r.restCounts.byCode
}

// recordResources: the samples, their trends (judged when asked) and rates.
func (r *run) recordResources(rep *Report) {
	if r.smp == nil {
		return
	}
	ss := r.smp.all()
	rep.Samples = ss
	if len(ss) > 0 {
		rep.First, rep.Last = ss[0], ss[len(ss)-1]
	}
	rep.Trends = trends(ss)
	for _, t := range rep.Trends {
		if t.Judged && t.Growing && r.opts.JudgeTrends {
			r.violate("%s grows: median %.1f → %.1f %s (Theil–Sen %+.1f %s/h)", t.Name, t.Early, t.Late, t.Unit, t.SlopePerHour, t.Unit)
		}
	}
	rep.Rates = rates(ss)
}

// teardown stops everything the run started and checks that no plugin
// process outlives its worker.
func (r *run) teardown() {
	if r.cl != nil {
		var wg sync.WaitGroup
		for _, w := range r.cl.list() {
			if p := w.process(); p != nil && p.alive() {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if !p.terminate(r.opts.ShutdownTimeout + 20*time.Second) {
						r.violate("worker %s did not stop within task.shutdown.graceful.timeout.ms + 20 s of SIGTERM", w.Name)
					}
				}()
			}
		}
		wg.Wait()
		// Plugins exit with their worker.
		deadline := time.Now().Add(5 * time.Second)
		for {
			left := processesUnder(r.pluginDir)
			if len(left) == 0 {
				break
			}
			if time.Now().After(deadline) {
				for _, p := range left {
					r.violate("orphan plugin process %d (%s) after every worker stopped", p.PID, p.Exe)
					_ = syscallKill(p.PID)
				}
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if r.mon != nil {
		for _, o := range r.mon.orphanViolations() {
			r.violate("%s", o)
		}
	}
	if r.smp != nil {
		r.smp.close()
	}
	if r.producer != nil {
		r.producer.Close()
	}
	if r.aero != nil {
		r.aero.close()
	}
	if r.broker != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		if err := r.broker.stop(ctx); err != nil {
			r.log.Warn("stopping the broker", "err", err)
		}
		cancel()
	}
}
