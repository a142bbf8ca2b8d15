// Package resttest provides an in-memory implementation of rest.Herder for
// testing HTTP clients of the REST API (the CLI, the REST client package,
// the REST layer itself) without a Kafka cluster. It is a test double: it
// keeps connectors in a map, "runs" nothing, and follows Kafka Connect's
// observable semantics closely enough for HTTP-level contract tests
// (validation errors, 404/409 cases, STOPPED-only offset changes, restart
// plans). Cluster behaviour is tested against real workers elsewhere.
//
// What it must not do: stand in for the herder in anything but HTTP tests.
package resttest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/herder"
	"github.com/connectd/connectd/framework/rest"
	"github.com/connectd/connectd/framework/rest/api"
)

// Plugin classes the test herder knows.
const (
	SourceClass = "org.connectd.test.TestSourceConnector"
	SinkClass   = "org.connectd.test.TestSinkConnector"
)

// WorkerID is the worker_id of every status the test herder reports.
const WorkerID = "127.0.0.1:8083"

type connector struct {
	config  map[string]string
	target  string // STARTED PAUSED STOPPED
	tasks   []map[string]string
	state   string
	trace   string
	tstates []string
	topics  []string
	offsets []api.ConnectorOffset
}

// Herder is an in-memory rest.Herder. The zero value is not usable; call
// New. Fields may be set between requests through the setter methods.
type Herder struct {
	mu         sync.Mutex
	conns      map[string]*connector
	leaderURL  string
	isLeader   bool
	rebalance  bool
	key        []byte
	tracking   bool
	allowReset bool
	leakPw     bool
	calls      map[string]int
	fenced     []string
	pushed     map[string][]map[string]string
	health     api.Health
}

// New returns an empty test herder that is its cluster's leader, with a
// session key and topic tracking enabled.
func New() *Herder {
	return &Herder{
		conns:      map[string]*connector{},
		isLeader:   true,
		key:        []byte("0123456789abcdef0123456789abcdef"),
		tracking:   true,
		allowReset: true,
		calls:      map[string]int{},
		pushed:     map[string][]map[string]string{},
		health:     api.Health{Status: "healthy", Message: "Worker has completed startup and is ready to handle requests."},
	}
}

// SetLeader makes leader-only writes fail with *herder.NotLeaderError
// carrying url unless isLeader.
func (h *Herder) SetLeader(url string, isLeader bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.leaderURL, h.isLeader = url, isLeader
}

// SetRebalancing makes every write fail with *herder.RebalanceError.
func (h *Herder) SetRebalancing(on bool) { h.mu.Lock(); h.rebalance = on; h.mu.Unlock() }

// SetSessionKey sets the inter-worker key; nil means none known yet.
func (h *Herder) SetSessionKey(k []byte) { h.mu.Lock(); h.key = k; h.mu.Unlock() }

// SetTopicTracking sets topic.tracking.enable and topic.tracking.allow.reset.
func (h *Herder) SetTopicTracking(enable, allowReset bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tracking, h.allowReset = enable, allowReset
}

// SetHealth sets what Health returns.
func (h *Herder) SetHealth(hl api.Health) { h.mu.Lock(); h.health = hl; h.mu.Unlock() }

// LeakPasswords makes ValidateConfig return PASSWORD values unmasked, to
// test that the REST layer masks them anyway.
func (h *Herder) LeakPasswords(on bool) { h.mu.Lock(); h.leakPw = on; h.mu.Unlock() }

// FailTask marks a task FAILED with a trace (status and restart tests).
func (h *Herder) FailTask(name string, task int, trace string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.conns[name]; ok && task < len(c.tstates) {
		c.tstates[task] = "FAILED"
		c.trace = trace
	}
}

// RecordTopics adds to a connector's active topics.
func (h *Herder) RecordTopics(name string, topics ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.conns[name]; ok {
		c.topics = append(c.topics, topics...)
	}
}

// Calls returns how many times a Herder method was called.
func (h *Herder) Calls(method string) int { h.mu.Lock(); defer h.mu.Unlock(); return h.calls[method] }

// Fenced returns the connectors FenceZombies was called for.
func (h *Herder) Fenced() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.fenced...)
}

// Pushed returns the task configs PutTaskConfigs received for a connector.
func (h *Herder) Pushed(name string) []map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pushed[name]
}

