package rest

import (
	"context"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/logging"
	"github.com/connectd/connectd/framework/rest/api"
)

// Herder is what the REST API needs from the cluster; framework/herder's
// *Herder implements it. Errors are framework/herder's typed errors, which
// the server maps to status codes: *NotFoundError 404, *AlreadyExistsError
// 409, *BadRequestError 400, *RebalanceError and *TransientError 409 with
// Retry-After, *ForbiddenError 403, and *NotLeaderError makes the server forward the
// request to the leader. Anything else is a 500.
type Herder interface {
	ServerInfo(ctx context.Context) (api.ServerInfo, error)
	Health(ctx context.Context) api.Health
	Connectors(ctx context.Context) ([]string, error)
	ConnectorInfo(ctx context.Context, name string) (api.ConnectorInfo, error)
	ConnectorConfig(ctx context.Context, name string) (map[string]string, error)
	// PutConnectorConfig creates or replaces; allowReplace=false →
	// AlreadyExistsError if it exists.
	PutConnectorConfig(ctx context.Context, name string, props map[string]string, allowReplace bool, initial api.InitialState) (info api.ConnectorInfo, created bool, err error)
	PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (api.ConnectorInfo, error)
	DeleteConnector(ctx context.Context, name string) error
	ConnectorStatus(ctx context.Context, name string) (api.ConnectorStateInfo, error)
	TaskConfigs(ctx context.Context, name string) ([]api.TaskInfo, error)
	TaskStatus(ctx context.Context, id api.ConnectorTaskID) (api.TaskState, error)
	// RestartConnector returns nil info for a plain restart (answered 204).
	RestartConnector(ctx context.Context, name string, includeTasks, onlyFailed bool) (*api.ConnectorStateInfo, error)
	RestartTask(ctx context.Context, id api.ConnectorTaskID) error
	PauseConnector(ctx context.Context, name string) error
	ResumeConnector(ctx context.Context, name string) error
	StopConnector(ctx context.Context, name string) error
	ConnectorTopics(ctx context.Context, name string) ([]string, error)
	ResetConnectorTopics(ctx context.Context, name string) error
	Offsets(ctx context.Context, name string) (api.ConnectorOffsets, error)
	AlterOffsets(ctx context.Context, name string, offsets api.ConnectorOffsets) (msg string, err error)
	ResetOffsets(ctx context.Context, name string) (msg string, err error)
	Plugins(ctx context.Context, connectorsOnly bool) ([]api.PluginInfo, error)
	PluginConfig(ctx context.Context, class, version string) ([]configdef.KeyInfo, error)
	ValidateConfig(ctx context.Context, class string, props map[string]string) (configdef.ValidationResult, error)
	// PutTaskConfigs and FenceZombies back the internal (inter-worker,
	// signed) endpoints POST /connectors/{c}/tasks and PUT /connectors/{c}/fence.
	PutTaskConfigs(ctx context.Context, name string, configs []map[string]string) error
	FenceZombies(ctx context.Context, name string) error
	// SessionKey returns the current inter-worker signing key (from the
	// config topic); ok is false until one is known.
	SessionKey() (key []byte, algorithm string, ok bool)
}

// ClusterLoggers is implemented by herders that can apply a log level to
// every worker (PUT /admin/loggers/{name}?scope=cluster, which Kafka
// Connect implements with a logger-cluster-<namespace> config-topic
// record). Without it scope=cluster is answered 400.
type ClusterLoggers interface {
	SetClusterLoggerLevel(ctx context.Context, namespace, level string) error
}

// LogLevels is the log-level controller behind /admin/loggers;
// *logging.Levels implements it.
type LogLevels interface {
	All() map[string]logging.LoggerLevel
	Get(name string) (logging.LoggerLevel, bool)
	Set(name, level string) ([]string, error)
}
