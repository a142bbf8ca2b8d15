// Package testconnectors holds connectors that exist only to test the plugin
// boundary: TestSource emits deterministic byte records (sizes, headers,
// nulls, a 16 MiB record) and TestSink writes what it receives to a file
// and can be slowed down or told to reject records. Their behaviour is
// chosen by config, because the host gives plugins a minimal environment.
//
// Nothing outside tests may import this package.
package testconnectors

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/sdk"
)

// ---- TestSource ----

// Source config keys.
const (
	SrcTopic    = "topic"
	SrcRecords  = "records"      // total records, then idle
	SrcBatch    = "batch"        // records per Poll
	SrcSize     = "record.bytes" // value size
	SrcBigEvery = "big.every"    // every n-th record has a 16 MiB value (0 = never)
	SrcSeed     = "seed"
	SrcMode     = "mode" // "", "hang-poll", "crash-poll", "fail-poll", "hang-validate", "log-flood"
	// SrcFloodLines is how many log lines mode "log-flood" writes per
	// record it returns (message FloodMessage).
	SrcFloodLines = "flood.lines"
	FloodMessage  = "flooding the log"
	BigValueSize  = 16 << 20
)

// SourceRecordAt is TestSource's record number i: deterministic bytes, a
// null key for every 7th record, headers on every 3rd, a timestamp.
// Version is the version both test connectors report; a build sets
// another with -ldflags -X to install two versions side by side.
var Version = "1.0.0"

func SourceRecordAt(seed int64, size, bigEvery, i int) (key, value []byte, headers []sdk.Header, ts time.Time) {
	r := rand.New(rand.NewPCG(uint64(seed), uint64(i)))
	if i%7 != 0 {
		key = []byte("key-" + strconv.Itoa(i))
	}
	n := size
	if bigEvery > 0 && i%bigEvery == bigEvery-1 {
		n = BigValueSize
	}
	value = make([]byte, n)
	for j := 0; j+8 <= n; j += 8 {
		binary.LittleEndian.PutUint64(value[j:], r.Uint64())
	}
	for j := n &^ 7; j < n; j++ {
		value[j] = byte(r.Uint32())
	}
	if i%3 == 0 {
		headers = []sdk.Header{{Key: "h1", Value: []byte("v" + strconv.Itoa(i))}, {Key: "empty", Value: []byte{}}}
	}
	ts = time.UnixMilli(1_700_000_000_000 + int64(i))
	return key, value, headers, ts
}

type Source struct{}

func (Source) Spec() sdk.Spec {
	return sdk.Spec{Class: "TestSource", Version: Version, Type: sdk.Source, Summary: "boundary test source",
		DefinesTransactionBoundaries: true,
		Config: configdef.New().
			Define(configdef.Key{Name: SrcTopic, Type: configdef.String, Required: true, Importance: configdef.High}).
			Define(configdef.Key{Name: SrcRecords, Type: configdef.Int, Default: int32(100), Importance: configdef.Low}).
			Define(configdef.Key{Name: SrcSize, Type: configdef.Int, Default: int32(1024), Importance: configdef.Low})}
}

func (Source) Validate(_ context.Context, props map[string]string) []sdk.FieldError {
	if props[SrcMode] == "hang-validate" {
		select {} // never answers
	}
	var errs []sdk.FieldError
	for _, k := range []string{SrcRecords, SrcSize, SrcBatch} {
		if v, ok := props[k]; ok {
			if n, err := strconv.Atoi(v); err != nil || n < 0 {
				errs = append(errs, sdk.FieldError{Key: k, Message: fmt.Sprintf("Invalid value %s for configuration %s: must be a non-negative integer", v, k)})
			}
		}
	}
	return errs
}

