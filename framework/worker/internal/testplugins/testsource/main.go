// Command testsource is a test source plugin (class TestSource): task i
// emits records with seq i, i+n, i+2n, ... (n tasks) up to count records,
// key "k<seq>", value {"seq":<seq>}, source partition {"task":i} and
// offset {"seq":<seq>}. Records can be made to fail on purpose: every
// bad.every-th record (seq % bad.every == bad.every-1) gets bad.value
// instead — "string" (a plain string: a transform expecting a map fails),
// "unconvertible" (a complex number: no converter takes it) or "huge"
// (huge.bytes of data: too large for the producer). poll.size bounds
// records per Poll. With transaction.boundary=connector, commit.every=N
// commits a transaction after every seq%N == N-1 and abort.at=S aborts
// the open transaction right after seq S. With value.schema=order the
// value is instead OrderValue(seq), a struct with logical types for the
// Schema Registry converters' tests.
//
// misbehave makes a task break its process on purpose, so that one binary
// serves well-behaved and misbehaving connectors (misbehave.go):
// die-at-start, exit, garbage, flood or leak.
package main

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/convert"
	"github.com/connectd/connectd/framework/convert/schemaregistry"
	"github.com/connectd/connectd/framework/data"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/plugins"
)

func main() {
	plugins.Serve(func() *connector { return &connector{} }, plugins.WithConverters(convert.NewSet(schemaregistry.Infos()...)))
}

// orderSchema is the schema of value.schema=order records.
var orderSchema = data.Build(data.Struct).Name("test.Order").
	Field("seq", data.PrimitiveSchema(data.Int64)).
	Field("total", data.DecimalSchema(2).MustSchema()).
	Field("day", data.DateSchema().MustSchema()).
	Field("at", data.TimeSchema().MustSchema()).
	Field("ts", data.TimestampSchema().MustSchema()).
	Field("note", data.OptionalSchema(data.String)).
	Field("tags", data.ArrayOf(data.PrimitiveSchema(data.String)).MustSchema()).
	Field("stock", data.MapOf(data.PrimitiveSchema(data.String), data.PrimitiveSchema(data.Int32)).MustSchema()).
	MustSchema()

// orderValue is the value.schema=order record of seq (tests recompute it:
// keep in step with framework/worker's schemaregistry_test.go).
func orderValue(seq int64) *data.StructValue {
	v := data.NewStruct(orderSchema).
		MustPut("seq", seq).
		MustPut("total", data.NewDecimal(seq*100+25, 2)).
		MustPut("day", data.DaysToDate(int32(20000+seq))).
		MustPut("at", data.MillisToTime(int32(seq*1000+7))).
		MustPut("ts", data.MillisToTimestamp(1764720000000+seq)).
		MustPut("tags", []any{"t" + strconv.FormatInt(seq, 10)}).
		MustPut("stock", map[string]any{"s": int32(seq)})
	if seq%2 == 0 {
		v.MustPut("note", "even")
	}
	return v
}

type connector struct{ props map[string]string }

func (c *connector) Spec() sdk.Spec {
	def := configdef.New()
	for _, k := range []configdef.Key{
		{Name: "topic", Type: configdef.String, Required: true},
		{Name: "count", Type: configdef.Long, Default: int64(1000)},
		{Name: "poll.size", Type: configdef.Int, Default: int32(100)},
		{Name: "bad.every", Type: configdef.Int, Default: int32(0)},
		{Name: "bad.value", Type: configdef.String, Default: "string"},
		{Name: "huge.bytes", Type: configdef.Int, Default: int32(2 << 20)},
		{Name: "commit.every", Type: configdef.Long, Default: int64(0)},
		{Name: "abort.at", Type: configdef.Long, Default: int64(-1)},
		{Name: "value.schema", Type: configdef.String, Default: ""},
		{Name: "misbehave", Type: configdef.String, Default: ""},
		{Name: "misbehave.after", Type: configdef.Long, Default: int64(0)},
	} {
		k.Importance = configdef.Medium
		def.Define(k)
	}
	return sdk.Spec{Class: "TestSource", Version: "0.0.1", Type: sdk.Source, Summary: "Test source with deterministic and failing records.",
		Config: def, ExactlyOnce: true, DefinesTransactionBoundaries: true}
}

