package worker

import (
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// startGate bounds how many connector instances and task incarnations
// start at once on this worker (Config.StartConcurrency). A start holds a
// slot from before its plugin process and Kafka clients are set up until
// it runs (RUNNING or PAUSED) or fails, so that after a restart, a
// rebalance or a failover hundreds of assigned starts launch their
// processes a few at a time instead of all at once. The herder's loop and
// REST never wait for a slot: the starts wait in their own goroutines.
type startGate struct {
	slots   chan struct{}
	active  prometheus.Gauge
	waiting prometheus.Gauge
}

func newStartGate(n int, m *metrics) *startGate {
	return &startGate{slots: make(chan struct{}, n), active: m.startsActive, waiting: m.startsWaiting}
}

// acquire waits for a slot; the returned release frees it and may be
// called any number of times.
func (g *startGate) acquire(ctx context.Context) (release func(), err error) {
	select {
	case g.slots <- struct{}{}:
	default:
		g.waiting.Inc()
		select {
		case g.slots <- struct{}{}:
			g.waiting.Dec()
		case <-ctx.Done():
			g.waiting.Dec()
			return nil, ctx.Err()
		}
	}
	g.active.Inc()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.active.Dec()
			<-g.slots
		})
	}, nil
}