// Start raises the events named by the "events" key (reconfigure, error),
// so tests can see connector events cross the boundary.
func (Source) Start(_ context.Context, cctx sdk.ConnectorContext, props map[string]string) error {
	switch props["events"] {
	case "reconfigure":
		cctx.RequestTaskReconfiguration()
	case "error":
		cctx.RaiseError(fmt.Errorf("test source: deliberate connector error"))
	}
	return nil
}
func (Source) TaskConfigs(_ context.Context, n int) ([]map[string]string, error) {
	out := make([]map[string]string, n)
	for i := range out {
		out[i] = map[string]string{"task": strconv.Itoa(i)}
	}
	return out, nil
}
func (Source) Stop(context.Context) error { return nil }
func (Source) NewTask() sdk.SourceTask    { return &sourceTask{} }

type sourceTask struct {
	props                         map[string]string
	topic, mode                   string
	next, total, batch, size, big int
	seed                          int64
	tctx                          sdk.SourceTaskContext
	staticRecs                    []*sdk.SourceRecord
}

func atoi(props map[string]string, k string, def int) int {
	if n, err := strconv.Atoi(props[k]); err == nil {
		return n
	}
	return def
}

func (t *sourceTask) Start(_ context.Context, tctx sdk.SourceTaskContext, props map[string]string) error {
	t.tctx, t.props = tctx, props
	t.topic, t.mode = props[SrcTopic], props[SrcMode]
	t.total, t.batch, t.size = atoi(props, SrcRecords, 100), atoi(props, SrcBatch, 10), atoi(props, SrcSize, 1024)
	t.big = atoi(props, SrcBigEvery, 0)
	t.seed = int64(atoi(props, SrcSeed, 1))
	if off := tctx.Offset(map[string]any{"p": "0"}); off != nil {
		t.next = int(off["i"].(float64)) + 1
	}
	tctx.Logger().Info("test source started", "next", t.next)
	return nil
}

func (t *sourceTask) Poll(ctx context.Context) ([]*sdk.SourceRecord, error) {
	switch t.mode {
	case "hang-poll":
		select {} // ignores ctx on purpose
	case "crash-poll":
		if t.next >= t.batch {
			fmt.Fprintln(os.Stderr, "test source: about to crash in Poll")
			panic("test source: deliberate crash in Poll")
		}
	case "fail-poll":
		return nil, fmt.Errorf("test source: deliberate Poll failure")
	}
	if t.next >= t.total {
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
		return nil, nil
	}
	if t.mode == "static" {
		return t.static(), nil
	}
	var out []*sdk.SourceRecord
	for len(out) < t.batch && t.next < t.total {
		key, value, hs, ts := SourceRecordAt(t.seed, t.size, t.big, t.next)
		var k any
		if key != nil {
			k = key
		}
		out = append(out, &sdk.SourceRecord{
			SourcePartition: map[string]any{"p": "0"}, SourceOffset: map[string]any{"i": t.next},
			Topic: t.topic, Partition: int32(t.next % 3), Key: k, Value: value, Headers: hs, Timestamp: ts,
		})
		t.next++
	}
	if t.mode == "log-flood" {
		log, n := t.tctx.Logger(), atoi(t.props, SrcFloodLines, 10)
		for i := range len(out) * n {
			log.Info(FloodMessage, "line", i, "padding", "the quick brown fox jumps over the lazy dog")
		}
	}
	if tx := t.tctx.Transactions(); tx != nil && len(out) > 0 {
		tx.CommitAfter(out[len(out)/2])
		tx.Commit()
	}
	return out, nil
}

// static returns batch records sharing one value buffer, endlessly: the
// cheapest possible source, for measuring the boundary alone.
func (t *sourceTask) static() []*sdk.SourceRecord {
	if t.staticRecs == nil {
		value := make([]byte, t.size)
		recs := make([]sdk.SourceRecord, t.batch)
		t.staticRecs = make([]*sdk.SourceRecord, t.batch)
		part := map[string]any{"p": "0"}
		for i := range recs {
			recs[i] = sdk.SourceRecord{SourcePartition: part, SourceOffset: map[string]any{"i": i}, Topic: t.topic, Value: value}
			t.staticRecs[i] = &recs[i]
		}
	}
	return t.staticRecs
}

func (t *sourceTask) Commit(context.Context, []sdk.SourceOffset) error { return nil }
func (t *sourceTask) Stop(context.Context) error                       { return nil }

