package herder

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/connconfig"
	"github.com/connectd/connectd/framework/herder/assignment"
	"github.com/connectd/connectd/framework/herder/clusterstate"
	"github.com/connectd/connectd/framework/logging"
	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/framework/worker"
	"github.com/connectd/connectd/internal/kafkaadmin"
)

// The methods in this file are the herder's side of the REST API. Reads
// are served from this worker's view of the config and status topics;
// leader-only writes return *NotLeaderError on other workers, which the
// REST layer forwards.

// rebalanceRetryAfter is the Retry-After of RebalanceErrors.
const rebalanceRetryAfter = 2 * time.Second

const msgNoLeader = "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."

func (h *Herder) notStarted() error {
	if h.stopping.Load() {
		return &RebalanceError{Msg: "Cannot complete request: this worker is shutting down; send it to another worker", RetryAfter: rebalanceRetryAfter}
	}
	return &RebalanceError{Msg: "Cannot complete request: the worker is still starting up (" + *h.stage.Load() + "); retry shortly", RetryAfter: rebalanceRetryAfter}
}

// leaderOnly returns nil on the active leader, else the error that sends
// the request there.
func (h *Herder) leaderOnly() error {
	if !h.started.Load() {
		return h.notStarted()
	}
	if h.leader.active.Load() {
		return nil
	}
	a := h.configs.Snapshot().Assignment()
	if a == nil || a.Leader == "" || a.Leader == h.cfg.WorkerURL {
		return &RebalanceError{Msg: msgNoLeader, RetryAfter: rebalanceRetryAfter}
	}
	return &NotLeaderError{LeaderURL: a.Leader}
}

// asLeader runs a privileged change, translating a lost leadership into
// the error that forwards the request.
func (h *Herder) asLeader(ctx context.Context, build func(s *clusterstate.Snapshot) ([]*kafka.Message, error)) (*clusterstate.Snapshot, error) {
	if err := h.leaderOnly(); err != nil {
		return nil, err
	}
	snap, err := h.leader.privileged(ctx, build)
	if errors.Is(err, errNotLeading) {
		if e := h.leaderOnly(); e != nil {
			return nil, e
		}
		return nil, &RebalanceError{Msg: msgNoLeader, RetryAfter: rebalanceRetryAfter}
	}
	return snap, transient(ctx, err)
}

func connectorNotFound(name string) error {
	return &NotFoundError{Msg: fmt.Sprintf("Connector %s not found", name)}
}

