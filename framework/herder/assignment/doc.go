// Package assignment decides which worker of a connectd cluster runs which
// connector instance and task: the leader's assignment algorithm, as pure
// functions of what the leader has read (the current assignment record,
// the work the config topic defines, the live members, what the old
// owners reported) and the clock it is given.
//
// The decision is sticky and balanced (Balance), and moves are safe: an
// item moved off a live worker is first taken away (revoked) and given to
// its new owner only once the old owner reported it stopped or a timeout
// passed, so a task never runs on two live workers at once; a departed
// worker's work may wait scheduled.rebalance.max.delay.ms for its return
// (Planner).
//
// What this package must not do: read or write Kafka, log, keep state
// beyond what the leader's Planner carries between two assignments, or
// look at the clock itself: every input is a parameter, so tests drive it
// with plain values.
package assignment
