package datagen_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/connectd/connectd/connectors/datagen"
	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/framework/data"
	"github.com/connectd/connectd/plugins/host"
	"github.com/connectd/connectd/plugins/plugintest"
)

const pkg = "github.com/connectd/connectd/connectors/datagen/cmd/connectd-datagen"

var jsonValues = chain.Defaults{
	"key.converter":                  "org.apache.kafka.connect.storage.StringConverter",
	"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
	"value.converter.schemas.enable": "false",
}

func config() map[string]string {
	return map[string]string{
		"name": "gen", "connector.class": "DatagenSource", "tasks.max": "2",
		"kafka.topic": "counts", "quickstart": "counter", "max.interval": "0",
		"key.cardinality": "5", "random.seed": "42", "iterations": "1000",
	}
}

func TestSuite(t *testing.T) {
	bin := plugintest.NewBuilder(t.TempDir()).Build(t, pkg)
	unbounded := config()
	unbounded["iterations"] = "0"
	plugintest.SourceSuite{
		Binary:   bin,
		Config:   unbounded,
		Defaults: jsonValues,
		Invalid: []plugintest.Invalid{
			{Name: "missing topic", Props: map[string]string{"kafka.topic": ""}, Key: "kafka.topic"},
			{Name: "unknown quickstart", Props: map[string]string{"quickstart": "weather"}, Key: "quickstart"},
			{Name: "zero cardinality", Props: map[string]string{"key.cardinality": "0"}, Key: "key.cardinality"},
			{Name: "negative iterations", Props: map[string]string{"iterations": "-1"}, Key: "iterations"},
			{Name: "interval not a number", Props: map[string]string{"max.interval": "soon"}, Key: "max.interval"},
		},
		Records: 600,
	}.Run(t)
}

