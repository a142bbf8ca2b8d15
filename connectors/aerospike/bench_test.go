package aerospike

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	as "github.com/aerospike/aerospike-client-go/v7"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
	"github.com/connectd/connectd/connectors/aerospike/aerotest"
	"github.com/connectd/connectd/framework/sdk"
)

const (
	// benchMapKeyField is the map.key.field of the map modes; every record
	// writes under the same map key, so that the raw loop can build its
	// operations once and the maps do not grow during a run.
	benchMapKeyField = "item"
	benchMapKey      = "i0"
	benchPartitions  = 6
	// benchKeys is a multiple of benchPartitions, so each key stays in one
	// partition, as Kafka's key partitioner keeps it.
	benchKeys = 18000
)

// benchValue returns a JSON object of exactly 1 KiB, decoded as the
// JsonConverter (schemas.enable=false) hands it to the sink. The map modes
// need a map key field; it takes its bytes from the payload field so that
// the record stays 1 KiB.
func benchValue(b *testing.B, mode string) map[string]any {
	b.Helper()
	v := map[string]any{
		"id":       int64(123456),
		"customer": "customer-000042",
		"email":    "someone@example.com",
		"amount":   1234.5,
		"count":    int64(3),
		"status":   "shipped",
		"currency": "EUR",
		"tags":     []any{"a", "b", "c"},
		"address":  map[string]any{"street": "1 Main St", "city": "Springfield", "zip": "12345"},
		"payload":  "",
	}
	if mode == ModeMapPut || mode == ModeMapIncrement {
		v[benchMapKeyField] = benchMapKey
	}
	raw, _ := json.Marshal(v)
	v["payload"] = strings.Repeat("x", 1024-len(raw))
	raw, _ = json.Marshal(v)
	if len(raw) != 1024 {
		b.Fatalf("bench value is %d bytes", len(raw))
	}
	var out map[string]any
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.UseNumber()
	if err := d.Decode(&out); err != nil {
		b.Fatal(err)
	}
	// The JsonConverter yields int64 and float64, not json.Number.
	for k, x := range out {
		if n, ok := x.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				out[k] = i
			} else {
				f, _ := n.Float64()
				out[k] = f
			}
		}
	}
	return out
}

// benchBatch builds a batch of batchSize records spread over the
// partitions; setBatch points it at iteration i.
func benchBatch(batchSize int, value map[string]any) []*sdk.SinkRecord {
	out := make([]*sdk.SinkRecord, batchSize)
	for j := range out {
		out[j] = rec("bench", int32(j%benchPartitions), 0, "", value)
	}
	return out
}

// setBatch gives the records of batch i fresh offsets (so nothing is a
// duplicate) and keys cycling through the benchKeys existing records of
// their partition. It is the only per-iteration work outside Put and costs
// a few nanoseconds per record.
func setBatch(batch []*sdk.SinkRecord, i int, keys []string) {
	per := (len(batch) + benchPartitions - 1) / benchPartitions
	for j, r := range batch {
		off := int64(i*per + j/benchPartitions)
		r.Offset, r.OriginalOffset = off, off
		r.Key = keys[(int(off)*benchPartitions+int(r.OriginalPartition))%len(keys)]
	}
}

func benchKeyNames() []string {
	keys := make([]string, benchKeys)
	for i := range keys {
		keys[i] = "key-" + strconv.Itoa(i)
	}
	return keys
}

