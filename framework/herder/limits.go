package herder

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/connectd/connectd/framework/herder/assignment"
	"github.com/connectd/connectd/framework/herder/clusterstate"
	"github.com/connectd/connectd/framework/rest/api"
)

// Worker property names of the admission limits. framework/workerconfig
// defines and documents them; they live here because the herder's error
// messages name them.
const (
	KeyConnectorTasksLimit = "connector.tasks.max.limit"
	KeyConnectorConfigMax  = "connector.config.max.bytes"
	KeyWorkerTasksMax      = "worker.tasks.max"
)

// Defaults of the admission limits (see docs/operations.md for why these
// values).
const (
	DefaultConnectorTasksLimit = 1000
	DefaultConnectorConfigMax  = 256 << 10
	DefaultWorkerTasksMax      = 500
)

// Limits bound what one connector config may ask of the cluster and how
// much one worker runs, so that a single request cannot exhaust a worker
// (every task holds its own Kafka client, with its own threads). Zero
// values take the defaults.
type Limits struct {
	// ConnectorTasks is connector.tasks.max.limit: the largest tasks.max
	// a connector config may have, and the most task configs a connector
	// may generate.
	ConnectorTasks int
	// ConfigBytes is connector.config.max.bytes: the largest connector or
	// task config, measured as the JSON of its properties.
	ConfigBytes int
	// WorkerTasks is worker.tasks.max: the most tasks this worker runs at
	// once; tasks assigned beyond it are FAILED here with a trace naming
	// the limit, and start once the worker runs fewer.
	WorkerTasks int
}

func (l *Limits) setDefaults() {
	if l.ConnectorTasks <= 0 {
		l.ConnectorTasks = DefaultConnectorTasksLimit
	}
	if l.ConfigBytes <= 0 {
		l.ConfigBytes = DefaultConnectorConfigMax
	}
	if l.WorkerTasks <= 0 {
		l.WorkerTasks = DefaultWorkerTasksMax
	}
}

// LimitError says which admission limit a config or an assignment
// exceeds. A write beyond it is a 400 (validateForWrite, PutTaskConfigs);
// a stored config beyond it makes the connector FAILED with this message
// as its trace.
type LimitError struct {
	// Key is the worker property of the limit, Limit its value here.
	Key   string
	Limit int
	Msg   string
}

func (e *LimitError) Error() string { return e.Msg }

// ErrLimit matches every *LimitError with errors.Is.
var ErrLimit = errors.New("admission limit exceeded")

// Is lets errors.Is(err, ErrLimit) match.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// checkConfig checks a connector config against the limits. It runs
// before the connector's own validation, so an oversized request costs no
// plugin launch.
func (l Limits) checkConfig(name string, props map[string]string) error {
	l.setDefaults() // zero fields are the defaults however l was built
	if n := configBytes(props); n > l.ConfigBytes {
		return &LimitError{Key: KeyConnectorConfigMax, Limit: l.ConfigBytes,
			Msg: fmt.Sprintf("Connector %s: config of %d bytes exceeds the limit %s=%d; move large values to a config provider (${file:...}) or raise the limit on every worker", name, n, KeyConnectorConfigMax, l.ConfigBytes)}
	}
	v, ok := props["tasks.max"]
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil // not a number: the connector's validation says so
	}
	if errors.Is(err, strconv.ErrRange) || n > int64(l.ConnectorTasks) {
		return &LimitError{Key: KeyConnectorTasksLimit, Limit: l.ConnectorTasks,
			Msg: fmt.Sprintf("Connector %s: tasks.max=%s exceeds the limit %s=%d; lower tasks.max or raise the limit on every worker", name, v, KeyConnectorTasksLimit, l.ConnectorTasks)}
	}
	return nil
}

// checkTaskConfigs checks the task configs a connector generated.
func (l Limits) checkTaskConfigs(name string, configs []map[string]string) error {
	l.setDefaults() // zero fields are the defaults however l was built
	if len(configs) > l.ConnectorTasks {
		return &LimitError{Key: KeyConnectorTasksLimit, Limit: l.ConnectorTasks,
			Msg: fmt.Sprintf("Connector %s generated %d task configs, more than the limit %s=%d", name, len(configs), KeyConnectorTasksLimit, l.ConnectorTasks)}
	}
	for i, c := range configs {
		if n := configBytes(c); n > l.ConfigBytes {
			return &LimitError{Key: KeyConnectorConfigMax, Limit: l.ConfigBytes,
				Msg: fmt.Sprintf("Connector %s generated a config of %d bytes for task %d, more than the limit %s=%d", name, n, i, KeyConnectorConfigMax, l.ConfigBytes)}
		}
	}
	return nil
}

// assignable reports whether the connector's tasks may be assigned: a
// connector with more task configs than the limit (written by an older
// version or by hand) gets none, so they can neither bloat the assignment
// record nor start anywhere. Its connector instance still runs and
// generates task configs within the limit, or is FAILED when its config
// asks for more.
func (l Limits) assignable(snap *clusterstate.Snapshot, name string) bool {
	l.setDefaults() // zero fields are the defaults however l was built
	return snap.TaskCount(name) <= l.ConnectorTasks
}

// assignableItems drops the tasks of connectors that are not assignable.
func (l Limits) assignableItems(snap *clusterstate.Snapshot, items []assignment.Item) []assignment.Item {
	out := items[:0]
	for _, it := range items {
		if assignment.IsConnector(it) || l.assignable(snap, it.Connector) {
			out = append(out, it)
		}
	}
	return out
}

// workerFull returns the error of a task refused because this worker
// already runs the most tasks it may.
func (l Limits) workerFull(id api.ConnectorTaskID, running int) error {
	l.setDefaults() // zero fields are the defaults however l was built
	if running < l.WorkerTasks {
		return nil
	}
	return &LimitError{Key: KeyWorkerTasksMax, Limit: l.WorkerTasks,
		Msg: fmt.Sprintf("Task %s is not started on this worker: it already runs %d tasks, the limit %s=%d; it starts once the worker runs fewer (add workers or raise the limit)", id, running, KeyWorkerTasksMax, l.WorkerTasks)}
}

// configBytes is the size of a config as the config topic stores it.
func configBytes(props map[string]string) int {
	b, err := json.Marshal(props)
	if err != nil {
		return 0
	}
	return len(b)
}
