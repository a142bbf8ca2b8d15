package herder

import (
	"context"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/framework/worker"
)

// TaskID, State and RuntimeTarget are framework/worker's, so that
// *worker.Worker implements Runtime and the herder implements
// worker.StatusListener.
type (
	TaskID        = worker.TaskID
	State         = worker.State
	RuntimeTarget = worker.TargetState
)

var (
	_ Runtime               = (*worker.Worker)(nil)
	_ worker.StatusListener = (*Herder)(nil)
)

// Runtime is the part of framework/worker the herder drives: it runs the
// connectors and tasks assigned to this worker. *worker.Worker implements
// it.
type Runtime interface {
	Validate(ctx context.Context, props map[string]string) (configdef.ValidationResult, error)
	StartConnector(ctx context.Context, name string, props map[string]string, target RuntimeTarget, onReconfigure func(name string)) error
	ConnectorTaskConfigs(ctx context.Context, name string, maxTasks int) ([]map[string]string, error)
	StopConnector(ctx context.Context, name string) error
	StartTask(ctx context.Context, id TaskID, connProps, taskProps map[string]string, target RuntimeTarget) error
	StopTasks(ctx context.Context, ids []TaskID) error
	SetTargetState(ctx context.Context, connector string, target RuntimeTarget) error
	RestartTask(ctx context.Context, id TaskID) error
	FenceZombies(ctx context.Context, connector string, taskCount int) error
	RunningTasks() []TaskID
}

// Connector and task states (Kafka Connect's names).
const (
	StateUnassigned = "UNASSIGNED"
	StateRunning    = "RUNNING"
	StatePaused     = "PAUSED"
	StateStopped    = "STOPPED"
	StateFailed     = "FAILED"
	StateRestarting = "RESTARTING"
)

func toRuntimeID(id api.ConnectorTaskID) TaskID {
	return TaskID{Connector: id.Connector, Task: id.Task}
}
func fromRuntimeID(id TaskID) api.ConnectorTaskID {
	return api.ConnectorTaskID{Connector: id.Connector, Task: id.Task}
}