// BenchmarkSinkThroughput compares, against the same in-process test
// server on loopback: the sink with the effectively-once protocol, the
// sink writing blindly (replace, no read, no checks), and a raw client
// loop that sends prebuilt BatchOperate writes of the same bins. Each
// variant runs on its own server; run with -count to get medians.
//
//	go test -run '^$' -bench BenchmarkSinkThroughput -benchtime 3s -count 5 ./connectors/aerospike/
//
// The list and map modes run under their mode's name
// (list_append/batch=100/protocol), each with the protocol and the raw loop
// sending the same list or map operations.
func BenchmarkSinkThroughput(b *testing.B) {
	keys := benchKeyNames()
	for _, m := range benchModes {
		value := benchValue(b, m.mode)
		for _, batchSize := range []int{100, 1000} {
			for _, v := range m.variants {
				b.Run(m.prefix+fmt.Sprintf("batch=%d/%s", batchSize, v), func(b *testing.B) {
					run := newBenchRunner(b, m.mode, v, batchSize, value, keys)
					b.ReportAllocs()
					b.ResetTimer()
					cpu0 := cpuTime()
					for i := 0; i < b.N; i++ {
						run(i)
					}
					b.StopTimer()
					reportRates(b, batchSize, cpu0)
				})
			}
		}
	}
}

// BenchmarkSinkInterleaved runs the three variants in turns, one batch
// each per iteration, so that they share the machine's load on a shared
// host: the ratios it reports are measured side by side.
//
//	go test -run '^$' -bench BenchmarkSinkInterleaved -benchtime 200x -count 5 ./connectors/aerospike/
//
// The list and map modes run as list_append/batch=100 and so on: the
// protocol in that mode beside the raw loop sending the same list or map
// operations, reported as protocol/raw.
func BenchmarkSinkInterleaved(b *testing.B) {
	keys := benchKeyNames()
	for _, m := range benchModes {
		value := benchValue(b, m.mode)
		for _, batchSize := range []int{100, 1000} {
			b.Run(m.prefix+fmt.Sprintf("batch=%d", batchSize), func(b *testing.B) {
				interleave(b, m.mode, m.variants, batchSize, value, keys)
			})
		}
	}
}

func interleave(b *testing.B, mode string, variants []string, batchSize int, value map[string]any, keys []string) {
	runs := make([]func(int), len(variants))
	for i, v := range variants {
		runs[i] = newBenchRunner(b, mode, v, batchSize, value, keys)
	}
	spent := make([]time.Duration, len(runs))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range runs {
			// Rotate the order so no variant always follows another.
			k := (i + j) % len(runs)
			t0 := time.Now()
			runs[k](i)
			spent[k] += time.Since(t0)
		}
	}
	b.StopTimer()
	rate := func(k int) float64 { return float64(b.N*batchSize) / spent[k].Seconds() }
	raw := slices.Index(variants, "raw")
	for k, v := range variants {
		b.ReportMetric(rate(k), v+"-records/s")
		if k != raw {
			b.ReportMetric(rate(k)/rate(raw), v+"/raw")
		}
	}
}

// benchModes are the write modes the benchmarks run. replace keeps the
// unprefixed names of its first figures; blind writing exists for replace
// only, as list_append and map_increment need effectively.once=true.
var benchModes = []struct {
	mode, prefix string
	variants     []string
}{
	{ModeReplace, "", []string{"protocol", "blind", "raw"}},
	{ModeListAppend, ModeListAppend + "/", []string{"protocol", "raw"}},
	{ModeMapIncrement, ModeMapIncrement + "/", []string{"protocol", "raw"}},
	{ModeMapPut, ModeMapPut + "/", []string{"protocol", "raw"}},
}

// newBenchRunner starts a server and the variant's writer, warms it up so
// that every key exists, and returns a function applying batch i.
func newBenchRunner(b *testing.B, mode, variant string, batchSize int, value map[string]any, keys []string) func(int) {
	b.Helper()
	srv := startServer(b, aerofake.Config{})
	warm := len(keys)/batchSize + 1
	var run func(int)
	if variant == "raw" {
		run = rawRunner(b, srv, mode, batchSize, value, keys)
	} else {
		kv := []string{KeyWriteMode, mode, KeyEffectivelyOne, fmt.Sprint(variant == "protocol")}
		if mode == ModeMapPut || mode == ModeMapIncrement {
			kv = append(kv, KeyMapKeyField, benchMapKeyField)
		}
		run = sinkRunner(b, srv, batchSize, value, keys, kv...)
	}
	for i := 0; i < warm; i++ {
		run(i)
	}
	return func(i int) { run(warm + i) }
}

