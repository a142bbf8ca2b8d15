package aerospike

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/plugins/host"
	"github.com/connectd/connectd/plugins/plugintest"
)

const pluginPkg = "github.com/connectd/connectd/connectors/aerospike/cmd/connectd-aerospike-sink"

func buildPlugin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the plugin binary; skipped with -short")
	}
	return builder.Build(t, pluginPkg)
}

// jsonDefaults are worker-level converter settings: string keys, schemaless
// JSON values.
var jsonDefaults = chain.Defaults{
	"key.converter":                  "org.apache.kafka.connect.storage.StringConverter",
	"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
	"value.converter.schemas.enable": "false",
}

func rawJSON(topic string, p int32, off int64, key string, v any) chain.Raw {
	r := chain.Raw{Topic: topic, Partition: p, Offset: off, Key: []byte(key), Timestamp: time.UnixMilli(1)}
	if v != nil {
		r.Value, _ = json.Marshal(v)
	}
	return r
}

func TestPluginSuite(t *testing.T) {
	bin := buildPlugin(t)
	srv := startServer(t, aerofake.Config{})
	props := baseProps(srv, KeyWriteMode, ModeIncrement, "name", "suite", "connector.class", Class, "topics", "suite")
	plugintest.SinkSuite{
		Binary:   bin,
		Config:   props,
		Defaults: jsonDefaults,
		Invalid: []plugintest.Invalid{
			{Name: "unknown namespace", Props: map[string]string{KeyNamespace: "nope"}, Key: KeyNamespace},
			{Name: "unreachable cluster", Props: map[string]string{KeyHosts: closedPort(t)}, Key: KeyHosts},
			{Name: "bad host syntax", Props: map[string]string{KeyHosts: "::1"}, Key: KeyHosts},
			{Name: "bin name too long", Props: map[string]string{KeyBinsRename: "a:averyveryverylongbin"}, Key: KeyBinsRename},
			{Name: "bad write mode", Props: map[string]string{KeyWriteMode: "upsert"}, Key: KeyWriteMode},
			{Name: "value field key without field", Props: map[string]string{KeyKeySource: KeySourceValueField}, Key: KeyKeyField},
			{Name: "missing namespace", Props: map[string]string{KeyNamespace: ""}, Key: KeyNamespace},
		},
		Record: func(i int) chain.Raw {
			return rawJSON("suite", int32(i%3), int64(i/3), keyName(i%10), map[string]any{"n": 1, "pad": string(make([]byte, 0, 1))})
		},
		Verify: func(t *testing.T, put []chain.Raw) {
			want := map[string]int64{}
			for _, r := range put {
				want[string(r.Key)]++
			}
			for k, n := range want {
				got := stored(t, srv, "s", k)
				if got == nil || got.Bins["n"] != n {
					t.Errorf("key %s = %v, want n=%d", k, got, n)
				}
			}
		},
	}.Run(t)
}

// Bad records crossing the plugin boundary come back as failures with the
// stage and the Aerospike result code in the message.
func TestPluginReportsFailures(t *testing.T) {
	bin := buildPlugin(t)
	srv := startServer(t, aerofake.Config{})
	env := plugintest.Install(t, bin, host.LaunchOptions{})
	p := env.Launch(t)
	ctx := context.Background()
	task, err := p.StartSinkTask(ctx, host.SinkTaskStart{Connector: "c", Props: baseProps(srv, KeyWriteMode, ModeIncrement), Defaults: jsonDefaults})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = task.Stop(ctx) }()
	res, err := task.Put(ctx, []chain.Raw{
		rawJSON("t", 0, 0, "a", map[string]any{"n": "text"}),
		rawJSON("t", 0, 1, "a", map[string]any{"n": 1}),
		{Topic: "t", Partition: 0, Offset: 2, Key: []byte("b"), Value: []byte("{not json")},
		rawJSON("t", 0, 3, "", map[string]any{"n": 1}),
		rawJSON("t", 0, 4, "c", map[string]any{"n": 1}),
	})
	if err != nil {
		t.Fatal(err)
	}
	byIndex := map[int]host.SinkFailure{}
	for _, f := range res.Failures {
		byIndex[f.Index] = f
	}
	want := map[int]struct {
		stage sdk.Stage
		text  string
	}{
		1: {sdk.StageTaskPut, "result code 12 BIN_TYPE_ERROR"},
		2: {sdk.StageValueConverter, ""},
		3: {sdk.StageTaskPut, "record key is empty"},
	}
	if len(byIndex) != len(want) {
		t.Fatalf("failures = %+v", res.Failures)
	}
	for i, w := range want {
		f, ok := byIndex[i]
		if !ok || f.Stage != w.stage || !strings.Contains(f.Message, w.text) {
			t.Errorf("failure %d = %+v, want stage %s with %q", i, f, w.stage, w.text)
		}
	}
	if got := stored(t, srv, "s", "c"); got == nil || got.Bins["n"] != int64(1) {
		t.Fatalf("c = %v", got)
	}
}