// TestCounterSums runs two tasks to the end through the real plugin and
// checks every record against the pure expected sequence.
func TestCounterSums(t *testing.T) {
	bin := plugintest.NewBuilder(t.TempDir()).Build(t, pkg)
	env := plugintest.Install(t, bin, host.LaunchOptions{})
	p := env.Launch(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := p.StartConnector(ctx, "gen", config())
	if err != nil {
		t.Fatal(err)
	}
	cfgs, err := c.TaskConfigs(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	sums, counts := map[string]int64{}, map[string]int64{}
	seqs := map[int64]bool{}
	for i, cfg := range cfgs {
		task, err := p.StartSourceTask(ctx, host.SourceTaskStart{Connector: "gen", Task: i, Props: cfg, Defaults: jsonValues})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for n < 1000 {
			b, err := task.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range b.Records {
				var v struct {
					Key    string `json:"key"`
					Amount int64  `json:"amount"`
					Seq    int64  `json:"seq"`
				}
				if err := json.Unmarshal(r.Value, &v); err != nil {
					t.Fatalf("value %q: %v", r.Value, err)
				}
				want := datagen.CounterAt(42, 5, v.Seq)
				if string(r.Key) != want.Key || v.Key != want.Key || v.Amount != want.Amount {
					t.Fatalf("seq %d: key %q value %s, want %+v", v.Seq, r.Key, r.Value, want)
				}
				if v.Seq%2 != int64(i) || seqs[v.Seq] {
					t.Fatalf("task %d produced seq %d (duplicate: %v)", i, v.Seq, seqs[v.Seq])
				}
				seqs[v.Seq] = true
				if string(r.SourceOffset) != `{"seq":`+jsonInt(v.Seq)+`}` || string(r.SourcePartition) != `{"task":`+jsonInt(int64(i))+`}` {
					t.Fatalf("partition %s offset %s for seq %d", r.SourcePartition, r.SourceOffset, v.Seq)
				}
				sums[v.Key] += v.Amount
				counts[v.Key]++
				n++
			}
		}
		if err := task.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	}
	wantSums, wantCounts := datagen.ExpectedSums(42, 5, 2, 1000)
	for k, s := range wantSums {
		if sums[k] != s || counts[k] != wantCounts[k] {
			t.Errorf("key %s: sum %d count %d, want %d %d", k, sums[k], counts[k], s, wantCounts[k])
		}
	}
	if len(sums) != len(wantSums) || len(seqs) != 2000 {
		t.Fatalf("%d keys, %d seqs", len(sums), len(seqs))
	}
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

// TestPausedPollsReturnWithinASecond: with max.interval far above a
// second, Poll still returns within about a second (the SDK's rule; the
// host treats a silent Poll as hung), and records keep their contents.
func TestPausedPollsReturnWithinASecond(t *testing.T) {
	ctx := context.Background()
	task := datagen.New().NewTask()
	props := config()
	props["max.interval"] = "5000"
	if err := task.Start(ctx, plugintest.SourceTaskContext{ConnectorName: "gen"}, props); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		start := time.Now()
		recs, err := task.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 1500*time.Millisecond {
			t.Fatalf("Poll took %v", d)
		}
		if len(recs) > 1 {
			t.Fatalf("%d records in one paused poll", len(recs))
		}
	}
}

// TestStructValues: with value.struct=true every value is a Struct of the
// quickstart's named schema whose fields equal the map form's, with the
// logical fields derived from seq; a value that is not a boolean is refused.
func TestStructValues(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		quickstart string
		schema     *data.Schema
		check      func(t *testing.T, seq int64, key string, v *data.StructValue)
	}{
		{datagen.Counter, datagen.CounterSchema, func(t *testing.T, seq int64, key string, v *data.StructValue) {
			want := datagen.CounterAt(42, 5, seq)
			got := map[string]any{}
			for _, f := range []string{"key", "amount", "seq", "created_at", "price"} {
				got[f], _ = v.Get(f)
			}
			price, _ := got["price"].(data.Decimal)
			if key != want.Key || got["key"] != want.Key || got["amount"] != want.Amount || got["seq"] != seq ||
				!got["created_at"].(time.Time).Equal(want.CreatedAt()) || !price.Equal(want.Price()) {
				t.Fatalf("seq %d: key %q value %v, want %+v", seq, key, got, want)
			}
			if want.Price().PlainString() != data.NewDecimal(want.Amount*125, 2).PlainString() {
				t.Fatalf("price %s", want.Price())
			}
		}},
		{datagen.Pageviews, datagen.PageviewSchema, func(t *testing.T, seq int64, key string, v *data.StructValue) {
			want := datagen.PageviewAt(42, 5, seq)
			vt, _ := v.Get("viewtime")
			u, _ := v.Get("userid")
			p, _ := v.Get("pageid")
			if key != want.UserID || vt != want.ViewTime || u != want.UserID || p != want.PageID {
				t.Fatalf("seq %d: %v %v %v, want %+v", seq, vt, u, p, want)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.quickstart, func(t *testing.T) {
			props := config()
			props["quickstart"] = tc.quickstart
			props["value.struct"] = "true"
			task := datagen.New().NewTask()
			if err := task.Start(ctx, plugintest.SourceTaskContext{ConnectorName: "gen"}, props); err != nil {
				t.Fatal(err)
			}
			recs, err := task.Poll(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) == 0 {
				t.Fatal("no records")
			}
			for _, r := range recs {
				v, ok := r.Value.(*data.StructValue)
				if !ok || r.ValueSchema != tc.schema || v.Schema() != tc.schema {
					t.Fatalf("value %T schema %v, want a struct of %v", r.Value, r.ValueSchema, tc.schema)
				}
				tc.check(t, r.SourceOffset["seq"].(int64), r.Key.(string), v)
			}
		})
	}
	bad := config()
	bad["value.struct"] = "yes"
	if errs := datagen.New().Validate(ctx, bad); len(errs) != 1 || errs[0].Key != "value.struct" {
		t.Fatalf("value.struct=yes: %v", errs)
	}
}
