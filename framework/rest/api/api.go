package api

import (
	"fmt"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/logging"
)

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
	// Version is the version of the plugin running it (KIP-891), absent
	// when none was loaded, as Kafka Connect 4.1 answers.
	Version string `json:"version,omitempty"`
}

// TaskState is GET /connectors/{c}/tasks/{t}/status.
type TaskState struct {
	ID       int    `json:"id"`
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
	// Version is the version of the plugin running it (KIP-891), absent
	// when none was loaded, as Kafka Connect 4.1 answers.
	Version string `json:"version,omitempty"`
}

// ConnectorExpanded is one connector of GET
// /connectors?expand=info&expand=status: each part is present only when
// asked for. Info comes first, as the server has always written it.
type ConnectorExpanded struct {
	Info   *ConnectorInfo      `json:"info,omitempty"`
	Status *ConnectorStateInfo `json:"status,omitempty"`
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

// Message is the {"message": ...} answer of the offsets write endpoints
// (PATCH and DELETE /connectors/{c}/offsets).
type Message struct {
	Message string `json:"message"`
}

// PluginInfo is one element of GET /connector-plugins.
type PluginInfo struct {
	Class   string `json:"class"`
	Type    string `json:"type"`
	Version string `json:"version,omitempty"`
}

// ConfigKeyInfo is one element of GET /connector-plugins/{p}/config.
type ConfigKeyInfo = configdef.KeyInfo

// ConfigInfos is the answer of PUT /connector-plugins/{p}/config/validate.
type ConfigInfos = configdef.ValidationResult

// LoggerLevel is one logger of GET /admin/loggers and GET
// /admin/loggers/{name}.
type LoggerLevel = logging.LoggerLevel

// ServerInfo is GET /.
type ServerInfo struct {
	Version        string `json:"version"`
	Commit         string `json:"commit"`
	KafkaClusterID string `json:"kafka_cluster_id"`
}

// Health is GET /health: Status is HealthHealthy, HealthStarting or
// HealthUnhealthy.
type Health struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// Values of Health.Status (KIP-1017).
const (
	HealthHealthy   = "healthy"
	HealthStarting  = "starting"
	HealthUnhealthy = "unhealthy"
)

// InitialState is the initial_state of POST /connectors.
type InitialState string

const (
	InitialRunning InitialState = "RUNNING"
	InitialPaused  InitialState = "PAUSED"
	InitialStopped InitialState = "STOPPED"
)

// CreateConnectorRequest is the body of POST /connectors. InitialState ""
// is left out (RUNNING).
type CreateConnectorRequest struct {
	Name         string            `json:"name"`
	Config       map[string]string `json:"config"`
	InitialState InitialState      `json:"initial_state,omitempty"`
}

// ErrorMessage is the body of every error answer.
type ErrorMessage struct {
	ErrorCode int    `json:"error_code"`
	Message   string `json:"message"`
}
