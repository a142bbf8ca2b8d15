package clusterstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/connectd/connectd/framework/rest/api"
)

// Config-topic keys, as Kafka Connect's KafkaConfigBackingStore writes them,
// plus connectd's own assignment record. Kafka Connect readers log and skip
// keys they do not know, so the assignment record does not disturb them.
const (
	keyConnectorPrefix   = "connector-"
	keyTaskPrefix        = "task-"
	keyCommitPrefix      = "commit-"
	keyTargetStatePrefix = "target-state-"
	keyFencingPrefix     = "tasks-fencing-"
	keyRestartPrefix     = "restart-connector-"
	keyLoggerPrefix      = "logger-cluster-"
	keySessionKey        = "session-key"
	keyAssignment        = "connectd-assignment"
)

// Record is one config-topic record to write: its key and JSON value; a
// nil Value is a tombstone.
type Record struct {
	Key   string
	Value []byte
}

func record(key string, value any) Record {
	r := Record{Key: key}
	if value != nil {
		r.Value = encode(value)
	}
	return r
}

// ConnectorRecord stores a connector's config.
func ConnectorRecord(name string, props map[string]string) Record {
	return record(keyConnectorPrefix+name, propertiesValue{Properties: props})
}

// TaskRecord stores one task's config; it applies only once a
// CommitRecord for its connector follows.
func TaskRecord(id api.ConnectorTaskID, props map[string]string) Record {
	return record(keyTaskPrefix+id.String(), propertiesValue{Properties: props})
}

// CommitRecord makes the connector's first tasks task records its task
// configs (a new task generation).
func CommitRecord(name string, tasks int) Record {
	return record(keyCommitPrefix+name, commitValue{Tasks: tasks})
}

// TargetStateRecord sets the connector's target state.
func TargetStateRecord(name string, t TargetState) Record {
	return record(keyTargetStatePrefix+name, encodeTargetState(t))
}

// FencingRecord records that the producers of the connector's previous
// exactly-once task generation are fenced and taskCount tasks may start.
func FencingRecord(name string, taskCount int) Record {
	return record(keyFencingPrefix+name, fencingValue{TaskCount: taskCount})
}

// RestartRecord asks every worker to restart what it runs of the connector.
func RestartRecord(name string, req RestartRequest) Record {
	return record(keyRestartPrefix+name, req)
}

// LoggerRecord sets a cluster-wide log level (KIP-976).
func LoggerRecord(namespace, level string) Record {
	return record(keyLoggerPrefix+namespace, loggerValue{Level: level})
}

// SessionKeyRecord distributes a new inter-worker signing key.
func SessionKeyRecord(k SessionKey) Record {
	return record(keySessionKey, sessionKeyValue(k))
}

// AssignmentRecord publishes an assignment.
func AssignmentRecord(a *Assignment) Record { return record(keyAssignment, a) }

// DeleteConnectorRecords are the tombstones that delete a connector with
// tasks committed tasks: its config and target state, its task configs,
// and last the commit tombstone that clears its tasks.
func DeleteConnectorRecords(name string, tasks int) []Record {
	out := []Record{{Key: keyConnectorPrefix + name}, {Key: keyTargetStatePrefix + name}}
	for i := range tasks {
		out = append(out, Record{Key: keyTaskPrefix + api.ConnectorTaskID{Connector: name, Task: i}.String()})
	}
	return append(out, Record{Key: keyCommitPrefix + name})
}

// checkConnectorName refuses, in a config-topic record, a connector name
// the REST API refuses on create (framework/rest's validName): blank, "."
// or "..", not UTF-8, or holding control characters. Such a record was not
// written through the API, and a connector by that name could not be
// addressed or deleted through it (a blank name makes an empty path
// segment).
func checkConnectorName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return errors.New("blank connector name")
	case !utf8.ValidString(name):
		return errors.New("connector name is not valid UTF-8")
	case name == "." || name == "..":
		return fmt.Errorf("connector name %q cannot be used in a URL path", name)
	case strings.ContainsFunc(name, unicode.IsControl):
		return fmt.Errorf("connector name %q holds control characters", name)
	}
	return nil
}

