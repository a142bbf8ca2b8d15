package herder

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/herder/clusterstate"
	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/internal/kafkatest"
)

// silentRuntime runs what it is given but reports no status, like a
// worker whose first status records have not reached the status topic.
type silentRuntime struct{ *recordRuntime }

func (r silentRuntime) StartConnector(_ context.Context, name string, _ map[string]string, target RuntimeTarget, _ func(string)) error {
	r.mu.Lock()
	r.connectors[name] = target
	r.mu.Unlock()
	return nil
}

func (r silentRuntime) StartTask(_ context.Context, id TaskID, _, taskProps map[string]string, _ RuntimeTarget) error {
	r.mu.Lock()
	r.tasks[id] = taskProps
	r.mu.Unlock()
	return nil
}

// startWith starts one more worker of c driving rt.
func (c *cluster) startWith(rt Runtime, rec *recordRuntime) *Herder {
	c.t.Helper()
	cfg := c.base
	cfg.WorkerURL = fmt.Sprintf("http://127.0.0.1:%d", 18000+len(c.herders))
	cfg.Logger = c.testLogger(strconv.Itoa(len(c.herders)))
	cfg.Metrics = prometheus.NewRegistry()
	h, err := New(cfg, c.client)
	if err != nil {
		c.t.Fatal(err)
	}
	rec.h = h
	c.client.mu.Lock()
	c.client.byURL[cfg.WorkerURL] = h
	c.client.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.Start(ctx, rt); err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h.Stop(ctx)
	})
	c.herders = append(c.herders, h)
	return h
}

func waitHealthy(t *testing.T, h *Herder) {
	t.Helper()
	kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
		hl := h.Health(context.Background())
		return hl.Status == api.HealthHealthy, fmt.Sprintf("%+v", hl)
	})
}

// A connector in the config snapshot whose status record has not arrived
// answers UNASSIGNED (with its assigned worker once known), never 404.
func TestStatusOfAConnectorNotReportedYetIsUnassigned(t *testing.T) {
	c := newCluster(t, false)
	rec := newRecordRuntime()
	h := c.startWith(silentRuntime{rec}, rec)
	waitHealthy(t, h)
	ctx := ctxT(t)
	if _, _, err := h.PutConnectorConfig(ctx, "c", map[string]string{"connector.class": "Source", "tasks.max": "2"}, false, ""); err != nil {
		t.Fatal(err)
	}
	st, err := h.ConnectorStatus(ctx, "c")
	if err != nil {
		t.Fatalf("status right after create: %v", err)
	}
	if st.Name != "c" || st.Connector.State != StateUnassigned || st.Type != api.TypeSource {
		t.Fatalf("status right after create: %+v", st)
	}
	me := WorkerID(h.cfg.WorkerURL)
	kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
		st, err := h.ConnectorStatus(ctx, "c")
		if err != nil {
			return false, err.Error()
		}
		if st.Connector.State != StateUnassigned || st.Connector.WorkerID != me || len(st.Tasks) != 2 {
			return false, fmt.Sprintf("%+v", st)
		}
		for i, ts := range st.Tasks {
			if ts.ID != i || ts.State != StateUnassigned || ts.WorkerID != me {
				return false, fmt.Sprintf("%+v", st)
			}
		}
		return true, ""
	})
	ts, err := h.TaskStatus(ctx, api.ConnectorTaskID{Connector: "c", Task: 1})
	if err != nil || ts.State != StateUnassigned || ts.WorkerID != me {
		t.Fatalf("task status: %+v %v", ts, err)
	}
	var nf *NotFoundError
	for _, err := range []error{
		func() error { _, err := h.ConnectorStatus(ctx, "nope"); return err }(),
		func() error { _, err := h.TaskStatus(ctx, api.ConnectorTaskID{Connector: "c", Task: 2}); return err }(),
		func() error { _, err := h.TaskStatus(ctx, api.ConnectorTaskID{Connector: "nope", Task: 0}); return err }(),
	} {
		if !errors.As(err, &nf) {
			t.Errorf("unknown connector or task: %v, want NotFoundError", err)
		}
	}
}

