// Command workerbench measures the worker runtime's source path — the
// exactly-once runner at transaction.boundary=interval and =poll, and the
// at-least-once runner — against raw confluent-kafka-go consume→produce
// loops on the same broker, data and client version (the client's own
// limit: raw-eos with transactions, raw-alo without).
//
// Method: preload N records of -size bytes into a topic with
// -partitions partitions, then, for every system in turn (interleaved,
// -rounds times), drain that topic into a fresh output topic and time it
// until the last record is committed (exactly-once) or acknowledged
// (at-least-once). connectd runs in this process with the real plugin
// boundary: bench/replaysource, a bench-only replay source plugin that
// reads the input partitions with its own consumer, in its own process,
// one task. Every run is verified with a read_committed consumer (every
// record once, in order per partition) and discarded if it fails.
//
// Usage (broker from `make kafka-up`):
//
//	go run ./bench/workerbench -records 200000 -rounds 5
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/worker"
	"github.com/connectd/connectd/internal/repo"
	"github.com/connectd/connectd/offsets"
	"github.com/connectd/connectd/plugins/host"
)

type options struct {
	records, size, partitions, rounds, tasks int
	interval                                 time.Duration
	systems                                  []string
	linger                                   string
	pluginProfile                            string
}

const (
	rawEOS       = "raw-eos"
	rawALO       = "raw-alo"
	eosInterval  = "connectd-eos-interval"
	eosPoll      = "connectd-eos-poll"
	connectdALO  = "connectd-alo"
	defaultOrder = rawEOS + "," + eosInterval + "," + eosPoll + "," + connectdALO + "," + rawALO
)

func main() {
	var o options
	var systems string
	flag.IntVar(&o.records, "records", 200_000, "records to preload and drain per run")
	flag.IntVar(&o.size, "size", 1024, "value size in bytes")
	flag.IntVar(&o.partitions, "partitions", 6, "partitions of the input and output topics")
	flag.IntVar(&o.rounds, "rounds", 5, "runs per system (interleaved)")
	flag.IntVar(&o.tasks, "tasks", 1, "connectd source tasks")
	flag.DurationVar(&o.interval, "interval", 100*time.Millisecond, "transaction interval (raw-eos and connectd-eos-interval)")
	flag.StringVar(&systems, "systems", defaultOrder, "systems to run, in order")
	flag.StringVar(&o.linger, "linger-ms", "5", "linger.ms of every producer")
	flag.StringVar(&o.pluginProfile, "plugin-cpuprofile", "", "have the replay plugin write its CPU profile to this file")
	cpuprofile := flag.String("cpuprofile", "", "write this process's CPU profile (the worker side) to a file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "workerbench:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "workerbench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	o.systems = strings.Split(systems, ",")
	if err := run(o); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "workerbench:", err)
		os.Exit(1)
	}
}

type result struct {
	round     int
	system    string
	dur       time.Duration
	cpu       time.Duration // this process + its children (the plugin)
	pluginCPU time.Duration // the children alone
	brokerCPU time.Duration
}

