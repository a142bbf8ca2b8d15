package assignment

import (
	"testing"
	"time"

	"github.com/connectd/connectd/framework/herder/clusterstate"
)

// plannerRun feeds a Planner its own previous output, as the leader does
// once its assignment record is read back.
type plannerRun struct {
	t        *testing.T
	p        *Planner
	cur      *clusterstate.Assignment
	items    []Item
	released map[Item]bool
	delay    time.Duration
}

func (r *plannerRun) step(live []string, now time.Time) (changed bool, forced []Forced) {
	r.t.Helper()
	next, changed, forced := r.p.Next(Input{
		Current:        r.cur,
		Items:          r.items,
		Live:           live,
		Leader:         "http://a:1",
		Now:            now,
		MaxDelay:       r.delay,
		ReleaseTimeout: 10 * time.Second,
		Released:       func(it Item, _ Revocation) bool { return r.released[it] },
	})
	if !changed && next != r.cur {
		r.t.Fatal("an unchanged assignment must be the current one")
	}
	r.cur = next
	return changed, forced
}

func tasksOn(a *clusterstate.Assignment, w string) int {
	n := 0
	for _, ts := range a.Workers[w].Tasks {
		n += len(ts)
	}
	return n
}

func TestPlannerMovesOffALiveWorkerOnlyOnceReleased(t *testing.T) {
	r := &plannerRun{t: t, p: NewPlanner(), items: tasksOf("c", 2), released: map[Item]bool{}}
	now := time.Unix(1000, 0)
	r.step([]string{"http://a:1"}, now)
	if tasksOn(r.cur, "http://a:1") != 2 || r.cur.Generation != 1 {
		t.Fatalf("first assignment %+v", r.cur)
	}
	two := []string{"http://a:1", "http://b:1"}
	if changed, _ := r.step(two, now); !changed || tasksOn(r.cur, "http://a:1") != 1 || tasksOn(r.cur, "http://b:1") != 0 {
		t.Fatalf("phase one: changed %v, %+v", changed, r.cur.Workers)
	}
	if len(r.p.Revoking) != 1 {
		t.Fatalf("revoking %v", r.p.Revoking)
	}
	if changed, _ := r.step(two, now.Add(time.Second)); changed {
		t.Fatal("moved before the old owner released it")
	}
	for it := range r.p.Revoking {
		r.released[it] = true
	}
	changed, forced := r.step(two, now.Add(2*time.Second))
	if !changed || tasksOn(r.cur, "http://b:1") != 1 || len(r.p.Revoking) != 0 || len(forced) != 0 {
		t.Fatalf("phase two: changed %v forced %v, %+v", changed, forced, r.cur.Workers)
	}
}

func TestPlannerForcesAMoveAfterTheReleaseTimeout(t *testing.T) {
	r := &plannerRun{t: t, p: NewPlanner(), items: tasksOf("c", 2), released: map[Item]bool{}}
	now := time.Unix(1000, 0)
	r.step([]string{"http://a:1"}, now)
	two := []string{"http://a:1", "http://b:1"}
	r.step(two, now)
	changed, forced := r.step(two, now.Add(11*time.Second))
	if !changed || len(forced) != 1 || forced[0].From != "http://a:1" || forced[0].To != "http://b:1" {
		t.Fatalf("changed %v forced %+v", changed, forced)
	}
}

func TestPlannerKeepsADepartedWorkersWorkForTheDelay(t *testing.T) {
	r := &plannerRun{t: t, p: NewPlanner(), items: tasksOf("c", 4), released: map[Item]bool{}, delay: 30 * time.Second}
	now := time.Unix(1000, 0)
	r.step([]string{"http://a:1", "http://b:1"}, now)
	if changed, _ := r.step([]string{"http://a:1"}, now.Add(time.Second)); changed || tasksOn(r.cur, "http://b:1") != 2 {
		t.Fatalf("b's work moved within the delay: %+v", r.cur.Workers)
	}
	if changed, _ := r.step([]string{"http://a:1"}, now.Add(31*time.Second)); !changed || tasksOn(r.cur, "http://a:1") != 4 {
		t.Fatalf("b's work not moved after the delay: %+v", r.cur.Workers)
	}
	if _, listed := r.cur.Workers["http://b:1"]; listed {
		t.Fatal("the departed worker is still listed")
	}
}
