package worker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/worker"
	"github.com/connectd/connectd/internal/kafkatest"
)

// gaugeValue reads an unlabelled gauge from reg.
func gaugeValue(t *testing.T, reg prometheus.Gatherer, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}

// TestStartsArePaced assigns many connectors and tasks at once, as a
// worker restart or a failover does, and checks that no more than
// worker.start.concurrency of them start at the same time, that the
// others waited for a slot, and that all of them run in the end.
func TestStartsArePaced(t *testing.T) {
	const (
		limit      = 2
		connectors = 4
		tasks      = 3 // each
	)
	e := newEnv(t)
	topic := kafkatest.Topic(t, kafkatest.Partitions(2))
	cfg := e.config(true)
	cfg.StartConcurrency = limit
	reg := prometheus.NewRegistry()
	cfg.Metrics = reg
	w, st := e.start(cfg)

	// Sample the gauges while everything starts.
	var peakActive, peakWaiting float64
	sampled := make(chan struct{})
	stop := make(chan struct{})
	var once sync.Once
	halt := func() { once.Do(func() { close(stop); <-sampled }) }
	t.Cleanup(halt)
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			mfs, err := reg.Gather()
			if err != nil {
				continue
			}
			for _, mf := range mfs {
				switch mf.GetName() {
				case "connectd_worker_starts_in_progress":
					peakActive = max(peakActive, mf.GetMetric()[0].GetGauge().GetValue())
				case "connectd_worker_starts_waiting":
					peakWaiting = max(peakWaiting, mf.GetMetric()[0].GetGauge().GetValue())
				}
			}
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var ids []worker.TaskID
	for c := range connectors {
		name := fmt.Sprintf("paced-%d", c)
		props := datagenProps(topic, tasks, 1_000_000_000)
		props["max.interval"] = "100"
		// The connector instance starts in the background; its tasks are
		// handed to the worker at once, all of them together.
		if err := w.StartConnector(ctx, name, props, worker.TargetStarted, nil); err != nil {
			t.Fatal(err)
		}
		for i := range tasks {
			id := worker.TaskID{Connector: name, Task: i}
			if err := w.StartTask(ctx, id, props, map[string]string{"datagen.task.index": fmt.Sprint(i), "datagen.task.count": fmt.Sprint(tasks)}, worker.TargetStarted); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		st.waitFor(t, id.String(), worker.StateRunning, time.Minute)
	}
	for c := range connectors {
		st.waitFor(t, fmt.Sprintf("paced-%d", c), worker.StateRunning, time.Minute)
	}
	kafkatest.Eventually(t, 10*time.Second, func() (bool, string) {
		v := gaugeValue(t, reg, "connectd_worker_starts_in_progress")
		return v == 0, fmt.Sprintf("%v starts still in progress after all ran", v)
	})
	halt()
	if peakActive > limit {
		t.Errorf("%v starts ran at once, more than worker.start.concurrency=%d", peakActive, limit)
	}
	if peakActive < 1 || peakWaiting < 1 {
		t.Errorf("peaks: %v starting, %v waiting; want starts to have waited for the %d slots", peakActive, peakWaiting, limit)
	}
	t.Logf("peaks: %v starting at once, %v waiting", peakActive, peakWaiting)
}