// Snapshot renders the whole connector state deterministically, so tests
// can assert that a rejected request changed nothing.
func (h *Herder) Snapshot() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	type view struct {
		Config  map[string]string
		Target  string
		Tasks   []map[string]string
		State   string
		TStates []string
		Topics  []string
		Offsets []api.ConnectorOffset
	}
	m := map[string]view{}
	for n, c := range h.conns {
		m[n] = view{c.config, c.target, c.tasks, c.state, c.tstates, c.topics, c.offsets}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func (h *Herder) call(m string) { h.calls[m]++ }

// writable is the leader/rebalance gate of leader-only writes. It runs
// before existence checks: a follower forwards without knowing the answer.
func (h *Herder) writable() error {
	if h.rebalance {
		return &herder.RebalanceError{Msg: "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change); a rebalance is underway", RetryAfter: 2 * time.Second}
	}
	if !h.isLeader {
		return &herder.NotLeaderError{LeaderURL: h.leaderURL}
	}
	return nil
}

func notFound(name string) error {
	return &herder.NotFoundError{Msg: fmt.Sprintf("Connector %s not found", name)}
}

func (h *Herder) get(name string) (*connector, error) {
	c, ok := h.conns[name]
	if !ok {
		return nil, notFound(name)
	}
	return c, nil
}

func typeOf(cfg map[string]string) api.ConnectorType {
	switch cfg["connector.class"] {
	case SourceClass, "TestSource", "TestSourceConnector":
		return api.TypeSource
	case SinkClass, "TestSink", "TestSinkConnector":
		return api.TypeSink
	}
	return api.TypeUnknown
}

func (h *Herder) info(name string, c *connector) api.ConnectorInfo {
	cfg := make(map[string]string, len(c.config))
	for k, v := range c.config {
		cfg[k] = v
	}
	ids := make([]api.ConnectorTaskID, len(c.tasks))
	for i := range c.tasks {
		ids[i] = api.ConnectorTaskID{Connector: name, Task: i}
	}
	return api.ConnectorInfo{Name: name, Config: cfg, Tasks: ids, Type: typeOf(c.config)}
}

// validate mimics AbstractHerder's checks: a known connector.class, a
// positive tasks.max, and a sink's topics.
func validate(cfg map[string]string) []string {
	var errs []string
	t := typeOf(cfg)
	if cfg["connector.class"] == "" {
		errs = append(errs, "Missing required configuration \"connector.class\" which has no default value.")
	} else if t == api.TypeUnknown {
		errs = append(errs, fmt.Sprintf("Invalid value %s for configuration connector.class: Class %s could not be found.", cfg["connector.class"], cfg["connector.class"]))
	}
	if v, ok := cfg["tasks.max"]; ok {
		if n, err := strconv.Atoi(v); err != nil || n < 1 {
			errs = append(errs, fmt.Sprintf("Invalid value %s for configuration tasks.max: Value must be at least 1", v))
		}
	}
	if t == api.TypeSink && cfg["topics"] == "" && cfg["topics.regex"] == "" {
		errs = append(errs, "Must configure one of topics or topics.regex")
	}
	return errs
}

func invalid(errs []string) error {
	return &herder.BadRequestError{Msg: fmt.Sprintf("Connector configuration is invalid and contains the following %d error(s):\n%s\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`", len(errs), strings.Join(errs, "\n"))}
}

func taskConfigs(cfg map[string]string) []map[string]string {
	n := 1
	if v, err := strconv.Atoi(cfg["tasks.max"]); err == nil {
		n = v
	}
	out := make([]map[string]string, n)
	for i := range out {
		out[i] = map[string]string{"task.class": cfg["connector.class"] + "Task", "task.id": strconv.Itoa(i)}
	}
	return out
}

func stateFor(target string) string {
	switch target {
	case "PAUSED":
		return "PAUSED"
	case "STOPPED":
		return "STOPPED"
	}
	return "RUNNING"
}

func (h *Herder) ServerInfo(context.Context) (api.ServerInfo, error) {
	return api.ServerInfo{Version: "test", Commit: "0000000", KafkaClusterID: "test-cluster"}, nil
}

func (h *Herder) Health(context.Context) api.Health {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.health
}

func (h *Herder) Connectors(context.Context) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.conns))
	for n := range h.conns {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

func (h *Herder) ConnectorInfo(_ context.Context, name string) (api.ConnectorInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.get(name)
	if err != nil {
		return api.ConnectorInfo{}, err
	}
	return h.info(name, c), nil
}

func (h *Herder) ConnectorConfig(_ context.Context, name string) (map[string]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.get(name)
	if err != nil {
		return nil, err
	}
	return h.info(name, c).Config, nil
}

func (h *Herder) PutConnectorConfig(_ context.Context, name string, props map[string]string, allowReplace bool, initial api.InitialState) (api.ConnectorInfo, bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.call("PutConnectorConfig")
	if errs := validate(props); len(errs) > 0 {
		return api.ConnectorInfo{}, false, invalid(errs)
	}
	if err := h.writable(); err != nil {
		return api.ConnectorInfo{}, false, err
	}
	c, exists := h.conns[name]
	if exists && !allowReplace {
		return api.ConnectorInfo{}, false, &herder.AlreadyExistsError{Msg: fmt.Sprintf("Connector %s already exists", name)}
	}
	cfg := make(map[string]string, len(props))
	for k, v := range props {
		cfg[k] = v
	}
	if !exists {
		target := "STARTED"
		switch initial {
		case api.InitialPaused:
			target = "PAUSED"
		case api.InitialStopped:
			target = "STOPPED"
		}
		c = &connector{target: target}
		h.conns[name] = c
	}
	c.config = cfg
	c.state = stateFor(c.target)
	if c.target == "STOPPED" {
		c.tasks, c.tstates = nil, nil
	} else {
		c.tasks = taskConfigs(cfg)
		c.tstates = make([]string, len(c.tasks))
		for i := range c.tstates {
			c.tstates[i] = stateFor(c.target)
		}
	}
	return h.info(name, c), !exists, nil
}

func (h *Herder) PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (api.ConnectorInfo, error) {
	h.mu.Lock()
	c, err := h.get(name)
	if err != nil {
		h.mu.Unlock()
		return api.ConnectorInfo{}, err
	}
	merged := map[string]string{}
	for k, v := range c.config {
		merged[k] = v
	}
	h.mu.Unlock()
	for k, v := range patch {
		if v == nil {
			delete(merged, k)
		} else {
			merged[k] = *v
		}
	}
	info, _, err := h.PutConnectorConfig(ctx, name, merged, true, "")
	return info, err
}

func (h *Herder) DeleteConnector(_ context.Context, name string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.call("DeleteConnector")
	if err := h.writable(); err != nil {
		return err
	}
	if _, err := h.get(name); err != nil {
		return err
	}
	delete(h.conns, name)
	return nil
}

func (h *Herder) status(name string, c *connector) api.ConnectorStateInfo {
	st := api.ConnectorStateInfo{Name: name, Type: typeOf(c.config),
		Connector: api.ConnectorState{State: c.state, WorkerID: WorkerID}}
	for i, s := range c.tstates {
		ts := api.TaskState{ID: i, State: s, WorkerID: WorkerID}
		if s == "FAILED" {
			ts.Trace = c.trace
		}
		st.Tasks = append(st.Tasks, ts)
	}
	return st
}

func (h *Herder) ConnectorStatus(_ context.Context, name string) (api.ConnectorStateInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.conns[name]
	if !ok {
		return api.ConnectorStateInfo{}, &herder.NotFoundError{Msg: fmt.Sprintf("No status found for connector %s", name)}
	}
	return h.status(name, c), nil
}

func (h *Herder) TaskConfigs(_ context.Context, name string) ([]api.TaskInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.get(name)
	if err != nil {
		return nil, err
	}
	out := make([]api.TaskInfo, len(c.tasks))
	for i, t := range c.tasks {
		out[i] = api.TaskInfo{ID: api.ConnectorTaskID{Connector: name, Task: i}, Config: t}
	}
	return out, nil
}

func (h *Herder) TaskStatus(_ context.Context, id api.ConnectorTaskID) (api.TaskState, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.conns[id.Connector]
	if !ok || id.Task >= len(c.tstates) {
		return api.TaskState{}, &herder.NotFoundError{Msg: fmt.Sprintf("No status found for task %s", id)}
	}
	return h.status(id.Connector, c).Tasks[id.Task], nil
}

func (h *Herder) RestartConnector(_ context.Context, name string, includeTasks, onlyFailed bool) (*api.ConnectorStateInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.call("RestartConnector")
	if err := h.writable(); err != nil {
		return nil, err
	}
	c, err := h.get(name)
	if err != nil {
		return nil, err
	}
	if !includeTasks && !onlyFailed {
		return nil, nil
	}
	// The plan shows what will restart as RESTARTING, then the restart
	// "completes" at once.
	plan := h.status(name, c)
	if !onlyFailed || c.state == "FAILED" {
		plan.Connector.State = "RESTARTING"
	}
	if includeTasks {
		for i := range plan.Tasks {
			if !onlyFailed || plan.Tasks[i].State == "FAILED" {
				plan.Tasks[i].State = "RESTARTING"
				plan.Tasks[i].Trace = ""
				c.tstates[i] = stateFor(c.target)
			}
		}
	}
	return &plan, nil
}

func (h *Herder) RestartTask(_ context.Context, id api.ConnectorTaskID) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.call("RestartTask")
	if err := h.writable(); err != nil {
		return err
	}
	c, ok := h.conns[id.Connector]
	if !ok || id.Task >= len(c.tasks) {
		return &herder.NotFoundError{Msg: fmt.Sprintf("Unknown task: %s", id)}
	}
	c.tstates[id.Task] = stateFor(c.target)
	return nil
}