func run(o options) error {
	root, err := repo.Root()
	if err != nil {
		return err
	}
	bootstrap, err := lookupBootstrap(root)
	if err != nil {
		return err
	}
	brokerPid := readPid(filepath.Join(root, ".run", "kafka", "pid"))
	tmp, err := os.MkdirTemp("", "workerbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	cat, err := installPlugin(root, tmp)
	if err != nil {
		return err
	}
	admin, err := kafka.NewAdminClient(&kafka.ConfigMap{"bootstrap.servers": bootstrap})
	if err != nil {
		return err
	}
	defer admin.Close()
	ctx := context.Background()
	suffix := strconv.FormatUint(rand.Uint64()%1e9, 10)
	in := "bench-in-" + suffix
	offsetsTopic := "bench-offsets-" + suffix
	if err := createTopic(ctx, admin, in, o.partitions, nil); err != nil {
		return err
	}
	defer deleteTopics(admin, in, offsetsTopic)
	if err := offsets.CreateTopic(ctx, admin, offsets.TopicSpec{Name: offsetsTopic, Partitions: 25, ReplicationFactor: 1}); err != nil {
		return err
	}
	log("preloading %d records of %d bytes into %s (%d partitions)", o.records, o.size, in, o.partitions)
	if err := preload(bootstrap, in, o); err != nil {
		return err
	}

	var results []result
	for round := range o.rounds {
		for _, sys := range o.systems {
			out := fmt.Sprintf("bench-out-%s-%s-%d", suffix, sys, round)
			if err := createTopic(ctx, admin, out, o.partitions, nil); err != nil {
				return err
			}
			self0, kids0, broker0 := cpuSelf(), cpuChildren(), procCPU(brokerPid)
			var dur time.Duration
			switch sys {
			case rawEOS, rawALO:
				dur, err = rawLoop(bootstrap, in, out, o, sys == rawEOS)
			case eosInterval, eosPoll, connectdALO:
				dur, err = runConnectd(bootstrap, cat, in, out, offsetsTopic, fmt.Sprintf("bench-%s-%s-%d", suffix, sys, round), sys, o)
			default:
				err = fmt.Errorf("unknown system %q", sys)
			}
			r := result{round: round, system: sys, dur: dur, cpu: cpuSelf() - self0 + cpuChildren() - kids0, pluginCPU: cpuChildren() - kids0, brokerCPU: procCPU(brokerPid) - broker0}
			if err == nil {
				err = verify(bootstrap, out, o)
			}
			deleteTopics(admin, out)
			if err != nil {
				return fmt.Errorf("%s round %d: %w", sys, round+1, err)
			}
			log("round %d %-22s %8.0f rec/s  %6.1f MB/s  cpu %5.2fs (plugin %5.2fs)  broker cpu %5.2fs", round+1, sys,
				float64(o.records)/dur.Seconds(), float64(o.records)*float64(o.size)/dur.Seconds()/1e6, r.cpu.Seconds(), r.pluginCPU.Seconds(), r.brokerCPU.Seconds())
			results = append(results, r)
		}
	}
	report(o, results)
	return nil
}

func log(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+format+"\n", args...)
}

// quartiles returns the median and the first and third quartiles of v.
func quartiles(v []float64) (median, q1, q3 float64) {
	if len(v) == 0 {
		return 0, 0, 0
	}
	v = append([]float64(nil), v...)
	sort.Float64s(v)
	q := func(p float64) float64 {
		x := p * float64(len(v)-1)
		i := int(x)
		if i+1 >= len(v) {
			return v[len(v)-1]
		}
		return v[i] + (x-float64(i))*(v[i+1]-v[i])
	}
	return q(0.5), q(0.25), q(0.75)
}

// report prints the medians (and interquartile ranges) as a Markdown table.
func report(o options, results []result) {
	by := map[string][]result{}
	for _, r := range results {
		by[r.system] = append(by[r.system], r)
	}
	rate := func(r result) float64 { return float64(o.records) / r.dur.Seconds() }
	each := func(rs []result, f func(result) float64) []float64 {
		out := make([]float64, len(rs))
		for i, r := range rs {
			out[i] = f(r)
		}
		return out
	}
	rawByRound := map[int]float64{}
	for _, r := range by[rawEOS] {
		rawByRound[r.round] = rate(r)
	}
	ceiling, _, _ := quartiles(each(by[rawEOS], rate))
	fmt.Printf("\n%d records of %d B, %d partitions, %d connectd task(s), linger.ms=%s, interval %v, %d rounds; medians:\n\n",
		o.records, o.size, o.partitions, o.tasks, o.linger, o.interval, o.rounds)
	fmt.Println("| system | records/s (median) | IQR | MB/s | CPU-s per 1M records (worker + plugin) | broker CPU-s per 1M | median / raw-eos median | median of per-round ratios |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, sys := range o.systems {
		rs := by[sys]
		if len(rs) == 0 {
			continue
		}
		m, q1, q3 := quartiles(each(rs, rate))
		cpu, _, _ := quartiles(each(rs, func(r result) float64 { return r.cpu.Seconds() * 1e6 / float64(o.records) }))
		bcpu, _, _ := quartiles(each(rs, func(r result) float64 { return r.brokerCPU.Seconds() * 1e6 / float64(o.records) }))
		// Each run divided by raw-eos in the same round: they run back to
		// back, so they share the machine's load at the time.
		var paired []float64
		for _, r := range rs {
			if raw := rawByRound[r.round]; raw > 0 {
				paired = append(paired, rate(r)/raw)
			}
		}
		ratio, perRound := "—", "—"
		if ceiling > 0 {
			ratio = fmt.Sprintf("%.2f", m/ceiling)
		}
		if len(paired) > 0 {
			v, _, _ := quartiles(paired)
			perRound = fmt.Sprintf("%.2f", v)
		}
		fmt.Printf("| %s | %.0f | %.0f–%.0f | %.1f | %.1f | %.1f | %s | %s |\n", sys, m, q1, q3, m*float64(o.size)/1e6, cpu, bcpu, ratio, perRound)
	}
}