// ParseTaskID splits "<connector>-<n>" (the task part of task-* and
// status-task-* keys); connector names may contain '-', so the task
// number is what follows the last one.
func ParseTaskID(s string) (api.ConnectorTaskID, error) {
	i := strings.LastIndexByte(s, '-')
	if i <= 0 {
		return api.ConnectorTaskID{}, fmt.Errorf("task id %q has no task number", s)
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil || n < 0 {
		return api.ConnectorTaskID{}, fmt.Errorf("task id %q has an invalid task number", s)
	}
	return api.ConnectorTaskID{Connector: s[:i], Task: n}, nil
}

// TargetState is what the cluster wants a connector to do. The names are
// Kafka Connect's.
type TargetState string

const (
	TargetStarted TargetState = "STARTED"
	TargetPaused  TargetState = "PAUSED"
	TargetStopped TargetState = "STOPPED"
)

// propertiesValue is the value of connector-* and task-* records.
type propertiesValue struct {
	Properties map[string]string `json:"properties"`
}

// commitValue is the value of commit-* records.
type commitValue struct {
	Tasks int `json:"tasks"`
}

// targetStateValue is the value of target-state-* records. STOPPED is
// written as state=PAUSED for workers that predate state.v2, as Kafka does.
type targetStateValue struct {
	State   string `json:"state"`
	StateV2 string `json:"state.v2,omitempty"`
}

func encodeTargetState(t TargetState) targetStateValue {
	v1 := string(t)
	if t == TargetStopped {
		v1 = string(TargetPaused)
	}
	return targetStateValue{State: v1, StateV2: string(t)}
}

func (v targetStateValue) target() (TargetState, error) {
	s := v.StateV2
	if s == "" {
		s = v.State
	}
	switch t := TargetState(s); t {
	case TargetStarted, TargetPaused, TargetStopped:
		return t, nil
	}
	return "", fmt.Errorf("unknown target state %q", s)
}

// fencingValue is the value of tasks-fencing-* records: how many task
// producers of the connector's latest task generation must be fenced before
// a newer generation may start.
type fencingValue struct {
	TaskCount int `json:"task-count"`
}

// SessionKey is the inter-worker request signing key the leader distributes
// through the config topic (KIP-507).
type SessionKey struct {
	Key       []byte // raw key bytes
	Algorithm string // e.g. HmacSHA256
	Created   int64  // creation time, ms since the epoch
}

// loggerValue is a logger-cluster-<namespace> record (KIP-976).
type loggerValue struct {
	Level string `json:"level"`
}

type sessionKeyValue struct {
	Key       []byte `json:"key"` // base64 in JSON, as Kafka writes it
	Algorithm string `json:"algorithm"`
	Created   int64  `json:"creation-timestamp"`
}

// RestartRequest is the value of restart-connector-* records (KIP-745).
type RestartRequest struct {
	IncludeTasks bool `json:"include-tasks"`
	OnlyFailed   bool `json:"only-failed"`
}

// Assignment is connectd's assignment record: which worker runs which
// connectors and tasks. Only the leader writes it, inside its config-topic
// transaction, so a fenced leader's assignment never becomes visible.
// Generation increases by one with every record; status records carry it.
type Assignment struct {
	Version    int    `json:"version"`
	Generation int32  `json:"generation"`
	Leader     string `json:"leader"` // the leader's REST URL; writes are forwarded there
	// Workers maps a worker's REST URL to its work.
	Workers map[string]WorkerAssignment `json:"workers"`
}

// WorkerAssignment is one worker's share of the work.
type WorkerAssignment struct {
	Connectors []string         `json:"connectors"`
	Tasks      map[string][]int `json:"tasks"` // connector -> task numbers
}

// AssignmentVersion is the version of the assignment record this code
// writes; a reader of a newer one reads the fields it knows.
const AssignmentVersion = 1

// TaskIDs lists the worker's tasks sorted.
func (w WorkerAssignment) TaskIDs() []api.ConnectorTaskID {
	var out []api.ConnectorTaskID
	for c, ns := range w.Tasks {
		for _, n := range ns {
			out = append(out, api.ConnectorTaskID{Connector: c, Task: n})
		}
	}
	SortTaskIDs(out)
	return out
}

// OwnerOfConnector returns the URL of the worker assigned the connector.
func (a *Assignment) OwnerOfConnector(name string) (string, bool) {
	if a == nil {
		return "", false
	}
	for url, w := range a.Workers {
		for _, c := range w.Connectors {
			if c == name {
				return url, true
			}
		}
	}
	return "", false
}

// OwnerOfTask returns the URL of the worker assigned the task.
func (a *Assignment) OwnerOfTask(id api.ConnectorTaskID) (string, bool) {
	if a == nil {
		return "", false
	}
	for url, w := range a.Workers {
		for _, n := range w.Tasks[id.Connector] {
			if n == id.Task {
				return url, true
			}
		}
	}
	return "", false
}

// SortTaskIDs sorts by connector, then task number.
func SortTaskIDs(ids []api.ConnectorTaskID) {
	sort.Slice(ids, func(i, j int) bool { return TaskLess(ids[i], ids[j]) })
}

// TaskLess orders task ids by connector, then task number.
func TaskLess(a, b api.ConnectorTaskID) bool {
	if a.Connector != b.Connector {
		return a.Connector < b.Connector
	}
	return a.Task < b.Task
}

func encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Only the record types above are marshalled; they cannot fail.
		panic(fmt.Sprintf("clusterstate: marshal %T: %v", v, err))
	}
	return b
}
