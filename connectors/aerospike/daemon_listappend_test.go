package aerospike

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
	"github.com/connectd/connectd/connectors/datagen"
	"github.com/connectd/connectd/internal/kafkatest"
)

// The crash test of the daemon pipeline with a list_append sink:
// DatagenSource (counter, exactly-once) → topic → AerospikeSink appending
// each record's seq to a list per key, the `connectd worker` process
// SIGKILLed at random moments while the sink applies records, and
// restarted. Every list ends holding each appended seq exactly once.
func TestDaemonListAppendPipeline(t *testing.T) {
	bootstrap := kafkatest.Bootstrap(t)
	env := newWorkerEnv(t)
	srv := startServer(t, aerofake.Config{})
	const (
		partitions  = 6
		tasks       = 2
		iterations  = 4000
		cardinality = 40
		seed        = 29
	)
	want := map[string][]int64{}
	for task := range tasks {
		for _, seq := range datagen.TaskSeqs(task, tasks, iterations) {
			k := datagen.CounterAt(seed, cardinality, seq).Key
			want[k] = append(want[k], seq)
		}
	}
	for _, seqs := range want {
		slices.Sort(seqs)
	}
	topic := kafkatest.Topic(t, kafkatest.Partitions(partitions))
	d := newDaemon(t, bootstrap, env.catalog)
	srcName, sinkName := kafkatest.UniqueName(t, "src"), kafkatest.UniqueName(t, "sink")
	d.start()
	d.must("POST", "/connectors", map[string]any{"name": srcName, "config": map[string]string{
		"connector.class": "DatagenSource", "tasks.max": fmt.Sprint(tasks),
		datagen.KeyTopic: topic, datagen.KeyQuickstart: datagen.Counter, datagen.KeyIterations: fmt.Sprint(iterations),
		datagen.KeyCardinality: fmt.Sprint(cardinality), datagen.KeySeed: fmt.Sprint(seed), datagen.KeyMaxInterval: "2",
	}}, http.StatusCreated)
	sinkCfg := clusterProps(srv)
	maps.Copy(sinkCfg, map[string]string{
		"connector.class": Class, "tasks.max": fmt.Sprint(tasks), "topics": topic,
		KeySet: srv.Set("lists"), KeyWriteMode: ModeListAppend,
		KeyBinsInclude: "seq",
	})
	d.must("POST", "/connectors", map[string]any{"name": sinkName, "config": sinkCfg}, http.StatusCreated)

	// lists returns every key's appended seqs, sorted, and how many there are.
	lists := func() (map[string][]int64, int) {
		out, n := map[string][]int64{}, 0
		for k := range want {
			r := stored(t, srv, "lists", k)
			if r == nil {
				continue
			}
			l, ok := r.Bins["seq"].([]any)
			if !ok {
				t.Fatalf("%s: bin seq = %#v, want a list", k, r.Bins["seq"])
			}
			for _, e := range l {
				out[k] = append(out[k], e.(int64))
			}
			slices.Sort(out[k])
			n += len(l)
		}
		return out, n
	}
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 6))
	kills := 0
	for kills < 5 {
		_, from := lists()
		if from == tasks*iterations {
			t.Fatalf("everything was applied after %d kills; the test needs more records or quicker kills", kills)
		}
		kafkatest.Eventually(t, 2*time.Minute, func() (bool, string) {
			d.state(sinkName) // fails the test on a FAILED task
			_, n := lists()
			return n > from, "the sink has not appended anything since the restart"
		})
		time.Sleep(time.Duration(r.IntN(800)) * time.Millisecond)
		_, applied := lists()
		d.kill()
		kills++
		t.Logf("kill %d: %d of %d elements appended", kills, applied, tasks*iterations)
		d.start()
	}
	kafkatest.Eventually(t, 4*time.Minute, func() (bool, string) {
		d.state(sinkName)
		_, n := lists()
		if n > tasks*iterations {
			t.Fatalf("%d elements appended, more than the %d produced", n, tasks*iterations)
		}
		return n == tasks*iterations, fmt.Sprintf("%d of %d elements appended", n, tasks*iterations)
	})
	got, _ := lists()
	for k, seqs := range want {
		if !slices.Equal(got[k], seqs) {
			t.Errorf("%s: list holds %v, want each of %v once", k, got[k], seqs)
		}
	}
	t.Logf("%d SIGKILLs of the worker; every list holds each element once", kills)
	d.stop()
}