// rawLoop is the ceiling: one consumer, one producer, no plugin boundary.
// With transactions it commits every o.interval: the consumed positions
// go into the transaction (SendOffsetsToTransaction), then
// CommitTransaction.
func rawLoop(bootstrap, in, out string, o options, txn bool) (time.Duration, error) {
	ctx := context.Background()
	group := "bench-raw-" + strconv.FormatUint(rand.Uint64(), 36)
	start := time.Now()
	c, err := kafka.NewConsumer(&kafka.ConfigMap{
		"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": false,
		"isolation.level": "read_committed",
	})
	if err != nil {
		return 0, err
	}
	defer c.Close()
	pc := kafka.ConfigMap{
		"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": true,
		"linger.ms": o.linger, "go.delivery.reports": false,
	}
	if txn {
		pc["transactional.id"] = group
	}
	p, err := kafka.NewProducer(&pc)
	if err != nil {
		return 0, err
	}
	defer p.Close()
	if txn {
		if err := p.InitTransactions(ctx); err != nil {
			return 0, err
		}
	}
	var tps []kafka.TopicPartition
	for i := range o.partitions {
		tps = append(tps, kafka.TopicPartition{Topic: &in, Partition: int32(i), Offset: kafka.OffsetBeginning})
	}
	if err := c.Assign(tps); err != nil {
		return 0, err
	}
	positions := map[int32]kafka.Offset{}
	commit := func() error {
		var list []kafka.TopicPartition
		for part, off := range positions {
			list = append(list, kafka.TopicPartition{Topic: &in, Partition: part, Offset: off})
		}
		if len(list) > 0 {
			md, err := c.GetConsumerGroupMetadata()
			if err != nil {
				return err
			}
			if err := p.SendOffsetsToTransaction(ctx, list, md); err != nil {
				return err
			}
		}
		return p.CommitTransaction(ctx)
	}
	if txn {
		if err := p.BeginTransaction(); err != nil {
			return 0, err
		}
	}
	last := time.Now()
	for n := 0; n < o.records; {
		ev := c.Poll(100)
		if m, ok := ev.(*kafka.Message); ok {
			out := &kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &out, Partition: m.TopicPartition.Partition},
				Key: m.Key, Value: m.Value, Timestamp: m.Timestamp}
			for {
				err := p.Produce(out, nil)
				var ke kafka.Error
				if errors.As(err, &ke) && ke.Code() == kafka.ErrQueueFull {
					time.Sleep(time.Millisecond)
					continue
				}
				if err != nil {
					return 0, err
				}
				break
			}
			positions[m.TopicPartition.Partition] = m.TopicPartition.Offset + 1
			n++
		}
		if txn && time.Since(last) >= o.interval {
			if err := commit(); err != nil {
				return 0, err
			}
			if err := p.BeginTransaction(); err != nil {
				return 0, err
			}
			last = time.Now()
		}
	}
	if txn {
		if err := commit(); err != nil {
			return 0, err
		}
	} else {
		for p.Flush(1000) > 0 {
		}
	}
	return time.Since(start), nil
}

