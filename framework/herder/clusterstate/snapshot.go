package clusterstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sort"
	"strings"

	"github.com/connectd/connectd/framework/logging"
	"github.com/connectd/connectd/framework/rest/api"
)

// Snapshot is the cluster configuration as read from the config topic up to
// Offset. A published Snapshot is never modified: readers may keep and
// share it without locks.
type Snapshot struct {
	// Offset is the next config-topic offset to read.
	Offset int64

	connectors map[string]*connectorEntry
	targets    map[string]targetEntry
	// fencing survives connector deletion: a re-created connector with the
	// same name must still fence the old task producers.
	fencing  map[string]fencingEntry
	restarts map[string]Restart
	// loggers holds the cluster-wide log levels (logger-cluster-<ns>).
	loggers    map[string]LoggerLevel
	sessionKey *SessionKey
	assignment *Assignment
	// assignmentOffset is where the assignment record was read.
	assignmentOffset int64
	// deferred holds task-* records until their commit-* record arrives.
	deferred map[string]map[int]map[string]string
}

type connectorEntry struct {
	config map[string]string
	// configOffset is where the connector record was read: it changes with
	// every config update and orders it against task commits.
	configOffset int64
	tasks        []map[string]string
	// taskGen is the offset of the commit record that applied tasks (0:
	// none yet). A new generation restarts every task of the connector.
	taskGen int64
}

type targetEntry struct {
	state  TargetState
	offset int64
}

type fencingEntry struct {
	count  int
	offset int64
}

// Restart is the latest restart request of a connector and where it was
// read: a worker carries out each request once, by offset.
type Restart struct {
	Request RestartRequest
	Offset  int64
}

// LoggerLevel is a cluster-wide log level and where it was read: workers
// apply the levels in the order they were written.
type LoggerLevel struct {
	Level  string
	Offset int64
}

// New returns the empty snapshot, before the first record.
func New() *Snapshot {
	return &Snapshot{
		connectors: map[string]*connectorEntry{},
		targets:    map[string]targetEntry{},
		fencing:    map[string]fencingEntry{},
		restarts:   map[string]Restart{},
		loggers:    map[string]LoggerLevel{},
		deferred:   map[string]map[int]map[string]string{},
	}
}

// Clone copies the snapshot deeply enough that applying records to the
// copy leaves the original untouched (maps of configs are replaced, never
// modified in place).
func (s *Snapshot) Clone() *Snapshot {
	c := *s
	c.connectors = make(map[string]*connectorEntry, len(s.connectors))
	for k, v := range s.connectors {
		e := *v
		c.connectors[k] = &e
	}
	c.targets = maps.Clone(s.targets)
	c.fencing = maps.Clone(s.fencing)
	c.restarts = maps.Clone(s.restarts)
	c.loggers = maps.Clone(s.loggers)
	c.deferred = make(map[string]map[int]map[string]string, len(s.deferred))
	for k, v := range s.deferred {
		c.deferred[k] = maps.Clone(v)
	}
	return &c
}

// Apply folds one config-topic record (value nil: a tombstone) into an
// unpublished snapshot. Malformed records are logged and skipped, as Kafka
// Connect does: one bad record must not stop the cluster.
func (s *Snapshot) Apply(log *slog.Logger, key string, value []byte, offset int64) {
	s.Offset = offset + 1
	if err := s.applyRecord(log, key, value, offset); err != nil {
		log.Error("skipping malformed config record", "key", key, "offset", offset, "err", err)
	}
}

// applyRecord dispatches on the key's kind; each kind's apply handles its
// tombstone and its value.
func (s *Snapshot) applyRecord(log *slog.Logger, key string, value []byte, offset int64) error {
	switch {
	case key == keyAssignment:
		return s.applyAssignment(log, value, offset)
	case key == keySessionKey:
		return s.applySessionKey(value)
	case strings.HasPrefix(key, keyConnectorPrefix):
		return s.applyConnector(key[len(keyConnectorPrefix):], value, offset)
	case strings.HasPrefix(key, keyTaskPrefix):
		return s.applyTask(key[len(keyTaskPrefix):], value)
	case strings.HasPrefix(key, keyCommitPrefix):
		return s.applyCommit(log, key[len(keyCommitPrefix):], value, offset)
	case strings.HasPrefix(key, keyTargetStatePrefix):
		return s.applyTargetState(key[len(keyTargetStatePrefix):], value, offset)
	case strings.HasPrefix(key, keyFencingPrefix):
		return s.applyFencing(key[len(keyFencingPrefix):], value, offset)
	case strings.HasPrefix(key, keyRestartPrefix):
		return s.applyRestart(key[len(keyRestartPrefix):], value, offset)
	case strings.HasPrefix(key, keyLoggerPrefix):
		return s.applyLogger(key[len(keyLoggerPrefix):], value, offset)
	}
	log.Warn("skipping config record with an unknown key", "key", key, "offset", offset)
	return nil
}