// Two plugin processes apply the same partitions: the zombie is frozen
// with SIGSTOP at random moments, mostly in the middle of a put, while
// the other process applies the batches it was working on; then it is
// resumed. Every counter still equals the exact sum.
func TestZombiePluginSIGSTOP(t *testing.T) {
	bin := buildPlugin(t)
	srv := startServer(t, aerofake.Config{})
	env := plugintest.Install(t, bin, host.LaunchOptions{CallTimeout: time.Minute})
	zombieProc := env.Launch(t)
	liveProc := env.Launch(t)
	ctx := context.Background()
	props := baseProps(srv, KeyWriteMode, ModeIncrement, KeyRetryAttempts, "1000")
	start := func(p *host.Process, task int) *host.SinkTask {
		st, err := p.StartSinkTask(ctx, host.SinkTaskStart{Connector: "z", Task: task, Props: props, Defaults: jsonDefaults})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Stop(context.Background()) })
		return st
	}
	zombie, live := start(zombieProc, 0), start(liveProc, 1)

	// 6 partitions, 300 records each, 12 keys; batches of up to 40 per partition.
	r := rand.New(rand.NewPCG(5, 6))
	want := map[string]int64{}
	last := map[string]map[string]int64{}
	var parts [6][]chain.Raw
	for p := range parts {
		for o := range 300 {
			k := keyName(r.IntN(12))
			amt := int64(r.IntN(50) + 1)
			parts[p] = append(parts[p], rawJSON("z", int32(p), int64(o), k, map[string]any{"count": amt}))
			want[k] += amt
			if last[k] == nil {
				last[k] = map[string]int64{}
			}
			last[k][fmt.Sprintf("z-%d", p)] = int64(o)
		}
	}
	var batches [][]chain.Raw
	for i := 0; i < 300; i += 20 {
		var b []chain.Raw
		for p := range parts {
			b = append(b, parts[p][i:i+20]...)
		}
		batches = append(batches, b)
	}

	// Slow reads make the zombie spend most of a put between reading the
	// positions and writing, where a freeze hurts most.
	if f := fakeOnly(t, srv, "slowed reads; the cluster's own latency stands in"); f != nil {
		f.SetLatency(aerofake.OpRead, 2*time.Millisecond)
	}
	var zombieAt atomic.Int64
	zombieDone := make(chan error, 1)
	go func() {
		for i, b := range batches {
			zombieAt.Store(int64(i))
			res, err := zombie.Put(ctx, b)
			if err != nil {
				zombieDone <- err
				return
			}
			if len(res.Failures) > 0 {
				zombieDone <- fmt.Errorf("zombie failures: %+v", res.Failures[0])
				return
			}
		}
		zombieDone <- nil
	}()
	stops := 0
	for running := true; running; {
		select {
		case err := <-zombieDone:
			zombieDone <- err
			running = false
			continue
		case <-time.After(time.Duration(5+r.IntN(30)) * time.Millisecond):
		}
		if err := syscall.Kill(zombieProc.Pid(), syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		stops++
		// While the zombie is frozen, the live task applies the batch the
		// zombie is in the middle of, and maybe a few after it.
		next := int(zombieAt.Load())
		for end := min(next+1+r.IntN(2), len(batches)); next < end; next++ {
			res, err := live.Put(ctx, batches[next])
			if err != nil || len(res.Failures) > 0 {
				_ = syscall.Kill(zombieProc.Pid(), syscall.SIGCONT)
				t.Fatalf("live put: %v %+v", err, res.Failures)
			}
		}
		if err := syscall.Kill(zombieProc.Pid(), syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-zombieDone; err != nil {
		t.Fatal(err)
	}
	for k, n := range want {
		got := stored(t, srv, "s", k)
		if got == nil {
			t.Errorf("%s: missing", k)
			continue
		}
		if got.Bins["count"] != n {
			t.Errorf("%s: count = %v, want %d", k, got.Bins["count"], n)
		}
		pos := positionsOf(t, got, "kafka_pos")
		if !maps.Equal(pos, last[k]) {
			t.Errorf("%s: positions %v, want %v", k, pos, last[k])
		}
	}
	conflicts := pluginCounter(t, zombieProc, "connectd_aerospike_sink_generation_conflicts_total") +
		pluginCounter(t, liveProc, "connectd_aerospike_sink_generation_conflicts_total")
	dups := pluginCounter(t, zombieProc, "connectd_aerospike_sink_duplicates_skipped_total")
	t.Logf("%d SIGSTOPs, %v generation conflicts, zombie skipped %v duplicates", stops, conflicts, dups)
	switch {
	case conflicts > 0 && dups > 0:
	case srv.External():
		// Without the test server's slowed reads a fast cluster may
		// answer before a freeze lands; the sums above still hold.
		t.Log("the race was not provoked against the external cluster (no conflict or no duplicate); the exact sums were checked")
	case conflicts == 0:
		t.Error("no generation conflict happened: the zombie never raced the live task")
	default:
		t.Error("the zombie skipped no duplicates")
	}
}

func pluginCounter(t *testing.T, p *host.Process, name string) float64 {
	t.Helper()
	mfs, err := p.Gather(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += counterValue(m)
		}
	}
	return sum
}

func counterValue(m *dto.Metric) float64 {
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	return 0
}
