package herder

import (
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/herder/assignment"
	"github.com/connectd/connectd/framework/herder/clusterstate"
	"github.com/connectd/connectd/framework/rest/api"
)

// These tests drive the leader's assignment step (computeLocked) on
// snapshots and statuses built in memory: the moves, their two phases and
// the scheduled delay are pure decisions over what the leader has read.

type leaderFixture struct {
	t    *testing.T
	h    *Herder
	l    *leader
	snap *clusterstate.Snapshot
	off  int64
}

func newLeaderFixture(t *testing.T, delay time.Duration) *leaderFixture {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	h := &Herder{cfg: Config{WorkerURL: "http://a:1", TaskShutdownTimeout: time.Second, ScheduledRebalanceMaxDelay: delay}, log: log}
	h.statuses = &statusStore{connectors: map[string]Status{}, tasks: map[string]map[int]Status{}, topics: map[string]map[string]topicStatus{}}
	return &leaderFixture{t: t, h: h, l: newLeader(h), snap: clusterstate.New()}
}

// put applies a record; "" is a tombstone.
func (f *leaderFixture) put(key, value string) {
	var v []byte
	if value != "" {
		v = []byte(value)
	}
	f.snap.Apply(f.h.log, key, v, f.off)
	f.off++
}

// connector adds a connector with n committed tasks.
func (f *leaderFixture) connector(name string, n int) {
	f.put("connector-"+name, `{"properties":{"name":"`+name+`"}}`)
	for i := 0; i < n; i++ {
		f.put("task-"+api.ConnectorTaskID{Connector: name, Task: i}.String(), `{"properties":{}}`)
	}
	f.put("commit-"+name, `{"tasks":`+itoa(n)+`}`)
}

func itoa(n int) string { return string(mustJSON(n)) }

// step computes and "writes" the next assignment.
func (f *leaderFixture) step(live []string, now time.Time) (*clusterstate.Assignment, bool) {
	f.t.Helper()
	a, changed := f.l.computeLocked(f.snap, live, now)
	if changed {
		f.put("connectd-assignment", string(mustJSON(a)))
	}
	return a, changed
}

func owner(a *clusterstate.Assignment, it assignment.Item) string {
	if assignment.IsConnector(it) {
		u, _ := a.OwnerOfConnector(it.Connector)
		return u
	}
	u, _ := a.OwnerOfTask(it)
	return u
}

func countTasks(a *clusterstate.Assignment) map[string]int {
	out := map[string]int{}
	for u, w := range a.Workers {
		for _, ts := range w.Tasks {
			out[u] += len(ts)
		}
	}
	return out
}

func TestLeaderMovesWorkOffLiveWorkersInTwoPhases(t *testing.T) {
	f := newLeaderFixture(t, 0)
	f.connector("c", 4)
	now := time.Unix(1000, 0)
	a, _ := f.step([]string{"http://a:1", "http://b:1"}, now)
	if got := countTasks(a); got["http://a:1"] != 2 || got["http://b:1"] != 2 {
		t.Fatalf("initial %v", got)
	}
	// c joins: phase one takes one task from each old worker and gives
	// it to nobody.
	three := []string{"http://a:1", "http://b:1", "http://c:1"}
	a1, changed := f.step(three, now)
	if !changed {
		t.Fatal("join did not change the assignment")
	}
	if got := countTasks(a1); got["http://c:1"] != 0 || got["http://a:1"]+got["http://b:1"] != 3 {
		t.Fatalf("phase one gave work to the newcomer before release: %v", got)
	}
	if len(f.l.plan.Revoking) != 1 {
		t.Fatalf("revoking %v", f.l.plan.Revoking)
	}
	var moved assignment.Item
	var rv assignment.Revocation
	for it, r := range f.l.plan.Revoking {
		moved, rv = it, r
	}
	if rv.To != "http://c:1" || rv.Gen != a1.Generation {
		t.Fatalf("revocation %+v", rv)
	}
	// Nothing happens until the old owner reports the task stopped.
	if _, changed := f.step(three, now.Add(time.Second)); changed {
		t.Fatal("the task was reassigned before its old owner released it")
	}
	// A stale status from before the revocation does not count.
	f.h.statuses.tasks[moved.Connector] = map[int]Status{moved.Task: {State: StateUnassigned, WorkerID: WorkerID(rv.From), Generation: rv.Gen - 1}}
	if _, changed := f.step(three, now.Add(time.Second)); changed {
		t.Fatal("a status older than the revocation released the task")
	}
	f.h.statuses.tasks[moved.Connector] = map[int]Status{moved.Task: {State: StateUnassigned, WorkerID: WorkerID(rv.From), Generation: rv.Gen}}
	a2, changed := f.step(three, now.Add(2*time.Second))
	if !changed || owner(a2, moved) != "http://c:1" || len(f.l.plan.Revoking) != 0 {
		t.Fatalf("phase two: owner %q, revoking %v", owner(a2, moved), f.l.plan.Revoking)
	}
	if a2.Generation != a1.Generation+1 || a2.Leader != "http://a:1" {
		t.Fatalf("generation %d leader %s", a2.Generation, a2.Leader)
	}
	// Stable: no further changes.
	if _, changed := f.step(three, now.Add(3*time.Second)); changed {
		t.Fatal("assignment changed without cause")
	}
}