// ---- TestSink ----

// Sink config keys.
const (
	SinkOut     = "out.file" // append received records here (EncodeRecord format)
	SinkSleep   = "sleep.ms" // per Put
	SinkReject  = "reject"   // ReportError for records whose value contains this
	SinkFailPut = "fail.put" // "retriable" | "fatal": Put returns that error
	SinkHang    = "hang.put" // "true": Put never returns
	// SinkBorrow "false" makes the task keep the default record lifetime
	// (sdk.RecordBorrower off); by default it borrows: Put writes its
	// records to the file before it returns and keeps none.
	SinkBorrow = "borrow.records"
)

type Sink struct{}

func (Sink) Spec() sdk.Spec {
	return sdk.Spec{Class: "TestSink", Version: Version, Type: sdk.Sink, Summary: "boundary test sink",
		Config: configdef.New().
			Define(configdef.Key{Name: SinkOut, Type: configdef.String, Required: true, Importance: configdef.High}).
			Define(configdef.Key{Name: SinkSleep, Type: configdef.Int, Default: int32(0), Importance: configdef.Low})}
}
func (Sink) Validate(_ context.Context, props map[string]string) []sdk.FieldError {
	if v, ok := props[SinkSleep]; ok {
		if n, err := strconv.Atoi(v); err != nil || n < 0 {
			return []sdk.FieldError{{Key: SinkSleep, Message: "Invalid value " + v + " for configuration sleep.ms: must be a non-negative integer"}}
		}
	}
	return nil
}
func (Sink) Start(context.Context, sdk.ConnectorContext, map[string]string) error { return nil }
func (Sink) TaskConfigs(_ context.Context, n int) ([]map[string]string, error) {
	return make([]map[string]string, n), nil
}
func (Sink) Stop(context.Context) error { return nil }
func (Sink) NewTask() sdk.SinkTask      { return &sinkTask{} }

type sinkTask struct {
	tctx     sdk.SinkTaskContext
	props    map[string]string
	out      *os.File
	sleep    time.Duration
	mu       sync.Mutex
	inflight int
	maxSeen  int
	maxIn    prometheus.Gauge
	puts     prometheus.Counter
}

