package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/internal/kafkalog"
	"github.com/connectd/connectd/offsets"
	"github.com/connectd/connectd/plugins/host"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/prometheus/client_golang/prometheus"
)

// Errors callers branch on.
var (
	ErrClosed           = errors.New("worker is closed")
	ErrUnknownConnector = errors.New("connector is not running on this worker")
	ErrTaskExists       = errors.New("task is already running on this worker")
	ErrUnknownTask      = errors.New("task is not running on this worker")
)

// ProcessLimitError: starting a connector or task here would launch one
// plugin process more than Config.MaxPluginProcesses allows (a plugin's
// first process here, or an isolated connector's).
type ProcessLimitError struct {
	Connector string
	Limit     int
}

func (e *ProcessLimitError) Error() string {
	return fmt.Sprintf("connector %s: no plugin process started: this worker already runs %d, the limit %s=%d; it is retried with backoff (stop connectors here, add workers or raise the limit)",
		e.Connector, e.Limit, KeyMaxPluginProcesses, e.Limit)
}

// Worker runs connectors and tasks assigned to this process. The herder
// decides what runs where; the Worker runs it, reports every state change
// to its StatusListener, and restarts what fails.
type Worker struct {
	cfg       Config
	status    StatusListener
	log       *slog.Logger
	metrics   *metrics
	starts    *startGate
	producers *producerPool

	// follower follows the worker's offsets topic for its source tasks'
	// starts; created by the first one.
	followMu sync.Mutex
	follower *offsets.Follower

	mu     sync.Mutex
	closed bool
	procs  map[string]*procEntry // by procKey
	// liveProcs counts the procEntries with a process (proc != nil),
	// bounded by cfg.MaxPluginProcesses.
	liveProcs  atomic.Int64
	connectors map[string]*connectorRuntime
	tasks      map[TaskID]*taskRuntime
}

// New checks the configuration and the worker's offsets topic (it must
// exist, be compacted, and have OffsetsPartitions partitions) and returns
// a Worker that runs nothing yet.
func New(ctx context.Context, cfg Config, status StatusListener) (*Worker, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	if status == nil {
		status = NopStatus{}
	}
	m, err := newMetrics(cfg.Metrics)
	if err != nil {
		return nil, fmt.Errorf("worker: metrics: %w", err)
	}
	w := &Worker{
		cfg: cfg, status: status, log: cfg.Logger, metrics: m, starts: newStartGate(cfg.StartConcurrency, m),
		producers: newProducerPool(cfg.Logger, m.taskProducers),
		procs:     map[string]*procEntry{}, connectors: map[string]*connectorRuntime{}, tasks: map[TaskID]*taskRuntime{},
	}
	if err := cfg.Metrics.Register(newCollector(w)); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) { // several workers in one process (tests) share a registry
			return nil, fmt.Errorf("worker: metrics: %w", err)
		}
	}
	if cfg.OffsetsTopic != "" {
		if err := w.verifyOffsetsTopic(ctx, cfg.OffsetsTopic, cfg.OffsetsPartitions); err != nil {
			return nil, fmt.Errorf("worker: %w", err)
		}
	}
	return w, nil
}

func (w *Worker) newAdmin(connProps map[string]string) (*kafkalog.Admin, error) {
	cm, err := w.clientConfig(adminClient, connProps, nil)
	if err != nil {
		return nil, err
	}
	return kafkalog.NewAdmin(w.log.With("connector", connProps["name"]), cm)
}