func (s *Snapshot) applyAssignment(log *slog.Logger, value []byte, offset int64) error {
	if value == nil {
		s.assignment, s.assignmentOffset = nil, offset
		return nil
	}
	var a Assignment
	if err := json.Unmarshal(value, &a); err != nil {
		return err
	}
	if a.Version > AssignmentVersion {
		log.Warn("assignment record has a newer version than this worker knows; reading the fields it knows",
			"version", a.Version, "known", AssignmentVersion)
	}
	s.assignment, s.assignmentOffset = &a, offset
	return nil
}

func (s *Snapshot) applySessionKey(value []byte) error {
	if value == nil {
		s.sessionKey = nil
		return nil
	}
	var v sessionKeyValue
	if err := json.Unmarshal(value, &v); err != nil {
		return err
	}
	s.sessionKey = &SessionKey{Key: v.Key, Algorithm: v.Algorithm, Created: v.Created}
	return nil
}

func (s *Snapshot) applyConnector(name string, value []byte, offset int64) error {
	if value == nil {
		delete(s.connectors, name)
		delete(s.deferred, name)
		return nil
	}
	if err := checkConnectorName(name); err != nil {
		return err
	}
	props, err := decodeProperties(value)
	if err != nil {
		return err
	}
	e, ok := s.connectors[name]
	if !ok {
		e = &connectorEntry{}
		s.connectors[name] = e
	}
	e.config, e.configOffset = props, offset
	return nil
}

// applyTask defers a task config until its connector's commit record.
func (s *Snapshot) applyTask(task string, value []byte) error {
	id, err := ParseTaskID(task)
	if err != nil {
		return err
	}
	if value == nil {
		// Written when a connector is deleted; the commit tombstone
		// that follows clears the tasks.
		return nil
	}
	props, err := decodeProperties(value)
	if err != nil {
		return err
	}
	d := s.deferred[id.Connector]
	if d == nil {
		d = map[int]map[string]string{}
		s.deferred[id.Connector] = d
	}
	d[id.Task] = props
	return nil
}

// applyCommit makes the deferred task configs the connector's tasks, a new
// task generation, if every task the commit names was written.
func (s *Snapshot) applyCommit(log *slog.Logger, name string, value []byte, offset int64) error {
	if value == nil {
		delete(s.deferred, name)
		return nil
	}
	var v commitValue
	if err := json.Unmarshal(value, &v); err != nil || v.Tasks < 0 {
		return fmt.Errorf("want {\"tasks\":N}: %v", err)
	}
	d := s.deferred[name]
	// The count is read from the topic, which anyone with write access
	// can fill: it is checked against the task configs actually written
	// before anything is allocated for it.
	for i := range min(v.Tasks, len(d)+1) {
		if _, ok := d[i]; !ok {
			// Kafka calls such a connector inconsistent; its worker
			// regenerates the task configs.
			log.Error("task commit names a task whose config was not written; keeping the previous task configs",
				"connector", name, "tasks", v.Tasks, "missing", i)
			return nil
		}
	}
	tasks := make([]map[string]string, v.Tasks)
	for i := range tasks {
		tasks[i] = d[i]
	}
	delete(s.deferred, name)
	if e, ok := s.connectors[name]; ok {
		e.tasks, e.taskGen = tasks, offset
	}
	return nil
}

func (s *Snapshot) applyTargetState(name string, value []byte, offset int64) error {
	if value == nil {
		delete(s.targets, name)
		return nil
	}
	var v targetStateValue
	if err := json.Unmarshal(value, &v); err != nil {
		return err
	}
	t, err := v.target()
	if err != nil {
		return err
	}
	s.targets[name] = targetEntry{state: t, offset: offset}
	return nil
}

func (s *Snapshot) applyFencing(name string, value []byte, offset int64) error {
	if value == nil {
		delete(s.fencing, name)
		return nil
	}
	var v fencingValue
	if err := json.Unmarshal(value, &v); err != nil {
		return err
	}
	s.fencing[name] = fencingEntry{count: v.TaskCount, offset: offset}
	return nil
}

