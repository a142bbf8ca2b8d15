package herder

import (
	"fmt"
	"time"
)

// The types below are the Kafka Connect REST API's entities, with its exact
// JSON field names, so that kcctl-style tools, operators and UIs work
// unchanged. The herder produces them; framework/rest serves them.

// ConnectorType is "source", "sink" or "unknown".
type ConnectorType string

const (
	TypeSource  ConnectorType = "source"
	TypeSink    ConnectorType = "sink"
	TypeUnknown ConnectorType = "unknown"
)

// ConnectorTaskID names one task of one connector.
type ConnectorTaskID struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
}

func (id ConnectorTaskID) String() string { return fmt.Sprintf("%s-%d", id.Connector, id.Task) }

// ConnectorInfo is GET /connectors/{c}.
type ConnectorInfo struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	Tasks  []ConnectorTaskID `json:"tasks"`
	Type   ConnectorType     `json:"type"`
}

// ConnectorStateInfo is GET /connectors/{c}/status.
type ConnectorStateInfo struct {
	Name      string         `json:"name"`
	Connector ConnectorState `json:"connector"`
	Tasks     []TaskState    `json:"tasks"`
	Type      ConnectorType  `json:"type"`
}

// ConnectorState is the connector part of ConnectorStateInfo.
type ConnectorState struct {
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
}

// TaskState is GET /connectors/{c}/tasks/{t}/status.
type TaskState struct {
	ID       int    `json:"id"`
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
}

// TaskInfo is one element of GET /connectors/{c}/tasks.
type TaskInfo struct {
	ID     ConnectorTaskID   `json:"id"`
	Config map[string]string `json:"config"`
}

// ConnectorOffsets is GET /connectors/{c}/offsets and the PATCH body.
type ConnectorOffsets struct {
	Offsets []ConnectorOffset `json:"offsets"`
}

// ConnectorOffset is one partition's offset. Offset nil (JSON null) in a
// PATCH resets that partition.
type ConnectorOffset struct {
	Partition map[string]any `json:"partition"`
	Offset    map[string]any `json:"offset"`
}

// PluginInfo is one element of GET /connector-plugins.
type PluginInfo struct {
	Class   string `json:"class"`
	Type    string `json:"type"`
	Version string `json:"version,omitempty"`
}

// ServerInfo is GET /.
type ServerInfo struct {
	Version        string `json:"version"`
	Commit         string `json:"commit"`
	KafkaClusterID string `json:"kafka_cluster_id"`
}

// Health is GET /health: status "healthy", "starting" or "unhealthy".
type Health struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// InitialState is the initial_state of POST /connectors.
type InitialState string

const (
	InitialRunning InitialState = "RUNNING"
	InitialPaused  InitialState = "PAUSED"
	InitialStopped InitialState = "STOPPED"
)

// Errors the herder returns; framework/rest maps them to status codes.

// NotFoundError: an unknown connector, task or plugin (404).
type NotFoundError struct{ Msg string }

func (e *NotFoundError) Error() string { return e.Msg }

// AlreadyExistsError: creating a connector whose name is taken (409).
type AlreadyExistsError struct{ Msg string }

func (e *AlreadyExistsError) Error() string { return e.Msg }

// BadRequestError: invalid input, the message names the field (400).
type BadRequestError struct{ Msg string }

func (e *BadRequestError) Error() string { return e.Msg }

// RebalanceError: the request cannot be served while the cluster
// rebalances; the client should retry after RetryAfter (409 with
// Retry-After, and a message that says it is a rebalance).
type RebalanceError struct {
	Msg        string
	RetryAfter time.Duration
}

func (e *RebalanceError) Error() string { return e.Msg }

// NotLeaderError: the request must run on the leader; LeaderURL is where to
// forward it ("" when no leader is known, which is a RebalanceError for the
// client).
type NotLeaderError struct{ LeaderURL string }

func (e *NotLeaderError) Error() string {
	if e.LeaderURL == "" {
		return "this worker is not the leader and no leader is known"
	}
	return "this worker is not the leader; the leader is " + e.LeaderURL
}

// ForbiddenError: the operation is disabled by configuration (403).
type ForbiddenError struct{ Msg string }

func (e *ForbiddenError) Error() string { return e.Msg }
