package herder

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
	restarts map[string]restartEntry
	// loggers holds the cluster-wide log levels (logger-cluster-<ns>).
	loggers    map[string]loggerEntry
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

type restartEntry struct {
	req    RestartRequest
	offset int64
}

type loggerEntry struct {
	level  string
	offset int64
}

func newSnapshot() *Snapshot {
	return &Snapshot{
		connectors: map[string]*connectorEntry{},
		targets:    map[string]targetEntry{},
		fencing:    map[string]fencingEntry{},
		restarts:   map[string]restartEntry{},
		loggers:    map[string]loggerEntry{},
		deferred:   map[string]map[int]map[string]string{},
	}
}

// clone copies the snapshot deeply enough that applying records to the copy
// leaves the original untouched (maps of configs are replaced, never
// modified in place).
func (s *Snapshot) clone() *Snapshot {
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

// apply folds one config-topic record into the snapshot. Malformed records
// are logged and skipped, as Kafka Connect does: one bad record must not
// stop the cluster.
func (s *Snapshot) apply(log *slog.Logger, key string, value []byte, offset int64) {
	s.Offset = offset + 1
	tomb := value == nil
	bad := func(err error) {
		log.Error("skipping malformed config record", "key", key, "offset", offset, "err", err)
	}
	switch {
	case key == keyAssignment:
		if tomb {
			s.assignment, s.assignmentOffset = nil, offset
			return
		}
		var a Assignment
		if err := json.Unmarshal(value, &a); err != nil {
			bad(err)
			return
		}
		if a.Version > assignmentVersion {
			log.Warn("assignment record has a newer version than this worker knows; reading the fields it knows",
				"version", a.Version, "known", assignmentVersion)
		}
		s.assignment, s.assignmentOffset = &a, offset
	case key == keySessionKey:
		if tomb {
			s.sessionKey = nil
			return
		}
		var v sessionKeyValue
		if err := json.Unmarshal(value, &v); err != nil {
			bad(err)
			return
		}
		s.sessionKey = &SessionKey{Key: v.Key, Algorithm: v.Algorithm, Created: v.Created}
	case strings.HasPrefix(key, keyConnectorPrefix):
		name := key[len(keyConnectorPrefix):]
		if tomb {
			delete(s.connectors, name)
			delete(s.deferred, name)
			return
		}
		if err := checkConnectorName(name); err != nil {
			bad(err)
			return
		}
		var v propertiesValue
		if err := json.Unmarshal(value, &v); err != nil || v.Properties == nil {
			bad(fmt.Errorf("want {\"properties\":{...}}: %v", err))
			return
		}
		e, ok := s.connectors[name]
		if !ok {
			e = &connectorEntry{}
			s.connectors[name] = e
		}
		e.config, e.configOffset = v.Properties, offset
	case strings.HasPrefix(key, keyTaskPrefix):
		id, err := parseTaskID(key[len(keyTaskPrefix):])
		if err != nil {
			bad(err)
			return
		}
		if tomb {
			// Written when a connector is deleted; the commit tombstone
			// that follows clears the tasks.
			return
		}
		var v propertiesValue
		if err := json.Unmarshal(value, &v); err != nil || v.Properties == nil {
			bad(fmt.Errorf("want {\"properties\":{...}}: %v", err))
			return
		}
		d := s.deferred[id.Connector]
		if d == nil {
			d = map[int]map[string]string{}
			s.deferred[id.Connector] = d
		}
		d[id.Task] = v.Properties
	case strings.HasPrefix(key, keyCommitPrefix):
		name := key[len(keyCommitPrefix):]
		if tomb {
			delete(s.deferred, name)
			return
		}
		var v commitValue
		if err := json.Unmarshal(value, &v); err != nil || v.Tasks < 0 {
			bad(fmt.Errorf("want {\"tasks\":N}: %v", err))
			return
		}
		d := s.deferred[name]
		// The count is read from the topic, which anyone with write access
		// can fill: it is checked against the task configs actually
		// written before anything is allocated for it.
		for i := range min(v.Tasks, len(d)+1) {
			if _, ok := d[i]; !ok {
				// Kafka calls such a connector inconsistent; its worker
				// regenerates the task configs.
				log.Error("task commit names a task whose config was not written; keeping the previous task configs",
					"connector", name, "tasks", v.Tasks, "missing", i)
				return
			}
		}
		tasks := make([]map[string]string, v.Tasks)
		for i := range tasks {
			tasks[i] = d[i]
		}
		delete(s.deferred, name)
		e, ok := s.connectors[name]
		if !ok {
			return
		}
		e.tasks, e.taskGen = tasks, offset
	case strings.HasPrefix(key, keyTargetStatePrefix):
		name := key[len(keyTargetStatePrefix):]
		if tomb {
			delete(s.targets, name)
			return
		}
		var v targetStateValue
		if err := json.Unmarshal(value, &v); err != nil {
			bad(err)
			return
		}
		t, err := v.target()
		if err != nil {
			bad(err)
			return
		}
		s.targets[name] = targetEntry{state: t, offset: offset}
	case strings.HasPrefix(key, keyFencingPrefix):
		name := key[len(keyFencingPrefix):]
		if tomb {
			delete(s.fencing, name)
			return
		}
		var v fencingValue
		if err := json.Unmarshal(value, &v); err != nil {
			bad(err)
			return
		}
		s.fencing[name] = fencingEntry{count: v.TaskCount, offset: offset}
	case strings.HasPrefix(key, keyRestartPrefix):
		name := key[len(keyRestartPrefix):]
		if tomb {
			delete(s.restarts, name)
			return
		}
		var v RestartRequest
		if err := json.Unmarshal(value, &v); err != nil {
			bad(err)
			return
		}
		s.restarts[name] = restartEntry{req: v, offset: offset}
	case strings.HasPrefix(key, keyLoggerPrefix):
		ns := strings.TrimPrefix(key, keyLoggerPrefix)
		if tomb {
			delete(s.loggers, ns)
			return
		}
		var v loggerValue
		if err := json.Unmarshal(value, &v); err != nil {
			bad(err)
			return
		}
		if ns == "" {
			bad(errors.New("no logger namespace in the key"))
			return
		}
		if _, err := logging.ParseLevel(v.Level); err != nil {
			bad(err)
			return
		}
		s.loggers[ns] = loggerEntry{level: strings.ToUpper(v.Level), offset: offset}
	default:
		log.Warn("skipping config record with an unknown key", "key", key, "offset", offset)
	}
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
	sortTaskIDs(out)
	return out
}