func (h *Herder) setTarget(name, target string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.call("SetTarget")
	if h.rebalance {
		return h.writable()
	}
	if target == "STOPPED" && !h.isLeader { // stop is leader-only; pause/resume are not
		return &herder.NotLeaderError{LeaderURL: h.leaderURL}
	}
	c, err := h.get(name)
	if err != nil {
		return err
	}
	wasStopped := c.target == "STOPPED"
	c.target = target
	c.state = stateFor(target)
	switch {
	case target == "STOPPED":
		c.tasks, c.tstates = nil, nil
	case wasStopped:
		c.tasks = taskConfigs(c.config)
		c.tstates = make([]string, len(c.tasks))
	}
	for i := range c.tstates {
		c.tstates[i] = stateFor(target)
	}
	return nil
}

func (h *Herder) PauseConnector(_ context.Context, name string) error {
	return h.setTarget(name, "PAUSED")
}
func (h *Herder) ResumeConnector(_ context.Context, name string) error {
	return h.setTarget(name, "STARTED")
}
func (h *Herder) StopConnector(_ context.Context, name string) error {
	return h.setTarget(name, "STOPPED")
}

func (h *Herder) ConnectorTopics(_ context.Context, name string) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.tracking {
		return nil, &herder.ForbiddenError{Msg: "Topic tracking is disabled."}
	}
	c, err := h.get(name)
	if err != nil {
		return nil, err
	}
	return append([]string(nil), c.topics...), nil
}