func sinkRunner(b *testing.B, srv *aerotest.Cluster, batchSize int, value map[string]any, keys []string, kv ...string) func(int) {
	props := baseProps(srv, append([]string{KeyWriteMode, ModeReplace}, kv...)...)
	task, tc := startTask(b, props)
	batch := benchBatch(batchSize, value)
	b.Cleanup(func() {
		if n := len(tc.Reports()); n > 0 {
			b.Errorf("%d records reported", n)
		}
		for _, name := range []string{"generation_conflicts_total", "retries_total", "duplicates_skipped_total"} {
			if n := tc.counter(b, "connectd_aerospike_sink_"+name); n > 0 {
				b.Errorf("%s = %v: the benchmark must measure the conflict-free path", name, n)
			}
		}
	})
	return func(i int) {
		setBatch(batch, i, keys)
		if err := task.Put(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
}

// rawRunner is the floor for mode: prebuilt operations of the value's
// fields as the sink writes them in that mode (bin puts under REPLACE, list
// appends, map puts and increments under the map key), without a
// positions bin or generation checks.
func rawRunner(b *testing.B, srv *aerotest.Cluster, mode string, batchSize int, value map[string]any, keys []string) func(int) {
	client := srv.Client(b)
	akeys := make([]*as.Key, len(keys))
	for i, k := range keys {
		akeys[i], _ = as.NewKey(srv.Namespace, srv.Set("s"), k)
	}
	var ops []*as.Operation
	mapPol := as.DefaultMapPolicy()
	for name, v := range value {
		bv, _ := binValue(v)
		switch {
		case mode == ModeReplace:
			ops = append(ops, as.PutOp(as.NewBin(name, bv)))
		case mode == ModeListAppend:
			if l, ok := bv.([]any); ok {
				ops = append(ops, as.ListAppendOp(name, l...))
			} else {
				ops = append(ops, as.ListAppendOp(name, bv))
			}
		case name == benchMapKeyField:
			// The map key field is the key, not a bin.
		case mode == ModeMapIncrement && isNumber(bv):
			ops = append(ops, as.MapIncrementOp(mapPol, name, benchMapKey, bv))
		default:
			ops = append(ops, as.MapPutOp(mapPol, name, benchMapKey, bv))
		}
	}
	pol := as.NewBatchPolicy()
	// The sink's default timeouts: on a loaded machine the client's own
	// (a 1 s total) fail a batch of 1000 map operations before the sink's would.
	pol.SocketTimeout, pol.TotalTimeout = 5*time.Second, 10*time.Second
	wpol := &as.BatchWritePolicy{RecordExistsAction: as.UPDATE, CommitLevel: as.COMMIT_ALL}
	if mode == ModeReplace {
		wpol.RecordExistsAction = as.REPLACE
	}
	rows := make([]as.BatchRecordIfc, batchSize)
	per := (batchSize + benchPartitions - 1) / benchPartitions
	return func(i int) {
		for j := range rows {
			off := i*per + j/benchPartitions
			rows[j] = as.NewBatchWrite(wpol, akeys[(off*benchPartitions+j%benchPartitions)%len(akeys)], ops...)
		}
		if err := client.BatchOperate(pol, rows); err != nil {
			b.Fatal(err)
		}
		for _, r := range rows {
			if rc := r.BatchRec().ResultCode; rc != 0 {
				b.Fatalf("row failed: %v", rc)
			}
		}
	}
}

// cpuTime is the process's CPU time (all threads: client, the in-process
// test server and GC), which the shared machine's load does not inflate
// the way it inflates wall-clock time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportRates(b *testing.B, batchSize int, cpu0 time.Duration) {
	n := float64(b.N * batchSize)
	b.ReportMetric(n/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(cpuTime()-cpu0)/n, "cpu-ns/record")
}