func (c *connector) Validate(context.Context, map[string]string) []sdk.FieldError { return nil }

func (c *connector) Start(_ context.Context, _ sdk.ConnectorContext, props map[string]string) error {
	c.props = props
	return nil
}

func (c *connector) TaskConfigs(_ context.Context, maxTasks int) ([]map[string]string, error) {
	out := make([]map[string]string, maxTasks)
	for i := range out {
		m := map[string]string{}
		for k, v := range c.props {
			m[k] = v
		}
		m["task.index"], m["task.count"] = strconv.Itoa(i), strconv.Itoa(maxTasks)
		out[i] = m
	}
	return out, nil
}

func (c *connector) Stop(context.Context) error { return nil }

func (c *connector) NewTask() sdk.SourceTask { return &task{} }

type task struct {
	topic           string
	next, step, end int64
	pollSize        int
	badEvery        int64
	badValue        string
	hugeBytes       int
	part            map[string]any
	tx              sdk.TransactionContext
	commitEvery     int64
	abortAt         int64
	orders          bool
	bad             misbehaviour
}

func atoi(s string, def int64) int64 {
	if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
		return n
	}
	return def
}

func (t *task) Start(_ context.Context, tctx sdk.SourceTaskContext, props map[string]string) error {
	idx, n := atoi(props["task.index"], 0), atoi(props["task.count"], 1)
	t.topic = props["topic"]
	t.step = n
	t.end = atoi(props["count"], 1000) * n // seqs below end
	t.pollSize = int(atoi(props["poll.size"], 100))
	t.badEvery = atoi(props["bad.every"], 0)
	t.badValue = props["bad.value"]
	if t.badValue == "" {
		t.badValue = "string"
	}
	t.hugeBytes = int(atoi(props["huge.bytes"], 2<<20))
	t.part = map[string]any{"task": idx}
	t.tx = tctx.Transactions()
	t.commitEvery = atoi(props["commit.every"], 0)
	t.abortAt = atoi(props["abort.at"], -1)
	t.orders = props["value.schema"] == "order"
	t.bad = misbehaviour{log: tctx.Logger(), mode: props["misbehave"], after: atoi(props["misbehave.after"], 0)}
	if err := t.bad.atStart(); err != nil {
		return err
	}
	t.next = idx
	if off := tctx.Offset(t.part); off != nil {
		if f, ok := off["seq"].(float64); ok {
			t.next = int64(f) + n
		}
	}
	return nil
}

func (t *task) Poll(ctx context.Context) ([]*sdk.SourceRecord, error) {
	t.bad.inPoll()
	if t.next >= t.end {
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
		return nil, nil
	}
	var out []*sdk.SourceRecord
	for len(out) < t.pollSize && t.next < t.end {
		seq := t.next
		t.next += t.step
		var value any = map[string]any{"seq": seq}
		var valueSchema *data.Schema
		if t.orders {
			value, valueSchema = orderValue(seq), orderSchema
		}
		if t.badEvery > 0 && seq%t.badEvery == t.badEvery-1 {
			switch t.badValue {
			case "unconvertible":
				value = map[string]any{"seq": seq, "bad": complex(1, 2)}
			case "huge":
				value = map[string]any{"seq": seq, "data": strings.Repeat("x", t.hugeBytes)}
			default:
				value = "bad-" + strconv.FormatInt(seq, 10)
			}
		}
		rec := &sdk.SourceRecord{
			SourcePartition: t.part, SourceOffset: map[string]any{"seq": seq},
			Topic: t.topic, Partition: sdk.AnyPartition,
			Key: "k" + strconv.FormatInt(seq, 10), Value: value, ValueSchema: valueSchema,
		}
		out = append(out, rec)
		t.bad.emitted++
		if t.tx != nil {
			switch {
			case seq == t.abortAt:
				t.tx.AbortAfter(rec)
			case t.commitEvery > 0 && seq%t.commitEvery == t.commitEvery-1:
				t.tx.CommitAfter(rec)
			}
		}
	}
	return out, nil
}

func (t *task) Commit(context.Context, []sdk.SourceOffset) error { return nil }
func (t *task) Stop(context.Context) error                       { return nil }
