package aerofake_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	as "github.com/aerospike/aerospike-client-go/v7"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
)

// Benchmarks run the real client against the server over loopback in one
// process, so each figure is client + wire + server on the same cores.
//
//	go test -run '^$' -bench . -count 6 ./connectors/aerospike/aerofake/

func benchSetup(b *testing.B, n int) (*aerofake.Server, *as.Client, []*as.Key) {
	b.Helper()
	srv := startServer(b, aerofake.Config{Namespaces: []aerofake.NamespaceConfig{{Name: "test"}}})
	c := newClient(b, srv)
	ks := make([]*as.Key, n)
	for i := range ks {
		ks[i] = mustKey(b, "test", "bench", i)
	}
	return srv, c, ks
}

func reportOps(b *testing.B, perOp int, unit string) {
	b.ReportMetric(float64(b.N*perOp)/b.Elapsed().Seconds(), unit)
}

// cpuClock measures the process's CPU time (user+system, all threads) over
// a benchmark loop. Wall-clock rates swing with whatever else the shared
// machine runs; CPU time per operation is the steadier cost figure.
type cpuClock struct{ start time.Duration }

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU() cpuClock { return cpuClock{start: processCPU()} }

// report adds the CPU nanoseconds spent per unit of work.
func (c cpuClock) report(b *testing.B, perOp int, unit string) {
	b.ReportMetric(float64(processCPU()-c.start)/float64(b.N*perOp), unit)
}

// BenchmarkPut is one client goroutine doing single-record puts (two bins).
func BenchmarkPut(b *testing.B) {
	_, c, ks := benchSetup(b, 10000)
	bins := as.BinMap{"v": 1, "s": "payload-0123456789"}
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		if err := c.Put(nil, ks[i%len(ks)], bins); err != nil {
			b.Fatal(err)
		}
	}
	reportOps(b, 1, "ops/s")
	cpu.report(b, 1, "cpu-ns/op")
}

// BenchmarkGet is one client goroutine reading existing records.
func BenchmarkGet(b *testing.B) {
	_, c, ks := benchSetup(b, 10000)
	for _, k := range ks {
		if err := c.Put(nil, k, as.BinMap{"v": 1, "s": "payload-0123456789"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		if _, err := c.Get(nil, ks[i%len(ks)]); err != nil {
			b.Fatal(err)
		}
	}
	reportOps(b, 1, "ops/s")
	cpu.report(b, 1, "cpu-ns/op")
}

// BenchmarkPutParallel runs puts from GOMAXPROCS goroutines.
func BenchmarkPutParallel(b *testing.B) {
	_, c, ks := benchSetup(b, 10000)
	bins := as.BinMap{"v": 1, "s": "payload-0123456789"}
	b.ResetTimer()
	cpu := startCPU()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if err := c.Put(nil, ks[i%len(ks)], bins); err != nil {
				b.Error(err)
				return
			}
			i += 7
		}
	})
	reportOps(b, 1, "ops/s")
	cpu.report(b, 1, "cpu-ns/op")
}

// BenchmarkBatchOperate1000 writes 1000 records per BatchOperate shaped like
// the sink's writes: a value bin plus an applied-positions map entry.
func BenchmarkBatchOperate1000(b *testing.B) {
	const batch = 1000
	_, c, ks := benchSetup(b, 10*batch)
	payload := as.NewBin("value", "payload-0123456789-0123456789-0123456789")
	mp := as.DefaultMapPolicy()
	rows := make([]as.BatchRecordIfc, batch)
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		off := (i % 10) * batch
		for j := range rows {
			rows[j] = as.NewBatchWrite(nil, ks[off+j],
				as.PutOp(payload),
				as.MapPutOp(mp, "pos", "orders-3", i))
		}
		if err := c.BatchOperate(nil, rows); err != nil {
			b.Fatal(err)
		}
		if rc := rows[batch-1].BatchRec().ResultCode; rc != 0 {
			b.Fatalf("row result %v", rc)
		}
	}
	reportOps(b, batch, "records/s")
	cpu.report(b, batch, "cpu-ns/record")
}

// BenchmarkBatchGet1000 reads 1000 records per BatchGet.
func BenchmarkBatchGet1000(b *testing.B) {
	const batch = 1000
	_, c, ks := benchSetup(b, batch)
	for _, k := range ks {
		if err := c.Put(nil, k, as.BinMap{"value": "payload-0123456789", "n": 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		recs, err := c.BatchGet(nil, ks)
		if err != nil {
			b.Fatal(err)
		}
		if recs[batch-1] == nil {
			b.Fatal(fmt.Errorf("record missing"))
		}
	}
	reportOps(b, batch, "records/s")
	cpu.report(b, batch, "cpu-ns/record")
}