func TestLeaderReassignsAfterReleaseTimeout(t *testing.T) {
	f := newLeaderFixture(t, 0)
	f.connector("c", 2)
	now := time.Unix(1000, 0)
	f.step([]string{"http://a:1"}, now)
	two := []string{"http://a:1", "http://b:1"}
	f.step(two, now)
	if len(f.l.plan.Revoking) != 1 {
		t.Fatalf("revoking %v", f.l.plan.Revoking)
	}
	if _, changed := f.step(two, now.Add(f.h.releaseTimeout()-time.Millisecond)); changed {
		t.Fatal("reassigned before the release timeout")
	}
	a, changed := f.step(two, now.Add(f.h.releaseTimeout()+time.Millisecond))
	if !changed || countTasks(a)["http://b:1"] != 1 {
		t.Fatalf("not reassigned after the timeout: %v", countTasks(a))
	}
}

func TestLeaderMovesDeadWorkersWorkAtOnce(t *testing.T) {
	f := newLeaderFixture(t, 0)
	f.connector("c", 6)
	now := time.Unix(1000, 0)
	three := []string{"http://a:1", "http://b:1", "http://c:1"}
	before, _ := f.step(three, now)
	a, changed := f.step([]string{"http://a:1", "http://b:1"}, now.Add(time.Second))
	if !changed || len(f.l.plan.Revoking) != 0 {
		t.Fatalf("changed %v revoking %v", changed, f.l.plan.Revoking)
	}
	got := countTasks(a)
	if got["http://a:1"] != 3 || got["http://b:1"] != 3 {
		t.Fatalf("after the death: %v", got)
	}
	if _, listed := a.Workers["http://c:1"]; listed {
		t.Fatal("the dead worker is still listed")
	}
	for it, w := range assignment.OwnersOf(before) {
		if w != "http://c:1" && owner(a, it) != w {
			t.Errorf("%v moved from live worker %s", it, w)
		}
	}
}

func TestLeaderScheduledDelayKeepsDepartedWork(t *testing.T) {
	f := newLeaderFixture(t, 30*time.Second)
	f.connector("c", 4)
	now := time.Unix(1000, 0)
	two := []string{"http://a:1", "http://b:1"}
	before, _ := f.step(two, now)
	bTasks := before.Workers["http://b:1"].TaskIDs()
	// b leaves: within the delay its work stays with it (unstarted).
	a, _ := f.step([]string{"http://a:1"}, now.Add(time.Second))
	if !slices.Equal(a.Workers["http://b:1"].TaskIDs(), bTasks) {
		t.Fatalf("b's work moved within the delay: %v", a.Workers)
	}
	// b returns in time: it keeps its work, nothing moves.
	if _, changed := f.step(two, now.Add(10*time.Second)); changed {
		t.Fatal("assignment changed when the worker came back")
	}
	// b leaves again and stays away past the delay: its work moves.
	f.step([]string{"http://a:1"}, now.Add(20*time.Second))
	a, changed := f.step([]string{"http://a:1"}, now.Add(51*time.Second))
	if !changed || countTasks(a)["http://a:1"] != 4 {
		t.Fatalf("work not reassigned after the delay: %v", countTasks(a))
	}
}

func TestLeaderDropsDeletedWork(t *testing.T) {
	f := newLeaderFixture(t, 0)
	f.connector("c", 2)
	f.connector("d", 2)
	now := time.Unix(1000, 0)
	two := []string{"http://a:1", "http://b:1"}
	f.step(two, now)
	f.put("connector-d", "")
	a, changed := f.step(two, now)
	if !changed {
		t.Fatal("deletion did not change the assignment")
	}
	for _, w := range a.Workers {
		if slices.Contains(w.Connectors, "d") || len(w.Tasks["d"]) > 0 {
			t.Fatalf("deleted connector still assigned: %+v", a.Workers)
		}
	}
}
