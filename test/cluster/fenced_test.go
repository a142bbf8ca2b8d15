package cluster

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/kafkatest"
)

// An exactly-once task whose open transaction the coordinator aborts for
// outliving transaction.timeout.ms is fenced although no successor exists:
// a broker outage longer than the timeout does this (the chaos suite found
// a replication task left FAILED for good after a broker restart); here a
// transaction interval longer than the timeout does it on purpose. The
// cluster still assigns the task to its worker, so the worker restarts it
// instead of leaving it FAILED as it must leave a real zombie.
func TestFencedWithoutSuccessorRestarts(t *testing.T) {
	c := newCluster(t, nil)
	w := c.start()
	ctx := ctxT(t, 4*time.Minute)
	out := kafkatest.Topic(t)
	cfg := datagenConfig(out, 1)
	cfg["transaction.boundary"] = "interval"
	cfg["transaction.boundary.interval.ms"] = "16000"
	// The coordinator checks for timed-out transactions every 10 s
	// (transaction.abort.timed.out.transaction.cleanup.interval.ms), so a
	// 2 s timeout is exceeded well before the 16 s commit.
	cfg["producer.override.transaction.timeout.ms"] = "2000"
	if _, err := w.client().Create(ctx, "fenced", cfg, ""); err != nil {
		t.Fatal(err)
	}
	const restarted = "producer fenced, but the cluster's latest assignment still gives this task to this worker"
	kafkatest.Eventually(t, 2*time.Minute, func() (bool, string) {
		return strings.Contains(w.log(), restarted), fmt.Sprintf("no fenced restart yet\n%s", w.logTail(20))
	})
	if strings.Contains(w.log(), "task will not be restarted automatically") {
		t.Fatalf("the fenced task was left stopped\n%s", w.logTail(40))
	}
	// It comes back: RUNNING again after the fencing.
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		p, why := placement(ctx, w, "fenced", 1)
		return p != nil, why
	})
}