// runConnectd drains in through a worker running the replay plugin.
func runConnectd(bootstrap string, cat *host.Catalog, in, out, offsetsTopic, name, sys string, o options) (time.Duration, error) {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	w, err := worker.New(ctx, worker.Config{
		WorkerID: "bench", GroupID: "bench", BootstrapServers: bootstrap, ExactlyOnceSource: sys != connectdALO,
		OffsetsTopic: offsetsTopic, OffsetFlushInterval: time.Second, TaskShutdownTimeout: 30 * time.Second,
		ProducerProps: map[string]string{"linger.ms": o.linger},
		Plugins:       cat, PluginLaunch: host.LaunchOptions{Logger: logger},
		Logger: logger, Metrics: reg,
	}, worker.NopStatus{})
	if err != nil {
		return 0, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		_ = w.Close(cctx)
	}()
	props := map[string]string{
		"connector.class": "BenchReplaySource", "tasks.max": strconv.Itoa(o.tasks),
		"source.bootstrap.servers": bootstrap, "source.topic": in, "topic": out,
		"key.converter":   "org.apache.kafka.connect.converters.ByteArrayConverter",
		"value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
	}
	if o.pluginProfile != "" {
		props["cpuprofile"] = o.pluginProfile
	}
	switch sys {
	case eosInterval:
		props["transaction.boundary"] = "interval"
		props["transaction.boundary.interval.ms"] = strconv.FormatInt(o.interval.Milliseconds(), 10)
	case eosPoll:
		props["transaction.boundary"] = "poll"
	}
	start := time.Now()
	if err := w.StartConnector(ctx, name, props, worker.TargetStarted, nil); err != nil {
		return 0, err
	}
	configs, err := w.ConnectorTaskConfigs(ctx, name, o.tasks)
	if err != nil {
		return 0, err
	}
	for i, tc := range configs {
		if err := w.StartTask(ctx, worker.TaskID{Connector: name, Task: i}, props, tc, worker.TargetStarted); err != nil {
			return 0, err
		}
	}
	deadline := time.Now().Add(10 * time.Minute)
	for {
		written, err := counter(reg, "connectd_source_records_written_total")
		if err != nil {
			return 0, err
		}
		if written >= float64(o.records) {
			return time.Since(start), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("only %v of %d records written after 10 minutes", written, o.records)
		}
		for i := range configs {
			if s, trace, _ := w.TaskStatus(worker.TaskID{Connector: name, Task: i}); s == worker.StateFailed {
				return 0, fmt.Errorf("task %d failed: %s", i, trace)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func counter(g prometheus.Gatherer, name string) (float64, error) {
	fams, err := g.Gather()
	if err != nil {
		return 0, err
	}
	var sum float64
	for _, f := range fams {
		if f.GetName() == name {
			for _, m := range f.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum, nil
}

func preload(bootstrap, topic string, o options) error {
	p, err := kafka.NewProducer(&kafka.ConfigMap{
		"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": true, "linger.ms": 20,
		"go.delivery.reports": false,
	})
	if err != nil {
		return err
	}
	defer p.Close()
	pad := strings.Repeat("x", o.size)
	for i := range o.records {
		key := []byte(fmt.Sprintf("%012d", i))
		value := []byte(pad)
		copy(value, key)
		m := &kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: int32(i % o.partitions)}, Key: key, Value: value}
		for {
			err := p.Produce(m, nil)
			var ke kafka.Error
			if errors.As(err, &ke) && ke.Code() == kafka.ErrQueueFull {
				p.Flush(100)
				continue
			}
			if err != nil {
				return err
			}
			break
		}
	}
	for p.Flush(1000) > 0 {
	}
	return nil
}

// verify reads the output read_committed: every record exactly once, in
// key order within each partition.
func verify(bootstrap, topic string, o options) error {
	c, err := kafka.NewConsumer(&kafka.ConfigMap{
		"bootstrap.servers": bootstrap, "group.id": "bench-verify", "enable.auto.commit": false,
		"isolation.level": "read_committed", "enable.partition.eof": true,
	})
	if err != nil {
		return err
	}
	defer c.Close()
	var tps []kafka.TopicPartition
	for i := range o.partitions {
		tps = append(tps, kafka.TopicPartition{Topic: &topic, Partition: int32(i), Offset: kafka.OffsetBeginning})
	}
	if err := c.Assign(tps); err != nil {
		return err
	}
	seen := make([]bool, o.records)
	last := map[int32]int{}
	n := 0
	eof := map[int32]bool{}
	deadline := time.Now().Add(5 * time.Minute)
	for len(eof) < o.partitions || n < o.records {
		if time.Now().After(deadline) {
			return fmt.Errorf("verify: read %d of %d records", n, o.records)
		}
		switch e := c.Poll(200).(type) {
		case *kafka.Message:
			seq, err := strconv.Atoi(string(e.Key))
			if err != nil || seq < 0 || seq >= o.records {
				return fmt.Errorf("verify: unexpected key %q", e.Key)
			}
			if seen[seq] {
				return fmt.Errorf("verify: record %d duplicated", seq)
			}
			seen[seq] = true
			if prev, ok := last[e.TopicPartition.Partition]; ok && seq <= prev {
				return fmt.Errorf("verify: partition %d has %d after %d", e.TopicPartition.Partition, seq, prev)
			}
			last[e.TopicPartition.Partition] = seq
			n++
			delete(eof, e.TopicPartition.Partition)
		case kafka.PartitionEOF:
			eof[e.Partition] = true
		}
	}
	if n != o.records {
		return fmt.Errorf("verify: %d records, want %d", n, o.records)
	}
	return nil
}

func installPlugin(root, dir string) (*host.Catalog, error) {
	bin := filepath.Join(dir, "replaysource")
	cmd := exec.Command("go", "build", "-o", bin, "./bench/replaysource")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build ./bench/replaysource: %v\n%s", err, out)
	}
	cat, err := host.OpenCatalog(filepath.Join(dir, "plugins"))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := cat.Install(ctx, bin); err != nil {
		return nil, err
	}
	return cat, nil
}

func createTopic(ctx context.Context, admin *kafka.AdminClient, name string, parts int, cfg map[string]string) error {
	res, err := admin.CreateTopics(ctx, []kafka.TopicSpecification{{Topic: name, NumPartitions: parts, ReplicationFactor: 1, Config: cfg}})
	if err != nil {
		return err
	}
	if c := res[0].Error.Code(); c != kafka.ErrNoError {
		return fmt.Errorf("create topic %s: %w", name, res[0].Error)
	}
	for range 100 {
		md, err := admin.GetMetadata(&name, false, 5000)
		if err == nil && len(md.Topics[name].Partitions) == parts {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("topic %s not ready", name)
}

func deleteTopics(admin *kafka.AdminClient, names ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = admin.DeleteTopics(ctx, names)
}

func cpuSelf() time.Duration     { return rusage(syscall.RUSAGE_SELF) }
func cpuChildren() time.Duration { return rusage(syscall.RUSAGE_CHILDREN) }

func rusage(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU is a process's user+system CPU time from /proc (0 if unknown).
func procCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

func readPid(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

func lookupBootstrap(root string) (string, error) {
	if v := os.Getenv("KAFKA_BOOTSTRAP"); v != "" {
		return v, nil
	}
	f, err := os.Open(filepath.Join(root, ".run", "kafka.env"))
	if err != nil {
		return "", errors.New("no broker: run `make kafka-up` or set KAFKA_BOOTSTRAP")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "KAFKA_BOOTSTRAP="); ok {
			return v, nil
		}
	}
	return "", errors.New(".run/kafka.env has no KAFKA_BOOTSTRAP")
}
