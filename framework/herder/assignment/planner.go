package assignment

import (
	"maps"
	"reflect"
	"sort"
	"time"

	"github.com/connectd/connectd/framework/herder/clusterstate"
)

// Revocation tracks an item being moved off a live worker: it is removed
// from the worker in one assignment and given to its new owner only once
// the old owner reported it stopped (or Deadline passed), so a task never
// runs on two live workers at once.
type Revocation struct {
	From, To string
	// Gen is the generation of the assignment that took the item away;
	// the old owner's release must be reported at it or later.
	Gen      int32
	Deadline time.Time
}

// Planner is what the leader remembers between two assignments. Its maps
// belong to the leader, which resets them when it claims or gives up
// leadership; the zero value is not ready, use NewPlanner.
type Planner struct {
	// Revoking holds the items taken away from a live worker and not yet
	// given to their new owner.
	Revoking map[Item]Revocation
	// DepartedAt is when each worker that owns work in the current
	// assignment was first seen gone.
	DepartedAt map[string]time.Time
}

// NewPlanner returns a planner that remembers nothing yet.
func NewPlanner() *Planner {
	return &Planner{Revoking: map[Item]Revocation{}, DepartedAt: map[string]time.Time{}}
}

// Input is what one assignment is computed from.
type Input struct {
	// Current is the assignment in force (nil before the first one).
	Current *clusterstate.Assignment
	// Items is the work to assign: the connectors and tasks the config
	// topic defines and the limits admit.
	Items []Item
	// Live are the group's live members (REST URLs), sorted.
	Live []string
	// Leader is the leader's REST URL, which the record names.
	Leader string
	Now    time.Time
	// MaxDelay is scheduled.rebalance.max.delay.ms: a departed worker
	// keeps its work that long.
	MaxDelay time.Duration
	// ReleaseTimeout is how long a revoked item waits for its old
	// owner's release before it is given to its new owner anyway.
	ReleaseTimeout time.Duration
	// Released reports whether the old owner reported a revoked item
	// stopped.
	Released func(Item, Revocation) bool
}

// Forced is an item given to its new owner although its live old owner
// did not report it stopped within the release timeout; the leader logs
// it.
type Forced struct {
	Item     Item
	From, To string
}

// Next derives the next assignment from in.Current. changed is false when
// the assignment would stay the same (next is then in.Current).
func (p *Planner) Next(in Input) (next *clusterstate.Assignment, changed bool, forced []Forced) {
	prevOwners := OwnersOf(in.Current)
	isLive := make(map[string]bool, len(in.Live))
	for _, w := range in.Live {
		isLive[w] = true
	}
	ghosts := p.ghosts(prevOwners, isLive, in.Now, in.MaxDelay)
	target := p.balanceMovable(in.Items, prevOwners, ghosts, in.Live)

	var gen int32 = 1
	if in.Current != nil {
		gen = in.Current.Generation + 1
	}
	final := map[Item]string{}
	for _, it := range in.Items {
		from, had := prevOwners[it]
		if had && ghosts[from] {
			final[it] = from
			continue
		}
		to, ok := target[it]
		if !ok {
			continue // no live workers
		}
		owner, assigned, f := p.place(in, it, from, had, isLive, to, gen)
		if f != nil {
			forced = append(forced, *f)
		}
		if assigned {
			final[it] = owner
		}
	}

	workers := append([]string(nil), in.Live...)
	for w := range ghosts {
		workers = append(workers, w)
	}
	sort.Strings(workers)
	next = &clusterstate.Assignment{
		Version:    clusterstate.AssignmentVersion,
		Generation: gen,
		Leader:     in.Leader,
		Workers:    buildWorkers(final, workers),
	}
	if same(in.Current, next) {
		return in.Current, false, forced
	}
	return next, true, forced
}

// ghosts returns the workers that left but keep their work, because they
// left less than maxDelay ago (0 by default: their work moves at once),
// and updates DepartedAt.
func (p *Planner) ghosts(prevOwners map[Item]string, isLive map[string]bool, now time.Time, maxDelay time.Duration) map[string]bool {
	ghosts := map[string]bool{}
	for _, w := range prevOwners {
		if isLive[w] {
			delete(p.DepartedAt, w)
			continue
		}
		t, ok := p.DepartedAt[w]
		if !ok {
			t = now
			p.DepartedAt[w] = t
		}
		if now.Sub(t) < maxDelay {
			ghosts[w] = true
		}
	}
	for w := range p.DepartedAt {
		if isLive[w] {
			delete(p.DepartedAt, w)
		}
	}
	return ghosts
}

// balanceMovable balances the items not held for a ghost over the live
// workers. An item's stickiness goes to its current owner, or to the
// new owner of its pending revocation; revocations of items that no
// longer exist are dropped.
func (p *Planner) balanceMovable(items []Item, prevOwners map[Item]string, ghosts map[string]bool, live []string) map[Item]string {
	exists := map[Item]bool{}
	virtual := map[Item]string{}
	var movable []Item
	for _, it := range items {
		exists[it] = true
		if w, ok := prevOwners[it]; ok && ghosts[w] {
			continue
		}
		movable = append(movable, it)
		if w, ok := prevOwners[it]; ok {
			virtual[it] = w
		} else if rv, ok := p.Revoking[it]; ok {
			virtual[it] = rv.To
		}
	}
	for it := range p.Revoking {
		if !exists[it] {
			delete(p.Revoking, it)
		}
	}
	return Balance(movable, live, virtual)
}

// place decides where an item goes in generation gen, given its current
// owner (had: it has one) and the owner balancing chose (to): it stays,
// it is revoked from a live owner (phase one of a move, assigned to
// nobody), it completes a move once released, or it moves at once off a
// departed owner. forced is set when a move completes without a release.
func (p *Planner) place(in Input, it Item, from string, had bool, isLive map[string]bool, to string, gen int32) (owner string, assigned bool, forced *Forced) {
	switch {
	case had && from == to:
		return to, true, nil
	case had && isLive[from]:
		p.Revoking[it] = Revocation{From: from, To: to, Gen: gen, Deadline: in.Now.Add(in.ReleaseTimeout)}
		return "", false, nil
	case had:
		// Its owner left the group: move it now.
		return to, true, nil
	}
	rv, ok := p.Revoking[it]
	if !ok {
		return to, true, nil
	}
	overdue := in.Now.After(rv.Deadline)
	if isLive[rv.From] && !overdue && !in.Released(it, rv) {
		rv.To = to
		p.Revoking[it] = rv
		return "", false, nil
	}
	if overdue && isLive[rv.From] {
		forced = &Forced{Item: it, From: rv.From, To: to}
	}
	delete(p.Revoking, it)
	return to, true, forced
}

// same reports whether next changes nothing of cur.
func same(cur, next *clusterstate.Assignment) bool {
	return cur != nil && cur.Leader == next.Leader && reflect.DeepEqual(normalizeWorkers(cur.Workers), normalizeWorkers(next.Workers))
}

func normalizeWorkers(ws map[string]clusterstate.WorkerAssignment) map[string]clusterstate.WorkerAssignment {
	out := make(map[string]clusterstate.WorkerAssignment, len(ws))
	for k, w := range ws {
		n := clusterstate.WorkerAssignment{Connectors: w.Connectors, Tasks: maps.Clone(w.Tasks)}
		if n.Connectors == nil {
			n.Connectors = []string{}
		}
		if n.Tasks == nil {
			n.Tasks = map[string][]int{}
		}
		for c, ts := range n.Tasks {
			if len(ts) == 0 {
				delete(n.Tasks, c)
			}
		}
		out[k] = n
	}
	return out
}