func (t *sinkTask) Start(_ context.Context, tctx sdk.SinkTaskContext, props map[string]string) error {
	t.tctx, t.props = tctx, props
	if props[SinkOut] != "discard" {
		f, err := os.OpenFile(props[SinkOut], os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		t.out = f
	}
	t.sleep = time.Duration(atoi(props, SinkSleep, 0)) * time.Millisecond
	t.maxIn = prometheus.NewGauge(prometheus.GaugeOpts{Name: "testsink_max_concurrent_puts"})
	t.puts = prometheus.NewCounter(prometheus.CounterOpts{Name: "testsink_puts_total"})
	tctx.Metrics().MustRegister(t.maxIn, t.puts)
	return nil
}

// BorrowsRecords: Put copies what it writes and keeps no record.
func (t *sinkTask) BorrowsRecords() bool { return t.props[SinkBorrow] != "false" }

func (t *sinkTask) Open(context.Context, []sdk.TopicPartition) error  { return nil }
func (t *sinkTask) Close(context.Context, []sdk.TopicPartition) error { return nil }

func (t *sinkTask) Put(ctx context.Context, recs []*sdk.SinkRecord) error {
	t.mu.Lock()
	t.inflight++
	t.maxSeen = max(t.maxSeen, t.inflight)
	t.maxIn.Set(float64(t.maxSeen))
	t.mu.Unlock()
	defer func() { t.mu.Lock(); t.inflight--; t.mu.Unlock() }()
	t.puts.Inc()
	if t.props[SinkHang] == "true" {
		select {}
	}
	if t.sleep > 0 {
		time.Sleep(t.sleep)
	}
	switch t.props[SinkFailPut] {
	case "retriable":
		return sdk.Retriable(fmt.Errorf("test sink: target busy"))
	case "fatal":
		return fmt.Errorf("test sink: target rejected the batch")
	}
	if t.out == nil {
		return nil // discard: benchmarks measure the boundary, not a file
	}
	var buf bytes.Buffer
	for _, r := range recs {
		if rej := t.props[SinkReject]; rej != "" {
			if v, ok := r.Value.([]byte); ok && bytes.Contains(v, []byte(rej)) {
				t.tctx.ReportError(r, fmt.Errorf("test sink: value contains %q", rej))
				continue
			}
		}
		key, _ := r.Key.([]byte)
		val, _ := r.Value.([]byte)
		EncodeRecord(&buf, r.Topic, r.Partition, r.Offset, key, val, r.Headers, r.Timestamp)
	}
	_, err := t.out.Write(buf.Bytes())
	return err
}

func (t *sinkTask) Flush(_ context.Context, offsets map[sdk.TopicPartition]int64) (map[sdk.TopicPartition]int64, error) {
	if t.out == nil {
		return offsets, nil
	}
	return offsets, t.out.Sync()
}
func (t *sinkTask) Stop(context.Context) error {
	if t.out == nil {
		return nil
	}
	return t.out.Close()
}

// EncodeRecord writes one record in the test sink's file format.
func EncodeRecord(w io.Writer, topic string, partition int32, offset int64, key, value []byte, hs []sdk.Header, ts time.Time) {
	var b []byte
	b = binary.AppendUvarint(b, uint64(len(topic)))
	b = append(b, topic...)
	b = binary.AppendVarint(b, int64(partition))
	b = binary.AppendVarint(b, offset)
	b = appendBytes(b, key)
	b = appendBytes(b, value)
	b = binary.AppendUvarint(b, uint64(len(hs)))
	for _, h := range hs {
		b = binary.AppendUvarint(b, uint64(len(h.Key)))
		b = append(b, h.Key...)
		b = appendBytes(b, h.Value)
	}
	var tsv int64
	if !ts.IsZero() {
		tsv = ts.UnixNano()
	}
	b = binary.AppendVarint(b, tsv)
	_, _ = w.Write(b)
}

func appendBytes(b, v []byte) []byte {
	if v == nil {
		return binary.AppendVarint(b, -1)
	}
	b = binary.AppendVarint(b, int64(len(v)))
	return append(b, v...)
}

// Record is one decoded record of the test sink's file.
type Record struct {
	Topic      string
	Partition  int32
	Offset     int64
	Key, Value []byte
	Headers    []sdk.Header
	Timestamp  int64 // unix nanos, 0 = unset
}

// DecodeRecords reads a test sink file.
func DecodeRecords(data []byte) ([]Record, error) {
	var out []Record
	r := bytes.NewReader(data)
	for r.Len() > 0 {
		var rec Record
		var err error
		if rec.Topic, err = readString(r); err != nil {
			return out, err
		}
		p, err := binary.ReadVarint(r)
		if err != nil {
			return out, err
		}
		rec.Partition = int32(p)
		if rec.Offset, err = binary.ReadVarint(r); err != nil {
			return out, err
		}
		if rec.Key, err = readBytes(r); err != nil {
			return out, err
		}
		if rec.Value, err = readBytes(r); err != nil {
			return out, err
		}
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return out, err
		}
		for range n {
			k, err := readString(r)
			if err != nil {
				return out, err
			}
			v, err := readBytes(r)
			if err != nil {
				return out, err
			}
			rec.Headers = append(rec.Headers, sdk.Header{Key: k, Value: v})
		}
		if rec.Timestamp, err = binary.ReadVarint(r); err != nil {
			return out, err
		}
		out = append(out, rec)
	}
	return out, nil
}

func readString(r *bytes.Reader) (string, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return "", err
	}
	b := make([]byte, n)
	_, err = io.ReadFull(r, b)
	return string(b), err
}

func readBytes(r *bytes.Reader) ([]byte, error) {
	n, err := binary.ReadVarint(r)
	if err != nil || n < 0 {
		return nil, err
	}
	b := make([]byte, n)
	_, err = io.ReadFull(r, b)
	return b, err
}