func (h *Herder) ResetConnectorTopics(_ context.Context, name string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.tracking || !h.allowReset {
		return &herder.ForbiddenError{Msg: "Topic tracking reset is disabled."}
	}
	c, err := h.get(name)
	if err != nil {
		return err
	}
	c.topics = nil
	return nil
}

func (h *Herder) Offsets(_ context.Context, name string) (api.ConnectorOffsets, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.get(name)
	if err != nil {
		return api.ConnectorOffsets{}, err
	}
	return api.ConnectorOffsets{Offsets: append([]api.ConnectorOffset(nil), c.offsets...)}, nil
}

func stoppedOnly(name string) error {
	return &herder.BadRequestError{Msg: fmt.Sprintf("Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/%s/stop' endpoint", name)}
}

func (h *Herder) AlterOffsets(_ context.Context, name string, offsets api.ConnectorOffsets) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.call("AlterOffsets")
	if err := h.writable(); err != nil {
		return "", err
	}
	c, err := h.get(name)
	if err != nil {
		return "", err
	}
	if c.target != "STOPPED" {
		return "", stoppedOnly(name)
	}
	for _, o := range offsets.Offsets {
		key, _ := json.Marshal(o.Partition)
		replaced := false
		for i, e := range c.offsets {
			if k, _ := json.Marshal(e.Partition); string(k) == string(key) {
				if o.Offset == nil {
					c.offsets = append(c.offsets[:i], c.offsets[i+1:]...)
				} else {
					c.offsets[i] = o
				}
				replaced = true
				break
			}
		}
		if !replaced && o.Offset != nil {
			c.offsets = append(c.offsets, o)
		}
	}
	return "The offsets for this connector have been altered successfully", nil
}

