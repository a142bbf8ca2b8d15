package host_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/plugins/host"
	"github.com/connectd/connectd/plugins/internal/testconnectors"
	"github.com/connectd/connectd/plugins/internal/wire"
	"github.com/connectd/connectd/plugins/plugintest"
)

// BenchmarkBoundary measures the per-record cost of the plugin boundary for
// 1 KiB records: the same connector work in-process and through a plugin
// process (task streams on the data channel, a socketpair), for batches
// of 1, 10, 100 and 1000 records. One op is one record; MB/s counts
// values.
//
//	go test ./plugins/host -run '^$' -bench Boundary -benchtime 1s
func BenchmarkBoundary(b *testing.B) {
	const size = 1024
	for _, dir := range []string{"sink", "source"} {
		for _, batch := range []int{1, 10, 100, 1000} {
			for _, mode := range []string{"inproc", "plugin"} {
				b.Run(fmt.Sprintf("%s/%s/batch=%d", dir, mode, batch), func(b *testing.B) {
					switch dir + "/" + mode {
					case "sink/inproc":
						benchSinkInProc(b, batch, size)
					case "sink/plugin":
						benchSinkPlugin(b, batch, size)
					case "source/inproc":
						benchSourceInProc(b, batch, size)
					case "source/plugin":
						benchSourcePlugin(b, batch, size)
					}
				})
			}
		}
	}
}

// launchBench launches the test plugin for a benchmark.
func launchBench(b *testing.B, mode string) *host.Process {
	env := plugintest.Install(b, build(b, mode), host.LaunchOptions{Logger: slog.New(slog.DiscardHandler)})
	return env.Launch(b)
}

func sinkBatch(n, size int) []chain.Raw {
	recs := make([]chain.Raw, n)
	for i := range recs {
		recs[i] = chain.Raw{Topic: "bench", Partition: int32(i % 4), Offset: int64(i), Key: []byte("key-0123456789"), Value: make([]byte, size)}
	}
	return recs
}

func report(b *testing.B, size int) {
	b.SetBytes(int64(size))
}

// cpuMeter reports CPU time per record of this process plus the plugin
// process: on a shared machine wall time measures the neighbours too.
type cpuMeter struct {
	pid          int
	host, plugin time.Duration
}

func startCPU(pid int) *cpuMeter {
	return &cpuMeter{pid: pid, host: cpuOf(os.Getpid()), plugin: cpuOf(pid)}
}

func (m *cpuMeter) report(b *testing.B) {
	host, plugin := cpuOf(os.Getpid())-m.host, cpuOf(m.pid)-m.plugin
	b.ReportMetric(float64((host+plugin).Nanoseconds())/float64(b.N), "cpu-ns/record")
	if m.pid != 0 {
		b.ReportMetric(float64(plugin.Nanoseconds())/float64(b.N), "plugin-cpu-ns/record")
	}
}

// cpuOf reads utime+stime of pid from /proc (clock ticks of 10 ms).
func cpuOf(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

func benchSinkPlugin(b *testing.B, batch, size int) {
	p := launchBench(b, "sink")
	task, err := p.StartSinkTask(context.Background(), host.SinkTaskStart{Connector: "bench", Defaults: chain.ByteArrayDefaults(), Props: sinkConfig("discard")})
	if err != nil {
		b.Fatal(err)
	}
	defer task.Stop(context.Background())
	recs := sinkBatch(batch, size)
	ctx := context.Background()
	report(b, size)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU(p.Pid())
	for i := 0; i < b.N; i += batch {
		if _, err := task.Put(ctx, recs); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b)
}

// BenchmarkBoundaryTwoPuts is BenchmarkBoundary's sink/plugin case with
// two goroutines putting at once, so that two batches are in flight (the
// test plugin grants two credits; batches are applied in the order their
// sends begin): what overlapping one batch's round trip with the next
// one's would gain over BenchmarkBoundary's one Put at a time. The
// worker's sink runner puts one batch at a time.
//
//	go test ./plugins/host -run '^$' -bench BoundaryTwoPuts -benchtime 1s
func BenchmarkBoundaryTwoPuts(b *testing.B) {
	const size = 1024
	for _, batch := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("sink/plugin/batch=%d", batch), func(b *testing.B) {
			p := launchBench(b, "sink")
			task, err := p.StartSinkTask(context.Background(), host.SinkTaskStart{Connector: "bench", Defaults: chain.ByteArrayDefaults(), Props: sinkConfig("discard")})
			if err != nil {
				b.Fatal(err)
			}
			defer task.Stop(context.Background())
			report(b, size)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := startCPU(p.Pid())
			var next atomic.Int64 // records put so far, over both goroutines
			var wg sync.WaitGroup
			errs := make(chan error, 2)
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					recs := sinkBatch(batch, size)
					for next.Add(int64(batch)) <= int64(b.N)+int64(batch)-1 {
						if _, err := task.Put(context.Background(), recs); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			cpu.report(b)
			close(errs)
			for err := range errs {
				b.Fatal(err)
			}
		})
	}
}