// ServerInfo is GET /.
func (h *Herder) ServerInfo(ctx context.Context) (api.ServerInfo, error) {
	info := api.ServerInfo{Version: h.cfg.Version, Commit: h.cfg.Commit}
	if id := h.clusterID.Load(); id != nil {
		info.KafkaClusterID = *id
		return info, nil
	}
	if h.member == nil {
		// Not connected yet: answer without the cluster id.
		return info, nil
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := kafkaadmin.Reachable(cctx, h.member.Admin()); err != nil {
		return info, transient(ctx, fmt.Errorf("kafka cluster id: %w", err))
	}
	id, err := h.member.Admin().ClusterID(cctx)
	if err != nil {
		return info, transient(ctx, fmt.Errorf("kafka cluster id: %w", err))
	}
	h.clusterID.Store(&id)
	info.KafkaClusterID = id
	return info, nil
}

// Connectors lists the connector names.
func (h *Herder) Connectors(ctx context.Context) ([]string, error) {
	snap, err := h.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return snap.Connectors(), nil
}

func (h *Herder) info(ctx context.Context, snap *clusterstate.Snapshot, name string) api.ConnectorInfo {
	cfg, _ := snap.ConnectorConfig(name)
	tasks := make([]api.ConnectorTaskID, snap.TaskCount(name))
	for i := range tasks {
		tasks[i] = api.ConnectorTaskID{Connector: name, Task: i}
	}
	return api.ConnectorInfo{Name: name, Config: maps.Clone(cfg), Tasks: tasks, Type: h.connectorTypeIn(ctx, cfg)}
}

// ConnectorInfo is GET /connectors/{c}.
func (h *Herder) ConnectorInfo(ctx context.Context, name string) (api.ConnectorInfo, error) {
	snap, err := h.snapshot(ctx)
	if err != nil {
		return api.ConnectorInfo{}, err
	}
	if !snap.Contains(name) {
		return api.ConnectorInfo{}, connectorNotFound(name)
	}
	return h.info(ctx, snap, name), nil
}

// ConnectorConfig is GET /connectors/{c}/config: the stored config, with
// its placeholders.
func (h *Herder) ConnectorConfig(ctx context.Context, name string) (map[string]string, error) {
	snap, err := h.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	cfg, ok := snap.ConnectorConfig(name)
	if !ok {
		return nil, connectorNotFound(name)
	}
	return maps.Clone(cfg), nil
}

// validateForWrite validates a connector config and turns problems into a
// BadRequestError in Kafka Connect's wording.
func (h *Herder) validateForWrite(ctx context.Context, props map[string]string) error {
	// The limits first: a config beyond them costs no plugin launch.
	if err := h.cfg.Limits.checkConfig(props["name"], props); err != nil {
		return &BadRequestError{Msg: err.Error()}
	}
	class := strings.TrimSpace(props["connector.class"])
	if class == "" {
		return &BadRequestError{Msg: fmt.Sprintf("Connector config %s contains no connector type", renderProps(props))}
	}
	res, err := h.validate(ctx, props)
	if err != nil {
		return err
	}
	if res.ErrorCount == 0 {
		h.warnUnknownKeys(class, props, res)
		return nil
	}
	var msgs []string
	for _, c := range res.Configs {
		for _, e := range c.Value.Errors {
			msgs = append(msgs, c.Value.Name+": "+e)
		}
	}
	return &BadRequestError{Msg: fmt.Sprintf("Connector configuration is invalid and contains the following %d error(s):\n%s\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`",
		len(msgs), strings.Join(msgs, "\n"))}
}

// warnUnknownKeys logs the keys of an accepted connector config that no
// definition knows, with the nearest known key. Kafka Connect accepts
// them, so they are never an error; a plugin that declares no keys of its
// own is not judged (every key of it would look unknown).
func (h *Herder) warnUnknownKeys(class string, props map[string]string, res configdef.ValidationResult) {
	if h.cfg.Plugins == nil {
		return
	}
	if m, err := h.cfg.Plugins.Lookup(class); err != nil || len(m.Config) == 0 {
		return
	}
	for _, u := range connconfig.UnknownKeys(props, res) {
		attrs := []any{"connector", props["name"], "key", u.Key}
		if u.DidYouMean != "" {
			attrs = append(attrs, "did_you_mean", u.DidYouMean)
		}
		h.log.Warn(u.Message(props["name"]), attrs...)
	}
}

// validate runs the connector's validation on the resolved config and
// puts the raw values back into the answer.
func (h *Herder) validate(ctx context.Context, props map[string]string) (configdef.ValidationResult, error) {
	resolved, err := h.resolve(props)
	if err != nil {
		return configdef.ValidationResult{}, &BadRequestError{Msg: err.Error()}
	}
	if err := h.checkConverterVersions(resolved); err != nil {
		return configdef.ValidationResult{}, err
	}
	res, err := h.rt.Validate(ctx, resolved)
	if err != nil {
		// A config the worker refuses outright (no such plugin, a plugin
		// binary that fails its checksum) is the request's problem: 400,
		// as Kafka Connect answers for a class it cannot load.
		var ce *worker.ConfigError
		if errors.As(err, &ce) {
			return configdef.ValidationResult{}, &BadRequestError{Msg: ce.Error()}
		}
		return configdef.ValidationResult{}, err
	}
	res = restoreRawValues(res, props, resolved)
	h.addVersionKeys(&res, props)
	return res, nil
}

// renderProps renders a config like Java's Map.toString, as Kafka's error
// message does.
func renderProps(props map[string]string) string {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + props[k]
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func targetOf(s api.InitialState) (clusterstate.TargetState, error) {
	switch strings.ToUpper(string(s)) {
	case "", string(api.InitialRunning):
		return clusterstate.TargetStarted, nil
	case string(api.InitialPaused):
		return clusterstate.TargetPaused, nil
	case string(api.InitialStopped):
		return clusterstate.TargetStopped, nil
	}
	return "", &BadRequestError{Msg: fmt.Sprintf("Invalid initial state %q: must be one of RUNNING, PAUSED, STOPPED", s)}
}

// PutConnectorConfig creates or replaces a connector (leader only).
func (h *Herder) PutConnectorConfig(ctx context.Context, name string, props map[string]string, allowReplace bool, initial api.InitialState) (api.ConnectorInfo, bool, error) {
	if err := h.leaderOnly(); err != nil {
		return api.ConnectorInfo{}, false, err
	}
	target, err := targetOf(initial)
	if err != nil {
		return api.ConnectorInfo{}, false, err
	}
	props = maps.Clone(props)
	if props == nil {
		props = map[string]string{}
	}
	if n, ok := props["name"]; ok && n != name {
		return api.ConnectorInfo{}, false, &BadRequestError{Msg: fmt.Sprintf("Connector name configuration (%s) doesn't match connector name in the URL (%s)", n, name)}
	}
	props["name"] = name
	if err := h.validateForWrite(ctx, props); err != nil {
		return api.ConnectorInfo{}, false, err
	}
	created := false
	snap, err := h.asLeader(ctx, func(s *clusterstate.Snapshot) ([]*kafka.Message, error) {
		exists := s.Contains(name)
		if exists && !allowReplace {
			return nil, &AlreadyExistsError{Msg: fmt.Sprintf("Connector %s already exists", name)}
		}
		created = !exists
		var msgs []*kafka.Message
		if created && initial != "" {
			msgs = append(msgs, record(clusterstate.TargetStateRecord(name, target)))
		}
		if created && target == clusterstate.TargetStopped {
			// A connector created STOPPED has no tasks (as after a stop).
			msgs = append(msgs, record(clusterstate.CommitRecord(name, 0)))
		}
		return append(msgs, record(clusterstate.ConnectorRecord(name, props))), nil
	})
	if err != nil {
		return api.ConnectorInfo{}, false, err
	}
	return h.info(ctx, snap, name), created, nil
}

// PatchConnectorConfig merges patch into the config; a nil value removes
// the key (leader only).
func (h *Herder) PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (api.ConnectorInfo, error) {
	if err := h.leaderOnly(); err != nil {
		return api.ConnectorInfo{}, err
	}
	cur, ok := h.configs.Snapshot().ConnectorConfig(name)
	if !ok {
		return api.ConnectorInfo{}, connectorNotFound(name)
	}
	next := maps.Clone(cur)
	for k, v := range patch {
		if v == nil {
			delete(next, k)
		} else {
			next[k] = *v
		}
	}
	if n, ok := next["name"]; ok && n != name {
		return api.ConnectorInfo{}, &BadRequestError{Msg: fmt.Sprintf("Connector name configuration (%s) doesn't match connector name in the URL (%s)", n, name)}
	}
	next["name"] = name
	if err := h.validateForWrite(ctx, next); err != nil {
		return api.ConnectorInfo{}, err
	}
	snap, err := h.asLeader(ctx, func(s *clusterstate.Snapshot) ([]*kafka.Message, error) {
		if !s.Contains(name) {
			return nil, connectorNotFound(name)
		}
		return []*kafka.Message{record(clusterstate.ConnectorRecord(name, next))}, nil
	})
	if err != nil {
		return api.ConnectorInfo{}, err
	}
	return h.info(ctx, snap, name), nil
}

// DeleteConnector removes a connector (leader only). Its records are
// tombstoned in one transaction; its statuses afterwards.
func (h *Herder) DeleteConnector(ctx context.Context, name string) error {
	tasks := 0
	_, err := h.asLeader(ctx, func(s *clusterstate.Snapshot) ([]*kafka.Message, error) {
		if !s.Contains(name) {
			return nil, connectorNotFound(name)
		}
		tasks = s.TaskCount(name)
		var msgs []*kafka.Message
		for _, r := range clusterstate.DeleteConnectorRecords(name, tasks) {
			msgs = append(msgs, record(r))
		}
		return msgs, nil
	})
	if err != nil {
		return err
	}
	h.statuses.deleteConnector(name, tasks)
	return nil
}

// ConnectorStatus is GET /connectors/{c}/status.
func (h *Herder) ConnectorStatus(ctx context.Context, name string) (api.ConnectorStateInfo, error) {
	snap, err := h.snapshot(ctx)
	if err != nil {
		return api.ConnectorStateInfo{}, err
	}
	if !snap.Contains(name) {
		return api.ConnectorStateInfo{}, &NotFoundError{Msg: fmt.Sprintf("No status found for connector %s", name)}
	}
	// A connector in the config snapshot always has a status: until its
	// worker's first record arrives (just created, or that worker has not
	// reported yet), it is UNASSIGNED rather than unknown.
	st, ok := h.statuses.connector(name)
	if !ok {
		st = unassignedStatus(snap, assignment.Item{Connector: name, Task: assignment.ConnectorTask})
	}
	cfg, _ := snap.ConnectorConfig(name)
	out := api.ConnectorStateInfo{
		Name:      name,
		Connector: api.ConnectorState{State: st.State, WorkerID: st.WorkerID, Trace: st.Trace, Version: st.Version},
		Tasks:     []api.TaskState{},
		Type:      h.connectorTypeIn(ctx, cfg),
	}
	n := snap.TaskCount(name)
	for i := 0; i < n; i++ {
		ts, ok := h.statuses.task(api.ConnectorTaskID{Connector: name, Task: i})
		if !ok {
			ts = unassignedStatus(snap, assignment.Item{Connector: name, Task: i})
		}
		out.Tasks = append(out.Tasks, api.TaskState{ID: i, State: ts.State, WorkerID: ts.WorkerID, Trace: ts.Trace, Version: ts.Version})
	}
	return out, nil
}

// TaskConfigs is GET /connectors/{c}/tasks.
func (h *Herder) TaskConfigs(ctx context.Context, name string) ([]api.TaskInfo, error) {
	snap, err := h.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if !snap.Contains(name) {
		return nil, connectorNotFound(name)
	}
	out := []api.TaskInfo{}
	for i, c := range snap.TaskConfigs(name) {
		out = append(out, api.TaskInfo{ID: api.ConnectorTaskID{Connector: name, Task: i}, Config: maps.Clone(c)})
	}
	return out, nil
}

// TaskStatus is GET /connectors/{c}/tasks/{t}/status.
func (h *Herder) TaskStatus(ctx context.Context, id api.ConnectorTaskID) (api.TaskState, error) {
	snap, err := h.snapshot(ctx)
	if err != nil {
		return api.TaskState{}, err
	}
	if !snap.Contains(id.Connector) || id.Task < 0 || id.Task >= snap.TaskCount(id.Connector) {
		return api.TaskState{}, &NotFoundError{Msg: fmt.Sprintf("No status found for task %s", id)}
	}
	st, ok := h.statuses.task(id)
	if !ok {
		st = unassignedStatus(snap, id)
	}
	return api.TaskState{ID: id.Task, State: st.State, WorkerID: st.WorkerID, Trace: st.Trace, Version: st.Version}, nil
}

// RestartConnector restarts a connector and, with includeTasks, its tasks
// (onlyFailed: only those FAILED). Without either flag it restarts the
// connector instance on its worker and returns nil info (204); otherwise
// the leader writes a restart request that each worker carries out for
// what it runs, and the answer shows the planned restarts (202).
func (h *Herder) RestartConnector(ctx context.Context, name string, includeTasks, onlyFailed bool) (*api.ConnectorStateInfo, error) {
	snap, err := h.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if !snap.Contains(name) {
		return nil, connectorNotFound(name)
	}
	if !includeTasks && !onlyFailed {
		return nil, h.restartConnectorOnOwner(ctx, snap, name)
	}
	// The plan is computed before the request is written, from the same
	// statuses the workers will consult.
	plan, err := h.ConnectorStatus(ctx, name)
	if err != nil {
		return nil, err
	}
	req := clusterstate.RestartRequest{IncludeTasks: includeTasks, OnlyFailed: onlyFailed}
	if _, err := h.asLeader(ctx, func(s *clusterstate.Snapshot) ([]*kafka.Message, error) {
		if !s.Contains(name) {
			return nil, connectorNotFound(name)
		}
		return []*kafka.Message{record(clusterstate.RestartRecord(name, req))}, nil
	}); err != nil {
		return nil, err
	}
	if !onlyFailed || plan.Connector.State == StateFailed {
		plan.Connector.State = StateRestarting
	}
	if includeTasks {
		for i := range plan.Tasks {
			if !onlyFailed || plan.Tasks[i].State == StateFailed {
				plan.Tasks[i].State = StateRestarting
			}
		}
	}
	return &plan, nil
}

// restartConnectorOnOwner restarts the connector instance here when this
// worker runs it, else sends the request to the worker that does.
func (h *Herder) restartConnectorOnOwner(ctx context.Context, snap *clusterstate.Snapshot, name string) error {
	if !h.started.Load() {
		return h.notStarted()
	}
	owner, ok := snap.Assignment().OwnerOfConnector(name)
	if !ok {
		return &RebalanceError{Msg: fmt.Sprintf("Cannot restart connector %s momentarily: it is not assigned to a worker, likely because a rebalance is underway", name), RetryAfter: rebalanceRetryAfter}
	}
	if owner != h.cfg.WorkerURL {
		return &NotLeaderError{LeaderURL: owner}
	}
	return h.local.runOnLoop(ctx, func(ctx context.Context) {
		h.local.restartConnectorNow(ctx, h.configs.Snapshot(), name)
	})
}

// RestartTask restarts one task on the worker that runs it.
func (h *Herder) RestartTask(ctx context.Context, id api.ConnectorTaskID) error {
	snap, err := h.snapshot(ctx)
	if err != nil {
		return err
	}
	if !snap.Contains(id.Connector) {
		return connectorNotFound(id.Connector)
	}
	if id.Task < 0 || id.Task >= snap.TaskCount(id.Connector) {
		return &NotFoundError{Msg: fmt.Sprintf("Unknown task %s", id)}
	}
	if !h.started.Load() {
		return h.notStarted()
	}
	owner, ok := snap.Assignment().OwnerOfTask(id)
	if !ok {
		return &RebalanceError{Msg: fmt.Sprintf("Cannot restart task %s momentarily: it is not assigned to a worker, likely because a rebalance is underway", id), RetryAfter: rebalanceRetryAfter}
	}
	if owner != h.cfg.WorkerURL {
		return &NotLeaderError{LeaderURL: owner}
	}
	var restartErr error
	if err := h.local.runOnLoop(ctx, func(ctx context.Context) {
		restartErr = h.local.restartTaskNow(ctx, h.configs.Snapshot(), id)
	}); err != nil {
		return err
	}
	return restartErr
}

// PauseConnector and ResumeConnector write the target state; any worker
// may, as in Kafka Connect.
func (h *Herder) PauseConnector(ctx context.Context, name string) error {
	return h.putTargetState(ctx, name, clusterstate.TargetPaused)
}

// ResumeConnector: see PauseConnector.
func (h *Herder) ResumeConnector(ctx context.Context, name string) error {
	return h.putTargetState(ctx, name, clusterstate.TargetStarted)
}

func (h *Herder) putTargetState(ctx context.Context, name string, t clusterstate.TargetState) error {
	snap, err := h.snapshot(ctx)
	if err != nil {
		return err
	}
	if !snap.Contains(name) {
		return connectorNotFound(name)
	}
	if !h.started.Load() {
		return h.notStarted()
	}
	_, err = h.configs.write(ctx, record(clusterstate.TargetStateRecord(name, t)))
	return transient(ctx, err)
}

// StopConnector stops a connector and its tasks (leader only): the task
// configs are emptied and the target state set to STOPPED in one
// transaction.
func (h *Herder) StopConnector(ctx context.Context, name string) error {
	_, err := h.asLeader(ctx, func(s *clusterstate.Snapshot) ([]*kafka.Message, error) {
		if !s.Contains(name) {
			return nil, connectorNotFound(name)
		}
		return []*kafka.Message{
			record(clusterstate.CommitRecord(name, 0)),
			record(clusterstate.TargetStateRecord(name, clusterstate.TargetStopped)),
		}, nil
	})
	return err
}

// ConnectorTopics is GET /connectors/{c}/topics.
func (h *Herder) ConnectorTopics(ctx context.Context, name string) ([]string, error) {
	if !h.cfg.TopicTracking {
		return nil, &ForbiddenError{Msg: "Topic tracking is disabled."}
	}
	snap, err := h.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if !snap.Contains(name) {
		return nil, connectorNotFound(name)
	}
	topics := h.statuses.topicsOf(name)
	out := make([]string, 0, len(topics))
	for t := range topics {
		out = append(out, t)
	}
	sort.Strings(out)
	return out, nil
}

// ResetConnectorTopics is PUT /connectors/{c}/topics/reset.
func (h *Herder) ResetConnectorTopics(ctx context.Context, name string) error {
	if !h.cfg.TopicTracking {
		return &ForbiddenError{Msg: "Topic tracking is disabled."}
	}
	if !h.cfg.TopicTrackingAllowReset {
		return &ForbiddenError{Msg: "Topic tracking reset is disabled."}
	}
	snap, err := h.snapshot(ctx)
	if err != nil {
		return err
	}
	if !snap.Contains(name) {
		return connectorNotFound(name)
	}
	h.statuses.resetTopics(name)
	return nil
}

// ValidateConfig is PUT /connector-plugins/{p}/config/validate.
func (h *Herder) ValidateConfig(ctx context.Context, class string, props map[string]string) (configdef.ValidationResult, error) {
	props = maps.Clone(props)
	if props == nil {
		props = map[string]string{}
	}
	if _, ok := props["connector.class"]; !ok {
		props["connector.class"] = class
	}
	return h.validate(ctx, props)
}

// PutTaskConfigs is the internal endpoint the worker running a connector
// uses to hand its task configs to the leader. The leader writes them with
// a commit record in one transaction.
//
// For an exactly-once source connector whose previous generation had task
// producers that the new tasks' own InitTransactions would not fence
// (anything but one task before and after), the new generation stays
// pending: workers stop the old tasks but start no new ones until the
// leader has fenced the old producers and written tasks-fencing-<c>
// (leader.fencePending), as Kafka Connect does before an exactly-once
// task generation starts. Otherwise tasks-fencing-<c> is written in the
// same transaction.
func (h *Herder) PutTaskConfigs(ctx context.Context, name string, configs []map[string]string) error {
	if err := h.cfg.Limits.checkTaskConfigs(name, configs); err != nil {
		return &BadRequestError{Msg: err.Error()}
	}
	_, err := h.asLeader(ctx, func(s *clusterstate.Snapshot) ([]*kafka.Message, error) {
		if !s.Contains(name) {
			return nil, connectorNotFound(name)
		}
		if s.Target(name) == clusterstate.TargetStopped {
			h.log.Info("ignoring task configs of a stopped connector", "connector", name)
			return nil, nil
		}
		if !s.TaskConfigsStale(name) && equalTaskConfigs(configs, s.TaskConfigs(name)) {
			return nil, nil
		}
		var msgs []*kafka.Message
		for i, c := range configs {
			msgs = append(msgs, record(clusterstate.TaskRecord(api.ConnectorTaskID{Connector: name, Task: i}, c)))
		}
		msgs = append(msgs, record(clusterstate.CommitRecord(name, len(configs))))
		eos := h.exactlyOnce(s, name)
		pending := false
		if eos {
			prev, ok := s.Fencing(name)
			pending = ok && needsFencing(prev, len(configs))
			if !pending {
				msgs = append(msgs, record(clusterstate.FencingRecord(name, len(configs))))
			}
		}
		h.log.Info("writing task configs", "connector", name, "tasks", len(configs), "exactly_once", eos, "fencing_pending", pending)
		return msgs, nil
	})
	return err
}

// needsFencing reports whether a new generation of next tasks must wait
// for the previous generation's prev task producers to be fenced. From one
// task to one task the new task's InitTransactions fences the old one
// (same transactional.id).
func needsFencing(prev, next int) bool {
	return prev > 0 && next > 0 && !(prev == 1 && next == 1)
}

// fencingPending reports whether the connector's current task generation
// waits for its predecessors to be fenced.
func (h *Herder) fencingPending(s *clusterstate.Snapshot, name string) bool {
	if s.TaskCount(name) == 0 || !h.exactlyOnce(s, name) {
		return false
	}
	return s.FencedBeforeTaskGeneration(name)
}

// FenceZombies is the internal PUT /connectors/{c}/fence: fence the
// producers of the connector's last fenced generation and record the
// current task count, so that the current generation may start.
func (h *Herder) FenceZombies(ctx context.Context, name string) error {
	_, err := h.asLeader(ctx, func(s *clusterstate.Snapshot) ([]*kafka.Message, error) {
		if !s.Contains(name) {
			return nil, connectorNotFound(name)
		}
		if !h.exactlyOnce(s, name) {
			return nil, &BadRequestError{Msg: fmt.Sprintf("Connector %s is not an exactly-once source connector: there is nothing to fence", name)}
		}
		return h.fenceLocked(ctx, s, name)
	})
	return err
}

// fenceLocked fences the task producers of the connector's last fenced
// generation and returns the record that lets the current one start.
func (h *Herder) fenceLocked(ctx context.Context, s *clusterstate.Snapshot, name string) ([]*kafka.Message, error) {
	n := s.TaskCount(name)
	if prev, ok := s.Fencing(name); ok && prev > 0 {
		h.log.Info("fencing the previous task generation's producers", "connector", name, "tasks", prev)
		if err := h.rt.FenceZombies(ctx, name, prev); err != nil {
			return nil, fmt.Errorf("fencing the previous tasks of connector %s: %w", name, err)
		}
	}
	return []*kafka.Message{record(clusterstate.FencingRecord(name, n))}, nil
}

// exactlyOnce reports whether the connector's tasks run exactly-once:
// the worker has exactly.once.source.support=enabled and it is a source.
func (h *Herder) exactlyOnce(s *clusterstate.Snapshot, name string) bool {
	if !h.cfg.ExactlyOnceSource {
		return false
	}
	cfg, _ := s.ConnectorConfig(name)
	return h.connectorType(cfg) == api.TypeSource
}

// SessionKey returns the current inter-worker signing key.
func (h *Herder) SessionKey() ([]byte, string, bool) {
	if h.configs == nil {
		return nil, "", false
	}
	k := h.configs.Snapshot().SessionKey()
	if k == nil {
		return nil, "", false
	}
	return k.Key, k.Algorithm, true
}

// OwnsTask reports whether the cluster's latest assignment, read to the end
// of the config topic, gives task id to this worker. The worker asks it
// (worker.Config.OwnsTask) after a task's producer was fenced: a successor
// starts only after an assignment that moves the task away is committed,
// so a task still assigned here has none, and the fencing came from the
// transaction coordinator aborting a transaction that timed out (a broker
// outage longer than transaction.timeout.ms).
func (h *Herder) OwnsTask(ctx context.Context, id TaskID) (bool, error) {
	if h.configs == nil {
		return false, h.notStarted()
	}
	snap, err := h.configs.readToEnd(ctx)
	if err != nil {
		return false, err
	}
	a := snap.Assignment()
	if a == nil {
		return false, nil
	}
	wa, ok := a.Workers[h.cfg.WorkerURL]
	if !ok {
		return false, nil
	}
	for _, n := range wa.Tasks[id.Connector] {
		if n == id.Task {
			return true, nil
		}
	}
	return false, nil
}

// SetClusterLoggerLevel is PUT /admin/loggers/{ns}?scope=cluster
// (KIP-976): the leader writes a logger-cluster-<ns> record, which every
// worker, this one included, applies when it reads it.
func (h *Herder) SetClusterLoggerLevel(ctx context.Context, namespace, level string) error {
	if h.cfg.LogLevels == nil {
		return &BadRequestError{Msg: "scope=cluster is not supported by this worker; use scope=worker"}
	}
	if namespace == "" {
		return &BadRequestError{Msg: "a logger name is required"}
	}
	if _, err := logging.ParseLevel(level); err != nil {
		return &BadRequestError{Msg: err.Error()}
	}
	_, err := h.asLeader(ctx, func(*clusterstate.Snapshot) ([]*kafka.Message, error) {
		return []*kafka.Message{record(clusterstate.LoggerRecord(namespace, strings.ToUpper(level)))}, nil
	})
	return err
}
