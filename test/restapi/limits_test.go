package restapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/internal/kafkatest"
)

// The admission limits of the cluster below: small, so that reaching them
// costs the shared test machine little.
const (
	tasksLimit     = 40
	workerTasks    = 30
	configMaxBytes = 4096
	pluginProcs    = 2
)

// TestAdmissionLimits: without limits, POST /connectors with
// "tasks.max":"100000" answers 201 and the worker melts (thousands of
// threads, DELETE timing out), and again after a restart because the
// config topic replays it. Every part of that path is bounded.
func TestAdmissionLimits(t *testing.T) {
	c := newCluster(t, 1, map[string]string{
		"connector.tasks.max.limit":       fmt.Sprint(tasksLimit),
		"worker.tasks.max":                fmt.Sprint(workerTasks),
		"connector.config.max.bytes":      fmt.Sprint(configMaxBytes),
		"worker.plugin.processes.max":     fmt.Sprint(pluginProcs),
		"task.restart.backoff.initial.ms": "200",
		"task.restart.backoff.max.ms":     "1000",
	})
	base := c.workers[0].url
	topic := kafkatest.Topic(t)
	cl := c.client(0)
	ctx := context.Background()
	datagen := func(name string, tasks int) map[string]string {
		return map[string]string{"name": name, "connector.class": datagenClass, "tasks.max": fmt.Sprint(tasks),
			"kafka.topic": topic, "max.interval": "1000"}
	}
	listed := func() string {
		t.Helper()
		code, _, body := raw(t, "GET", base+"/connectors", "", true)
		if code != 200 {
			t.Fatalf("list: %d %s", code, body)
		}
		return strings.TrimSpace(body)
	}
	healthy := func() {
		t.Helper()
		h, err := cl.Health(ctx)
		if err != nil || h.Status != "healthy" {
			t.Fatalf("worker not healthy: %+v %v\n%s", h, err, tail(c.workers[0].log))
		}
	}
	// deleteWithin deletes a connector and fails unless the answer is 204
	// within bound (generous: it is an outcome, not a speed target).
	deleteWithin := func(name string, bound time.Duration) {
		t.Helper()
		start := time.Now()
		code, _, body := raw(t, "DELETE", base+"/connectors/"+url.PathEscape(name), "", true)
		if took := time.Since(start); code != 204 || took > bound {
			t.Fatalf("DELETE %s: %d %s after %v (bound %v)", name, code, body, took, bound)
		}
		eventually(t, 30*time.Second, name+" gone", func() (bool, string) {
			_, err := cl.Status(ctx, name)
			return err != nil && strings.Contains(err.Error(), "404"), fmt.Sprint(err)
		})
	}

	t.Run("writes beyond a limit are 400 naming it", func(t *testing.T) {
		big := datagen("big", 1)
		big["padding"] = strings.Repeat("x", configMaxBytes)
		overflow := datagen("huge", 1)
		overflow["tasks.max"] = "99999999999999999999999999"
		patch, _ := json.Marshal(map[string]string{"tasks.max": "100000"})
		for _, tc := range []struct {
			what, method, path, body string
			parts                    []string
		}{
			{"create with tasks.max=100000", "POST", "/connectors",
				mustJSON(map[string]any{"name": "huge", "config": datagen("huge", 100000)}), []string{"tasks.max=100000", fmt.Sprintf("connector.tasks.max.limit=%d", tasksLimit)}},
			{"put with tasks.max one above", "PUT", "/connectors/huge/config",
				mustJSON(datagen("huge", tasksLimit+1)), []string{fmt.Sprintf("connector.tasks.max.limit=%d", tasksLimit)}},
			{"put with tasks.max beyond any integer", "PUT", "/connectors/huge/config",
				mustJSON(overflow), []string{fmt.Sprintf("connector.tasks.max.limit=%d", tasksLimit)}},
			{"create with an oversized config", "POST", "/connectors",
				mustJSON(map[string]any{"name": "big", "config": big}), []string{fmt.Sprintf("connector.config.max.bytes=%d", configMaxBytes)}},
		} {
			code, _, body := raw(t, tc.method, base+tc.path, tc.body, true)
			wantError(t, tc.what, code, body, 400, tc.parts...)
		}
		if got := listed(); got != "[]" {
			t.Fatalf("a refused write left connectors behind: %s", got)
		}
		// An update of an existing connector beyond the limit changes nothing.
		if _, err := cl.Create(ctx, "small", datagen("small", 1), ""); err != nil {
			t.Fatal(err)
		}
		code, _, body := raw(t, "PATCH", base+"/connectors/small/config", string(patch), true)
		wantError(t, "patch to tasks.max=100000", code, body, 400, fmt.Sprintf("connector.tasks.max.limit=%d", tasksLimit))
		cfg, err := cl.Config(ctx, "small")
		if err != nil || cfg["tasks.max"] != "1" {
			t.Fatalf("config after a refused patch: %v %v", cfg, err)
		}
		waitState(t, cl, "small", "RUNNING", 1, "RUNNING")
		deleteWithin("small", 20*time.Second)
		healthy()
	})

	t.Run("a stored config beyond a limit fails its connector", func(t *testing.T) {
		// As an older version's leader would have written it: the config
		// and more task configs than the limit, committed.
		name := "replayed"
		cfg := datagen(name, 100000)
		recs := [][2]string{{"connector-" + name, mustJSON(map[string]any{"properties": cfg})}}
		n := tasksLimit + 10
		for i := 0; i < n; i++ {
			recs = append(recs, [2]string{fmt.Sprintf("task-%s-%d", name, i), mustJSON(map[string]any{"properties": map[string]string{"task.id": fmt.Sprint(i)}})})
		}
		recs = append(recs, [2]string{"commit-" + name, mustJSON(map[string]int{"tasks": n})})
		produceConfigRecords(t, c.bootstrap, c.group+"-configs", recs)

		var st api.ConnectorStateInfo
		eventually(t, 60*time.Second, name+" FAILED naming the limit", func() (bool, string) {
			var err error
			st, err = cl.Status(ctx, name)
			if err != nil {
				return false, err.Error()
			}
			return st.Connector.State == "FAILED" && strings.Contains(st.Connector.Trace, fmt.Sprintf("connector.tasks.max.limit=%d", tasksLimit)), fmt.Sprintf("%+v", st)
		})
		// None of its tasks is assigned, so none starts: the stored task
		// configs are reported UNASSIGNED, on no worker.
		for _, ts := range st.Tasks {
			if ts.State != "UNASSIGNED" || ts.WorkerID != "" {
				t.Fatalf("task %d of an over-limit connector: %+v, want UNASSIGNED on no worker", ts.ID, ts)
			}
		}
		healthy()
		deleteWithin(name, 20*time.Second)
		healthy()
	})

	t.Run("delete during a start storm", func(t *testing.T) {
		if _, err := cl.Create(ctx, "storm", datagen("storm", tasksLimit), ""); err != nil {
			t.Fatal(err)
		}
		// Once the tasks are being started (the first one has a status).
		eventually(t, 60*time.Second, "storm tasks starting", func() (bool, string) {
			st, err := cl.Status(ctx, "storm")
			return err == nil && len(st.Tasks) > 0, fmt.Sprintf("%+v %v", st, err)
		})
		deleteWithin("storm", 20*time.Second)
		healthy()
	})

	t.Run("tasks beyond worker.tasks.max are FAILED naming it", func(t *testing.T) {
		name := "wide"
		if _, err := cl.Create(ctx, name, datagen(name, tasksLimit), ""); err != nil {
			t.Fatal(err)
		}
		eventually(t, 90*time.Second, "running and refused tasks", func() (bool, string) {
			st, err := cl.Status(ctx, name)
			if err != nil {
				return false, err.Error()
			}
			running, refused := 0, 0
			for _, ts := range st.Tasks {
				switch {
				case ts.State == "RUNNING":
					running++
				case ts.State == "FAILED" && strings.Contains(ts.Trace, fmt.Sprintf("worker.tasks.max=%d", workerTasks)):
					refused++
				}
			}
			return running == workerTasks && refused == tasksLimit-workerTasks, fmt.Sprintf("running %d refused %d of %d", running, refused, len(st.Tasks))
		})
		healthy()
		deleteWithin(name, 20*time.Second)
	})

	t.Run("connectors beyond worker.plugin.processes.max are FAILED naming it", func(t *testing.T) {
		names := []string{"p1", "p2", "p3"}
		// Connectors of one plugin share a process; each of these asks
		// for its own, so that the third needs one process more.
		isolated := func(n string) map[string]string {
			c := datagen(n, 1)
			c["plugin.isolation"] = "connector"
			return c
		}
		for _, n := range names[:pluginProcs] {
			if _, err := cl.Create(ctx, n, isolated(n), ""); err != nil {
				t.Fatal(err)
			}
			waitState(t, cl, n, "RUNNING", 1, "RUNNING")
		}
		if _, err := cl.Create(ctx, "p3", isolated("p3"), ""); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, "p3 FAILED naming the limit", func() (bool, string) {
			st, err := cl.Status(ctx, "p3")
			return err == nil && st.Connector.State == "FAILED" && strings.Contains(st.Connector.Trace, fmt.Sprintf("worker.plugin.processes.max=%d", pluginProcs)),
				fmt.Sprintf("%+v %v", st, err)
		})
		// A freed slot is taken by the automatic restart.
		deleteWithin("p1", 20*time.Second)
		waitState(t, cl, "p3", "RUNNING", 1, "RUNNING")
		deleteWithin("p2", 20*time.Second)
		deleteWithin("p3", 20*time.Second)
		healthy()
	})
}