func (h *Herder) ResetOffsets(_ context.Context, name string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.call("ResetOffsets")
	if err := h.writable(); err != nil {
		return "", err
	}
	c, err := h.get(name)
	if err != nil {
		return "", err
	}
	if c.target != "STOPPED" {
		return "", stoppedOnly(name)
	}
	c.offsets = nil
	return "The offsets for this connector have been reset successfully", nil
}

func (h *Herder) Plugins(_ context.Context, connectorsOnly bool) ([]api.PluginInfo, error) {
	ps := []api.PluginInfo{
		{Class: SinkClass, Type: "sink", Version: "1.0.0"},
		{Class: SourceClass, Type: "source", Version: "1.0.0"},
	}
	if !connectorsOnly {
		ps = append(ps,
			api.PluginInfo{Class: "org.apache.kafka.connect.converters.ByteArrayConverter", Type: "converter"},
			api.PluginInfo{Class: "org.apache.kafka.connect.transforms.InsertField$Value", Type: "transformation"},
		)
	}
	return ps, nil
}

func str(s string) *string { return &s }

func pluginKeys(class string) ([]configdef.KeyInfo, error) {
	switch class {
	case SourceClass, "TestSource", "TestSourceConnector", SinkClass, "TestSink", "TestSinkConnector":
	default:
		return nil, &herder.NotFoundError{Msg: fmt.Sprintf("Unknown plugin %s.", class)}
	}
	return []configdef.KeyInfo{
		{Name: "tasks.max", Type: configdef.Int, DefaultValue: str("1"), Importance: configdef.High, Documentation: "Maximum number of tasks to use for this connector.", Group: str("Common"), Order: 3, Width: configdef.WidthShort, DisplayName: "Tasks max", Dependents: []string{}},
		{Name: "test.password", Type: configdef.Password, Required: false, DefaultValue: nil, Importance: configdef.High, Documentation: "A secret.", Group: str("Test"), Order: 1, Width: configdef.WidthMedium, DisplayName: "Password", Dependents: []string{}},
	}, nil
}

func (h *Herder) PluginConfig(_ context.Context, class, _ string) ([]configdef.KeyInfo, error) {
	return pluginKeys(class)
}

func (h *Herder) ValidateConfig(_ context.Context, class string, props map[string]string) (configdef.ValidationResult, error) {
	keys, err := pluginKeys(class)
	if err != nil {
		return configdef.ValidationResult{}, err
	}
	h.mu.Lock()
	leak := h.leakPw
	h.mu.Unlock()
	errs := validate(props)
	res := configdef.ValidationResult{Name: class, ErrorCount: len(errs), Groups: []string{"Common", "Test"}}
	for _, k := range keys {
		v := configdef.ConfigValue{Name: k.Name, RecommendedValues: []string{}, Errors: []string{}, Visible: true}
		if pv, ok := props[k.Name]; ok {
			if k.Type == configdef.Password && !leak {
				pv = "[hidden]"
			}
			v.Value = &pv
		}
		if k.Name == "tasks.max" {
			for _, e := range errs {
				if strings.Contains(e, "tasks.max") {
					v.Errors = append(v.Errors, e)
				}
			}
		}
		res.Configs = append(res.Configs, configdef.ConfigInfo{Definition: &k, Value: v})
	}
	return res, nil
}

func (h *Herder) PutTaskConfigs(_ context.Context, name string, configs []map[string]string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.call("PutTaskConfigs")
	if err := h.writable(); err != nil {
		return err
	}
	if _, err := h.get(name); err != nil {
		return err
	}
	h.pushed[name] = configs
	return nil
}

func (h *Herder) FenceZombies(_ context.Context, name string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.call("FenceZombies")
	if err := h.writable(); err != nil {
		return err
	}
	if _, err := h.get(name); err != nil {
		return err
	}
	h.fenced = append(h.fenced, name)
	return nil
}

func (h *Herder) SessionKey() ([]byte, string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.key, "HmacSHA256", h.key != nil
}

var _ rest.Herder = (*Herder)(nil)