// Once a write returned on one worker, every other worker answers with it.
func TestWritesAreVisibleOnEveryWorkerOnceReturned(t *testing.T) {
	c := newCluster(t, false)
	a, _ := c.add()
	b, _ := c.add()
	l := c.waitLeader()
	other := a
	if l == a {
		other = b
	}
	waitHealthy(t, other)
	ctx := ctxT(t)
	for i := range 5 {
		name := fmt.Sprintf("c%d", i)
		if _, _, err := l.PutConnectorConfig(ctx, name, map[string]string{"connector.class": "Source", "tasks.max": "1"}, false, ""); err != nil {
			t.Fatal(err)
		}
		if info, err := other.ConnectorInfo(ctx, name); err != nil || info.Name != name {
			t.Fatalf("info of %s on the other worker right after create: %+v %v", name, info, err)
		}
		if _, err := other.ConnectorStatus(ctx, name); err != nil {
			t.Fatalf("status of %s on the other worker right after create: %v", name, err)
		}
		// Pause through the other worker, read back on the leader.
		if err := other.PauseConnector(ctx, name); err != nil {
			t.Fatalf("pause of %s on the other worker right after create: %v", name, err)
		}
		snap, err := l.snapshot(ctx)
		if err != nil || snap.Target(name) != clusterstate.TargetPaused {
			t.Fatalf("target of %s on the leader right after pause: %v %v", name, snap.Target(name), err)
		}
	}

	// One request's reads share one read of the config topic's end, as a
	// REST listing with expand=status&expand=info does.
	scoped := WithReadScope(ctx)
	before := other.configs.endQueries.Load()
	names, err := other.Connectors(scoped)
	if err != nil || len(names) != 5 {
		t.Fatalf("Connectors: %v %v", names, err)
	}
	for _, n := range names {
		if _, err := other.ConnectorStatus(scoped, n); err != nil {
			t.Fatal(err)
		}
		if _, err := other.ConnectorInfo(scoped, n); err != nil {
			t.Fatal(err)
		}
	}
	if got := other.configs.endQueries.Load() - before; got != 1 {
		t.Errorf("a listing of %d connectors with status and info queried the config topic's end %d times in one read scope, want 1", len(names), got)
	}
	// Without a scope every call reads to the end.
	before = other.configs.endQueries.Load()
	for _, n := range names {
		if _, err := other.ConnectorInfo(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if got := other.configs.endQueries.Load() - before; got < int64(len(names)) {
		t.Errorf("%d unscoped reads queried the end %d times, want one each", len(names), got)
	}
}

func TestHealthFollowsTheWorkersLife(t *testing.T) {
	c := newCluster(t, false)
	cfg := c.base
	cfg.WorkerURL = "http://127.0.0.1:18100"
	cfg.Logger = c.testLogger("0")
	h, err := New(cfg, c.client)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h.Stop(ctx)
	})
	ctx := ctxT(t)
	if hl := h.Health(ctx); hl.Status != api.HealthStarting || !strings.Contains(hl.Message, "starting") {
		t.Fatalf("before Start: %+v", hl)
	}
	// Requests before start-up are conflicts to retry, not errors.
	var rb *RebalanceError
	if _, err := h.Connectors(ctx); !errors.As(err, &rb) {
		t.Fatalf("Connectors before Start: %v, want RebalanceError", err)
	}
	if _, err := h.ConnectorStatus(ctx, "c"); !errors.As(err, &rb) {
		t.Fatalf("ConnectorStatus before Start: %v, want RebalanceError", err)
	}
	rt := newRecordRuntime()
	rt.h = h
	if err := h.Start(ctx, rt); err != nil {
		t.Fatal(err)
	}
	waitHealthy(t, h)
	// From the first healthy answer on, a create succeeds.
	if _, _, err := h.PutConnectorConfig(ctx, "c", map[string]string{"connector.class": "Source", "tasks.max": "1"}, false, ""); err != nil {
		t.Fatalf("create once healthy: %v", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Stop(sctx); err != nil {
		t.Fatal(err)
	}
	if hl := h.Health(ctx); hl.Status != api.HealthUnhealthy || !strings.Contains(hl.Message, "shutting down") {
		t.Fatalf("after Stop: %+v", hl)
	}
	if _, err := h.Connectors(ctx); !errors.As(err, &rb) || !strings.Contains(rb.Msg, "shutting down") {
		t.Fatalf("Connectors after Stop: %v, want RebalanceError naming the shutdown", err)
	}
}

func TestTransientKafkaErrors(t *testing.T) {
	live := context.Background()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	unknownPartition := kafka.NewError(kafka.ErrUnknownPartition, "Local: Unknown partition", false)
	for _, tc := range []struct {
		name      string
		parent    context.Context
		err       error
		transient bool
	}{
		{"unknown partition, wrapped", live, fmt.Errorf("config topic x end offset: %w", unknownPartition), true},
		{"all brokers down", live, kafka.NewError(kafka.ErrAllBrokersDown, "Local: All broker connections are down", false), true},
		{"leader not available", live, kafka.NewError(kafka.ErrLeaderNotAvailable, "Broker: Leader not available", false), true},
		{"fatal", live, kafka.NewError(kafka.ErrFenced, "Local: This instance has been fenced by a newer instance", true), false},
		{"record too large", live, kafka.NewError(kafka.ErrMsgSizeTooLarge, "Broker: Message size too large", false), false},
		{"internal bound expired", live, fmt.Errorf("reading: %w", context.DeadlineExceeded), true},
		{"request expired", done, fmt.Errorf("reading: %w", context.DeadlineExceeded), false},
		{"not found", live, &NotFoundError{Msg: "Connector c not found"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := transient(tc.parent, tc.err)
			var te *TransientError
			if errors.As(got, &te) != tc.transient {
				t.Fatalf("transient(%v) = %#v", tc.err, got)
			}
			if tc.transient && (!errors.Is(got, tc.err) || te.RetryAfter <= 0 || !strings.Contains(te.Msg, tc.err.Error()) || !strings.Contains(te.Msg, "retry")) {
				t.Fatalf("transient(%v) = %+v", tc.err, te)
			}
			if !tc.transient && got != tc.err {
				t.Fatalf("transient(%v) changed it to %v", tc.err, got)
			}
		})
	}
	if transient(live, nil) != nil {
		t.Fatal("transient(nil) != nil")
	}
}
