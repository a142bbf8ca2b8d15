package worker

import "fmt"

// TaskID names one task of a connector.
type TaskID struct {
	Connector string
	Task      int
}

// String is "<connector>-<task>", Kafka Connect's task naming.
func (id TaskID) String() string { return fmt.Sprintf("%s-%d", id.Connector, id.Task) }

// State is a connector's or task's runtime state, with Kafka Connect's
// names (they appear in the status topic and the REST API).
type State string

const (
	StateUnassigned State = "UNASSIGNED"
	StateRunning    State = "RUNNING"
	StatePaused     State = "PAUSED"
	StateStopped    State = "STOPPED" // connectors only
	StateFailed     State = "FAILED"
	StateRestarting State = "RESTARTING"
)

// states lists every State, for the one-hot state metric.
var states = []State{StateUnassigned, StateRunning, StatePaused, StateStopped, StateFailed, StateRestarting}

// TargetState is what the user asked a connector to be.
type TargetState string

const (
	TargetStarted TargetState = "STARTED"
	TargetPaused  TargetState = "PAUSED"
	TargetStopped TargetState = "STOPPED"
)

// StatusListener receives every state change of the connectors and tasks
// this worker runs; the herder writes them to the status topic. Calls come
// from the worker's goroutines, one at a time per connector or task, and
// must not block for long.
type StatusListener interface {
	ConnectorState(name string, s State, trace string)
	TaskState(id TaskID, s State, trace string)
}

// NopStatus is a StatusListener that ignores every change.
type NopStatus struct{}

func (NopStatus) ConnectorState(string, State, string) {}
func (NopStatus) TaskState(TaskID, State, string)      {}