func (w *Worker) verifyOffsetsTopic(ctx context.Context, topic string, partitions int) error {
	cm := kafka.ConfigMap{}
	for k, v := range w.internalClient() {
		cm[k] = v
	}
	admin, err := kafkalog.NewAdmin(w.log, cm)
	if err != nil {
		return err
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return offsets.VerifyTopic(ctx, admin.AdminClient, topic, partitions)
}

// ConnectorPluginVersionKey chooses the version of the connector's plugin
// (KIP-891): a version, a Maven version range, or empty or "latest" for
// the highest installed one.
const ConnectorPluginVersionKey = "connector.plugin.version"

// lookupPlugin returns the installed plugin a connector config asks for:
// its connector.class at the highest version that satisfies
// connector.plugin.version. A version no installed one satisfies, or a
// range that does not parse, is a *ConfigError on that key.
func (w *Worker) lookupPlugin(props map[string]string) (host.Manifest, error) {
	class := strings.TrimSpace(props["connector.class"])
	r, err := host.ParseVersionRange(props[ConnectorPluginVersionKey])
	if err != nil {
		return host.Manifest{}, &ConfigError{Key: ConnectorPluginVersionKey,
			Message: fmt.Sprintf("Invalid version range for %s: %v", class, err)}
	}
	m, err := w.cfg.Plugins.LookupVersion(class, r)
	if errors.Is(err, host.ErrNoMatchingVersion) {
		return host.Manifest{}, &ConfigError{Key: ConnectorPluginVersionKey, Message: err.Error()}
	}
	if err != nil {
		return host.Manifest{}, fmt.Errorf("connector.class %q: %w", class, err)
	}
	return m, nil
}

// Validate validates a connector configuration: the plugin checks the
// common keys, converters, transforms and the connector's own keys; the
// worker adds its client-override policy.
func (w *Worker) Validate(ctx context.Context, props map[string]string) (configdef.ValidationResult, error) {
	class := props["connector.class"]
	if class == "" {
		return configdef.ValidationResult{}, &ConfigError{Key: "connector.class", Message: "missing required configuration \"connector.class\" which has no default value"}
	}
	m, err := w.lookupPlugin(props)
	if err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) {
			return configdef.ValidationResult{}, ce
		}
		return configdef.ValidationResult{}, &ConfigError{Key: "connector.class", Message: err.Error()}
	}
	p, done, err := w.validationProcess(ctx, m)
	if err != nil {
		var pve *host.ProtocolVersionError
		switch {
		case errors.Is(err, host.ErrChecksumMismatch):
			// The installed binary is not the one its manifest vouches
			// for: refuse the class, naming the fix.
			return configdef.ValidationResult{}, &ConfigError{Key: "connector.class",
				Message: fmt.Sprintf("plugin %s is refused: %v; reinstall it with `connectd plugin install`", class, err)}
		case errors.As(err, &pve):
			return configdef.ValidationResult{}, &ConfigError{Key: "connector.class", Message: pve.Error()}
		}
		return configdef.ValidationResult{}, err
	}
	defer done()
	res, err := p.Validate(ctx, props, w.cfg.ConverterDefaults)
	if err != nil {
		return res, err
	}
	for _, ce := range w.checkOverrides(props) {
		addError(&res, ce.Key, ce.Message)
	}
	for _, ce := range w.checkTopicCreation(m.Type, props) {
		addTopicCreationError(&res, props, ce)
	}
	return res, nil
}

// addError attaches an error to key in a validation result, adding the
// key when the result does not list it.
func addError(r *configdef.ValidationResult, key, msg string) {
	for i := range r.Configs {
		if r.Configs[i].Value.Name == key {
			r.Configs[i].Value.Errors = append(r.Configs[i].Value.Errors, msg)
			r.ErrorCount++
			return
		}
	}
	r.Configs = append(r.Configs, configdef.ConfigInfo{Value: configdef.ConfigValue{
		Name: key, Errors: []string{msg}, RecommendedValues: []string{}, Visible: true,
	}})
	r.ErrorCount++
}

// StartTask starts a task on this worker in the given target state. It
// returns once the task's supervisor runs; startup failures are reported
// as the FAILED state (with automatic restarts), not returned.
func (w *Worker) StartTask(ctx context.Context, id TaskID, connProps, taskProps map[string]string, target TargetState) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if _, ok := w.tasks[id]; ok {
		return fmt.Errorf("start %s: %w", id, ErrTaskExists)
	}
	if target == "" {
		target = TargetStarted
	}
	t := w.newTaskRuntime(id, clone(connProps), clone(taskProps), target)
	w.tasks[id] = t
	t.start()
	return nil
}