// benchTaskContext is the in-process stand-in for the plugin's contexts.
type benchTaskContext struct{}

func (benchTaskContext) Connector() string                    { return "bench" }
func (benchTaskContext) TaskID() int                          { return 0 }
func (benchTaskContext) Logger() *slog.Logger                 { return slog.New(slog.DiscardHandler) }
func (benchTaskContext) Metrics() prometheus.Registerer       { return prometheus.NewRegistry() }
func (benchTaskContext) ReportError(*sdk.SinkRecord, error)   {}
func (benchTaskContext) Offset(map[string]any) map[string]any { return nil }
func (benchTaskContext) Transactions() sdk.TransactionContext { return nil }

// benchSinkInProc does what the plugin does for a Put, minus the boundary:
// the chain per record, then the task's Put.
func benchSinkInProc(b *testing.B, batch, size int) {
	ctx := context.Background()
	ch, err := chain.NewSink(map[string]string{}, chain.ByteArrayDefaults())
	if err != nil {
		b.Fatal(err)
	}
	task := testconnectors.Sink{}.NewTask()
	if err := task.Start(ctx, benchTaskContext{}, sinkConfig("discard")); err != nil {
		b.Fatal(err)
	}
	recs := sinkBatch(batch, size)
	report(b, size)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU(0)
	defer cpu.report(b)
	for i := 0; i < b.N; i += batch {
		// As the plugin does for a task that may keep its records.
		slab := make([]sdk.SinkRecord, len(recs))
		ptrs := make([]*sdk.SinkRecord, 0, len(recs))
		for j := range recs {
			keep, fail := ch.ApplyTo(recs[j], &slab[j])
			if fail != nil || !keep {
				b.Fatal(fail)
			}
			ptrs = append(ptrs, &slab[j])
		}
		if err := task.Put(ctx, ptrs); err != nil {
			b.Fatal(err)
		}
	}
}

func sourceProps(batch, size int) map[string]string {
	return map[string]string{"topic": "bench", "mode": "static", "batch": fmt.Sprint(batch), "record.bytes": fmt.Sprint(size)}
}

func benchSourcePlugin(b *testing.B, batch, size int) {
	p := launchBench(b, "source")
	ctx := context.Background()
	task, err := p.StartSourceTask(ctx, host.SourceTaskStart{Connector: "bench", Defaults: chain.ByteArrayDefaults(), Props: sourceProps(batch, size), Credits: 4})
	if err != nil {
		b.Fatal(err)
	}
	defer task.Stop(ctx)
	report(b, size)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU(p.Pid())
	defer cpu.report(b)
	for i := 0; i < b.N; {
		bt, err := task.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		i += len(bt.Records)
		task.Release(bt) // as the worker's runners do once a batch is produced
	}
}

// benchSourceInProc does what the plugin does for a poll, minus the
// boundary: Poll, JSON source partition/offset (the plugin's encoder), the
// chain per record.
func benchSourceInProc(b *testing.B, batch, size int) {
	ctx := context.Background()
	ch, err := chain.NewSource(map[string]string{}, chain.ByteArrayDefaults())
	if err != nil {
		b.Fatal(err)
	}
	task := testconnectors.Source{}.NewTask()
	if err := task.Start(ctx, benchTaskContext{}, sourceProps(batch, size)); err != nil {
		b.Fatal(err)
	}
	out := make([]chain.Raw, 0, batch)
	var js []byte
	var partEnc, offEnc wire.ObjectEncoder // as the plugin encodes
	report(b, size)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU(0)
	defer cpu.report(b)
	for i := 0; i < b.N; {
		recs, err := task.Poll(ctx)
		if err != nil {
			b.Fatal(err)
		}
		out = out[:0]
		for _, r := range recs {
			if js, err = partEnc.Append(js[:0], r.SourcePartition); err != nil {
				b.Fatal(err)
			}
			if js, err = offEnc.Append(js, r.SourceOffset); err != nil {
				b.Fatal(err)
			}
			raw, keep, fail := ch.Apply(r)
			if fail != nil || !keep {
				b.Fatal(fail)
			}
			out = append(out, raw)
		}
		i += len(recs)
	}
}
