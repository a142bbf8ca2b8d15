package herder

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/herder/clusterstate"
	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/internal/kafkatest"
)

// stallReader stops a reader's consumer from fetching, as librdkafka's
// consumer did after a broker restart in the chaos soak (it stayed
// connected and never fetched again). Pausing every assigned partition is
// the real consumer in the same state: no records, no errors.
func stallReader(t *testing.T, r *tailReader) {
	t.Helper()
	c := r.current()
	tps, err := c.Assignment()
	if err != nil {
		t.Fatal(err)
	}
	if len(tps) == 0 {
		t.Fatal("the reader has no assignment to stall")
	}
	if err := c.Pause(tps); err != nil {
		t.Fatal(err)
	}
}

// A worker whose status-topic reader stops fetching must not go on
// serving the statuses it read last: in the chaos soak, one worker kept
// reporting three units RUNNING on a worker that had been killed and
// replaced, for 68 s, and the suite charged the kill a 19.5 s recovery.
// The reader notices that the topic's end moved while it did not, and
// replaces its consumer.
func TestStatusReaderRecoversFromStalledConsumer(t *testing.T) {
	c := newCluster(t, false)
	h, _ := c.add()
	id := api.ConnectorTaskID{Connector: "stalled", Task: 0}

	put := func(worker string, gen int32) {
		h.statuses.send(statusTaskKey(id), encodeStatus(Status{State: StateRunning, WorkerID: worker, Generation: gen}))
		h.statuses.flush(5 * time.Second)
	}
	seen := func(worker string) func() (bool, string) {
		return func() (bool, string) {
			st, ok := h.statuses.task(id)
			return ok && st.WorkerID == worker, fmt.Sprintf("status %+v (present %v)", st, ok)
		}
	}
	put("dead-worker:1", 1)
	kafkatest.Eventually(t, 10*time.Second, seen("dead-worker:1"))

	stallReader(t, h.statuses.reader)
	put("new-owner:2", 2)
	// Detection takes statusReaderStallAfter plus a check interval.
	kafkatest.Eventually(t, statusReaderStallAfter+10*time.Second, seen("new-owner:2"))
	if n := h.statuses.reader.replaced.Load(); n < 1 {
		t.Fatalf("the status reader caught up without being replaced (%d replacements): the stall did not take", n)
	}
	// The replacement keeps reading: later records arrive too, and
	// readToEnd (what the leader relies on) completes.
	put("new-owner:2", 3)
	kafkatest.Eventually(t, 10*time.Second, func() (bool, string) {
		st, _ := h.statuses.task(id)
		return st.Generation == 3, fmt.Sprintf("status %+v", st)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.statuses.readToEnd(ctx); err != nil {
		t.Fatal(err)
	}
}

// The config-topic reader recovers the same way, so a worker whose reader
// stalled still sees the assignments and configs written after it.
func TestConfigReaderRecoversFromStalledConsumer(t *testing.T) {
	c := newCluster(t, false)
	h, _ := c.add()
	c.waitLeader()

	stallReader(t, h.configs.reader)
	before := h.configs.Snapshot().Offset
	ctx, cancel := context.WithTimeout(context.Background(), configReaderStallAfter+15*time.Second)
	defer cancel()
	// write returns only once the record has been read back.
	snap, err := h.configs.write(ctx, record(clusterstate.TargetStateRecord("stalled", clusterstate.TargetPaused)))
	if err != nil {
		t.Fatalf("the write was not read back (snapshot offset %d before, %d now): %v", before, h.configs.Snapshot().Offset, err)
	}
	if snap.Offset <= before {
		t.Fatalf("snapshot offset %d did not move past %d", snap.Offset, before)
	}
	if n := h.configs.reader.replaced.Load(); n < 1 {
		t.Fatalf("the config reader caught up without being replaced (%d replacements): the stall did not take", n)
	}
	// The replacement is assigned where the old reader stopped, not at
	// the beginning: its position is the snapshot's.
	tps, err := h.configs.reader.current().Assignment()
	if err != nil || len(tps) != 1 {
		t.Fatalf("replacement assignment %v, %v", tps, err)
	}
	if tps[0].Offset == kafka.OffsetBeginning {
		t.Fatalf("the replacement re-read the topic from the beginning")
	}
}