func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// StopTasks stops tasks gracefully (they commit what they can) within
// TaskShutdownTimeout in total, then abandons the stragglers: their
// blocking calls are cancelled and they are no longer waited for. An
// abandoned exactly-once task is fenced by its successor.
func (w *Worker) StopTasks(ctx context.Context, ids []TaskID) error {
	w.mu.Lock()
	var rts []*taskRuntime
	for _, id := range ids {
		if t, ok := w.tasks[id]; ok {
			rts = append(rts, t)
			delete(w.tasks, id)
		}
	}
	w.mu.Unlock()
	w.stopRuntimes(ctx, rts)
	return nil
}

func (w *Worker) stopRuntimes(ctx context.Context, rts []*taskRuntime) {
	for _, t := range rts {
		t.stop()
	}
	deadline := time.NewTimer(w.cfg.TaskShutdownTimeout)
	defer deadline.Stop()
	var abandoned []*taskRuntime
	for i, t := range rts {
		select {
		case <-t.done:
			continue
		case <-deadline.C:
		case <-ctx.Done():
		}
		abandoned = rts[i:]
		break
	}
	for _, t := range abandoned {
		t.hardCancel()
	}
	// One grace period for all of them: once it is over, the rest are
	// not waited for either.
	grace := time.NewTimer(5 * time.Second)
	defer grace.Stop()
	expired := false
	for _, t := range abandoned {
		if !expired {
			select {
			case <-t.done:
				continue
			case <-grace.C:
				expired = true
			}
		}
		select {
		case <-t.done:
		default:
			t.abandoned.Store(true)
			t.log.Warn("task did not stop within the graceful shutdown timeout; abandoned", "timeout", w.cfg.TaskShutdownTimeout)
		}
	}
	for _, t := range rts {
		select {
		case <-t.done:
			t.tm.remove()
		default:
		}
		t.hardCancel()
	}
	gone := map[string]bool{}
	for _, t := range rts {
		gone[t.id.Connector] = true
	}
	for c := range gone {
		w.forgetIfGone(c)
	}
}

// forgetIfGone drops the connector's plugin-process series once neither
// its instance nor a task of it runs here any more: a deleted connector
// leaves no series behind.
func (w *Worker) forgetIfGone(connector string) {
	if w.hasWork(connector) {
		return
	}
	labels := prometheus.Labels{"connector": connector}
	w.metrics.pluginRestarts.DeletePartialMatch(labels)
	w.metrics.pluginLogDrops.DeletePartialMatch(labels)
}

// hasWork reports whether the connector's instance or a task of it runs
// on this worker.
func (w *Worker) hasWork(connector string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.connectors[connector]; ok {
		return true
	}
	for id := range w.tasks {
		if id.Connector == connector {
			return true
		}
	}
	return false
}

// SetTargetState pauses or resumes a connector's tasks on this worker (and
// records the target for its connector instance). STOPPED stops the
// connector instance and its tasks here.
func (w *Worker) SetTargetState(ctx context.Context, connector string, target TargetState) error {
	w.mu.Lock()
	c := w.connectors[connector]
	var rts []*taskRuntime
	var stop []TaskID
	for id, t := range w.tasks {
		if id.Connector == connector {
			rts = append(rts, t)
			stop = append(stop, id)
		}
	}
	w.mu.Unlock()
	if target == TargetStopped {
		if err := w.StopTasks(ctx, stop); err != nil {
			return err
		}
	} else {
		for _, t := range rts {
			t.setTarget(target)
		}
	}
	if c != nil {
		c.setTarget(ctx, target)
	}
	return nil
}

// RestartTask restarts a task now: the running incarnation stops
// gracefully and a new one starts, whatever its backoff.
func (w *Worker) RestartTask(ctx context.Context, id TaskID) error {
	w.mu.Lock()
	t, ok := w.tasks[id]
	w.mu.Unlock()
	if !ok {
		return fmt.Errorf("restart %s: %w", id, ErrUnknownTask)
	}
	t.requestRestart()
	return nil
}

// TaskStatus returns a task's current state and trace.
func (w *Worker) TaskStatus(id TaskID) (State, string, error) {
	w.mu.Lock()
	t, ok := w.tasks[id]
	w.mu.Unlock()
	if !ok {
		return StateUnassigned, "", fmt.Errorf("%s: %w", id, ErrUnknownTask)
	}
	s, trace := t.status()
	return s, trace, nil
}

