package heartbeat

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/connectors/kafka/mirrorformat"
	"github.com/connectd/connectd/framework/data"
	"github.com/connectd/connectd/framework/sdk"
)

// maxPollWait is the longest one Poll sleeps (the SDK asks Poll to return
// within about a second); a longer interval spans several timer waits.
const maxPollWait = time.Second

// Task emits the heartbeats of one replication flow.
type Task struct {
	cfg       *Config
	key       []byte
	partition map[string]any
	offset    map[string]any
	bytes     *data.Schema
	next      time.Time // when the next heartbeat is due
	timer     *time.Timer
	stop      chan struct{}
	stopOnce  sync.Once
	emitted   prometheus.Counter
	last      prometheus.Gauge
	now       func() time.Time
}

var _ sdk.SourceTask = (*Task)(nil)

// Start implements sdk.SourceTask.
func (t *Task) Start(_ context.Context, tctx sdk.SourceTaskContext, props map[string]string) error {
	cfg, err := ParseConfig(props)
	if err != nil {
		return err
	}
	hb := mirrorformat.Heartbeat{SourceClusterAlias: cfg.SourceAlias, TargetClusterAlias: cfg.TargetAlias}
	if t.key, err = hb.Key(); err != nil {
		return err
	}
	t.cfg = cfg
	t.partition = hb.SourcePartition()
	t.offset = map[string]any{"offset": int64(0)}
	t.bytes = &data.Schema{Type: data.Bytes, Optional: true}
	t.stop = make(chan struct{})
	t.timer = time.NewTimer(time.Hour)
	t.timer.Stop()
	if t.now == nil {
		t.now = time.Now
	}
	t.next = t.now() // the first heartbeat right away: a restarted flow shows up at once
	t.emitted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "connectd_heartbeats_emitted_total", Help: "Heartbeats this task returned to the worker."})
	t.last = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "connectd_heartbeat_last_timestamp_seconds", Help: "Timestamp of the newest heartbeat this task returned."})
	for _, c := range []prometheus.Collector{t.emitted, t.last} {
		if err := tctx.Metrics().Register(c); err != nil {
			return fmt.Errorf("registering heartbeat metrics: %w", err)
		}
	}
	tctx.Logger().Info("emitting heartbeats", "topic", cfg.Topic, "source_alias", cfg.SourceAlias,
		"target_alias", cfg.TargetAlias, "interval", cfg.Interval)
	return nil
}

// Poll implements sdk.SourceTask: it sleeps until the next heartbeat is due
// (at most maxPollWait per call) and then returns it. Beats are due at a
// fixed rate; after a stall (a paused worker) the missed beats are not
// made up in a burst, the next one is an interval after the late one.
func (t *Task) Poll(ctx context.Context) ([]*sdk.SourceRecord, error) {
	if wait := t.next.Sub(t.now()); wait > 0 {
		t.timer.Reset(min(wait, maxPollWait))
		select {
		case <-ctx.Done():
			t.timer.Stop()
			return nil, nil
		case <-t.stop:
			t.timer.Stop()
			return nil, nil
		case <-t.timer.C:
		}
		if t.now().Before(t.next) {
			return nil, nil
		}
	}
	now := t.now()
	t.next = t.next.Add(t.cfg.Interval)
	if !t.next.After(now) {
		t.next = now.Add(t.cfg.Interval)
	}
	hb := mirrorformat.Heartbeat{SourceClusterAlias: t.cfg.SourceAlias, TargetClusterAlias: t.cfg.TargetAlias, Timestamp: now.UnixMilli()}
	t.emitted.Inc()
	t.last.Set(float64(hb.Timestamp) / 1000)
	return []*sdk.SourceRecord{{
		SourcePartition: t.partition,
		SourceOffset:    t.offset,
		Topic:           t.cfg.Topic,
		Partition:       0,
		KeySchema:       t.bytes,
		Key:             t.key,
		ValueSchema:     t.bytes,
		Value:           hb.Value(),
		Timestamp:       time.UnixMilli(hb.Timestamp),
	}}, nil
}

// Commit implements sdk.SourceTask: heartbeats have no upstream to advance.
func (t *Task) Commit(context.Context, []sdk.SourceOffset) error { return nil }

// Stop implements sdk.SourceTask; it wakes a sleeping Poll.
func (t *Task) Stop(context.Context) error {
	if t.stop != nil {
		t.stopOnce.Do(func() { close(t.stop) })
	}
	return nil
}
