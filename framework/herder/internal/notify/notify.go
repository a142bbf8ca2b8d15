// Package notify is the herder's change signal: a Broadcast wakes every
// goroutine waiting for a change of some state (the config snapshot, the
// statuses, the group membership) without a lost wake-up.
//
// What this package must not do: carry the state itself or queue
// changes; a waiter re-reads the state after it is woken.
package notify

import "sync"

// Broadcast wakes every waiter when something changed. Waiters take the
// channel from C before checking state, so no change is missed.
type Broadcast struct {
	mu sync.Mutex
	ch chan struct{}
}

// New returns a Broadcast with no waiters.
func New() *Broadcast { return &Broadcast{ch: make(chan struct{})} }

// C returns a channel closed at the next Notify.
func (b *Broadcast) C() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ch
}

// Notify wakes all current waiters.
func (b *Broadcast) Notify() {
	b.mu.Lock()
	close(b.ch)
	b.ch = make(chan struct{})
	b.mu.Unlock()
}