func (s *Snapshot) applyRestart(name string, value []byte, offset int64) error {
	if value == nil {
		delete(s.restarts, name)
		return nil
	}
	var v RestartRequest
	if err := json.Unmarshal(value, &v); err != nil {
		return err
	}
	s.restarts[name] = Restart{Request: v, Offset: offset}
	return nil
}

func (s *Snapshot) applyLogger(ns string, value []byte, offset int64) error {
	if value == nil {
		delete(s.loggers, ns)
		return nil
	}
	var v loggerValue
	if err := json.Unmarshal(value, &v); err != nil {
		return err
	}
	if ns == "" {
		return errors.New("no logger namespace in the key")
	}
	if _, err := logging.ParseLevel(v.Level); err != nil {
		return err
	}
	s.loggers[ns] = LoggerLevel{Level: strings.ToUpper(v.Level), Offset: offset}
	return nil
}

// decodeProperties decodes the value of connector-* and task-* records.
func decodeProperties(value []byte) (map[string]string, error) {
	var v propertiesValue
	if err := json.Unmarshal(value, &v); err != nil || v.Properties == nil {
		return nil, fmt.Errorf("want {\"properties\":{...}}: %v", err)
	}
	return v.Properties, nil
}

// Connectors lists the configured connectors, sorted.
func (s *Snapshot) Connectors() []string {
	out := make([]string, 0, len(s.connectors))
	for c := range s.connectors {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Contains reports whether the connector is configured.
func (s *Snapshot) Contains(name string) bool {
	_, ok := s.connectors[name]
	return ok
}

// ConnectorConfig returns the connector's stored config (placeholders
// intact). The map must not be modified.
func (s *Snapshot) ConnectorConfig(name string) (map[string]string, bool) {
	e, ok := s.connectors[name]
	if !ok {
		return nil, false
	}
	return e.config, true
}

// TaskConfigs returns the connector's committed task configs.
func (s *Snapshot) TaskConfigs(name string) []map[string]string {
	if e, ok := s.connectors[name]; ok {
		return e.tasks
	}
	return nil
}

// TaskCount is the number of committed tasks.
func (s *Snapshot) TaskCount(name string) int { return len(s.TaskConfigs(name)) }

// TaskGeneration identifies the connector's current task configs.
func (s *Snapshot) TaskGeneration(name string) int64 {
	if e, ok := s.connectors[name]; ok {
		return e.taskGen
	}
	return 0
}

// ConfigOffset identifies the connector's current config.
func (s *Snapshot) ConfigOffset(name string) int64 {
	if e, ok := s.connectors[name]; ok {
		return e.configOffset
	}
	return 0
}

// TaskConfigsStale reports whether the connector config changed after its
// task configs were last written: the task configs must then be written
// again even when the connector produces the same ones, so that tasks pick
// up the new connector config.
func (s *Snapshot) TaskConfigsStale(name string) bool {
	e, ok := s.connectors[name]
	return ok && e.configOffset > e.taskGen
}

// Target returns the connector's target state (STARTED when none was
// written).
func (s *Snapshot) Target(name string) TargetState {
	if t, ok := s.targets[name]; ok {
		return t.state
	}
	return TargetStarted
}

// Fencing returns the task count of the connector's last fencing record.
func (s *Snapshot) Fencing(name string) (count int, ok bool) {
	f, ok := s.fencing[name]
	return f.count, ok
}

// FencedBeforeTaskGeneration reports whether the connector has a fencing
// record and it was written before the connector's current task
// generation: for an exactly-once connector, that generation waits for
// its predecessors' producers to be fenced.
func (s *Snapshot) FencedBeforeTaskGeneration(name string) bool {
	f, ok := s.fencing[name]
	return ok && f.offset < s.TaskGeneration(name)
}

// Restarts returns every connector's latest restart request.
func (s *Snapshot) Restarts() map[string]Restart { return maps.Clone(s.restarts) }

// Loggers returns the cluster-wide log levels by logger namespace.
func (s *Snapshot) Loggers() map[string]LoggerLevel { return maps.Clone(s.loggers) }

// SessionKey returns the current inter-worker session key.
func (s *Snapshot) SessionKey() *SessionKey { return s.sessionKey }

// Assignment returns the latest assignment (nil before the first one).
func (s *Snapshot) Assignment() *Assignment { return s.assignment }

// Tasks lists every task of every connector, sorted.
func (s *Snapshot) Tasks() []api.ConnectorTaskID {
	var out []api.ConnectorTaskID
	for c, e := range s.connectors {
		for i := range e.tasks {
			out = append(out, api.ConnectorTaskID{Connector: c, Task: i})
		}
	}
	SortTaskIDs(out)
	return out
}