// SIGTERM while the worker starts as many tasks as it may: it exits,
// cleanly, within task.shutdown.graceful.timeout.ms plus the documented
// margin (10 s) and the abandoned tasks' grace (5 s).
func TestSIGTERMDuringStartStorm(t *testing.T) {
	const shutdownMS = 2000
	c := newCluster(t, 1, map[string]string{
		"connector.tasks.max.limit":         fmt.Sprint(tasksLimit),
		"worker.tasks.max":                  fmt.Sprint(tasksLimit),
		"task.shutdown.graceful.timeout.ms": fmt.Sprint(shutdownMS),
	})
	w := c.workers[0]
	cl := c.client(0)
	topic := kafkatest.Topic(t)
	if _, err := cl.Create(context.Background(), "storm", map[string]string{"connector.class": datagenClass,
		"tasks.max": fmt.Sprint(tasksLimit), "kafka.topic": topic, "max.interval": "1000"}, ""); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "storm tasks starting", func() (bool, string) {
		st, err := cl.Status(context.Background(), "storm")
		return err == nil && len(st.Tasks) > 0, fmt.Sprintf("%+v %v", st, err)
	})
	start := time.Now()
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	bound := shutdownMS*time.Millisecond + 10*time.Second + 5*time.Second
	select {
	case err := <-w.done:
		w.done <- err // for the cluster's cleanup
		if err != nil {
			t.Fatalf("worker exited with %v after SIGTERM\n%s", err, tail(w.log))
		}
		t.Logf("worker exited %v after SIGTERM", time.Since(start).Round(time.Millisecond))
	case <-time.After(bound):
		t.Fatalf("worker still running %v after SIGTERM\n%s", bound, tail(w.log))
	}
}

// produceConfigRecords writes records straight into the config topic,
// without a transaction, as a hand-written record or an older version
// would be found there.
func produceConfigRecords(t *testing.T, bootstrap, topic string, recs [][2]string) {
	t.Helper()
	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": bootstrap, "enable.idempotence": true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	done := make(chan kafka.Event, len(recs))
	for _, r := range recs {
		if err := p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: 0},
			Key: []byte(r[0]), Value: []byte(r[1])}, done); err != nil {
			t.Fatal(err)
		}
	}
	for range recs {
		select {
		case e := <-done:
			if m, ok := e.(*kafka.Message); !ok || m.TopicPartition.Error != nil {
				t.Fatalf("producing to %s: %v", topic, e)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("producing to %s: no delivery report in 30s", topic)
		}
	}
}