// RunningTasks lists the tasks this worker runs (in any state), sorted.
func (w *Worker) RunningTasks() []TaskID {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]TaskID, 0, len(w.tasks))
	for id := range w.tasks {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Connector != out[j].Connector {
			return out[i].Connector < out[j].Connector
		}
		return out[i].Task < out[j].Task
	})
	return out
}

// FenceZombies fences the transactional producers of a connector's tasks
// 0..taskCount-1 (${group.id}-${connector}-${n}) before a new generation of
// tasks starts: each open transaction is aborted and the old producers
// can no longer write. Kafka Connect calls Admin.fenceProducers;
// confluent-kafka-go has no such call, so this initialises a producer with
// each transactional id, which bumps the epoch the same way.
func (w *Worker) FenceZombies(ctx context.Context, connector string, taskCount int) error {
	if w.cfg.GroupID == "" {
		return errors.New("fence zombies: the worker has no group.id")
	}
	errs := make([]error, taskCount)
	var wg sync.WaitGroup
	for n := range taskCount {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[n] = w.fence(ctx, transactionalID(w.cfg.GroupID, connector, n))
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (w *Worker) fence(ctx context.Context, txID string) error {
	// It only initialises transactions: no deliveries, so the Go-side
	// channels can be small (their million-entry defaults cost 24 MiB).
	cm := kafka.ConfigMap{"transactional.id": txID, "go.delivery.reports": false,
		"go.produce.channel.size": 0, "go.events.channel.size": 1000}
	for k, v := range w.internalClient() {
		cm[k] = v
	}
	p, err := kafkalog.NewProducer(w.log, cm)
	if err != nil {
		return fmt.Errorf("fence %s: %w", txID, err)
	}
	defer p.Close()
	if err := p.InitTransactions(ctx); err != nil {
		return fmt.Errorf("fence %s: %w", txID, err)
	}
	return nil
}

func transactionalID(group, connector string, task int) string {
	return fmt.Sprintf("%s-%s-%d", group, connector, task)
}

// Close stops every task (gracefully, within TaskShutdownTimeout) and
// connector, and the plugin processes.
func (w *Worker) Close(ctx context.Context) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	var rts []*taskRuntime
	for id, t := range w.tasks {
		rts = append(rts, t)
		delete(w.tasks, id)
	}
	var conns []string
	for name := range w.connectors {
		conns = append(conns, name)
	}
	w.mu.Unlock()
	w.stopRuntimes(ctx, rts)
	for _, name := range conns {
		_ = w.StopConnector(ctx, name)
	}
	w.closeProcesses(ctx)
	w.followMu.Lock()
	if w.follower != nil {
		w.follower.Close()
		w.follower = nil
	}
	w.followMu.Unlock()
	return nil
}

// offsetsFollower returns the follower of the worker's offsets topic,
// starting it on first use.
func (w *Worker) offsetsFollower(ctx context.Context) (*offsets.Follower, error) {
	w.followMu.Lock()
	defer w.followMu.Unlock()
	if w.follower != nil {
		return w.follower, nil
	}
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	store, err := offsets.NewStore(offsets.Config{Topic: w.cfg.OffsetsTopic, Client: w.internalClient(), Logger: w.log})
	if err != nil {
		return nil, err
	}
	if w.follower, err = store.Follow(ctx); err != nil {
		return nil, err
	}
	return w.follower, nil
}

// newRunner builds the runner for a task from its connector's plugin type
// and the worker's exactly-once setting.
func (w *Worker) newRunner(t *taskRuntime) (runner, error) {
	class := t.connProps["connector.class"]
	m, err := w.lookupPlugin(t.connProps)
	if err != nil {
		return nil, err
	}
	t.tm.forKind(m.Type)
	switch m.Type {
	case sdk.Source:
		return newSourceRunner(w, t)
	case sdk.Sink:
		return newSinkRunner(w, t)
	}
	return nil, fmt.Errorf("connector.class %q: plugin type %q is neither source nor sink", class, m.Type)
}
