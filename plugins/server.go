package plugins

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/framework/connconfig"
	"github.com/connectd/connectd/framework/convert"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/plugins/internal/datachan"
	"github.com/connectd/connectd/plugins/internal/wire"
	"github.com/connectd/connectd/plugins/pluginpb"
)

// server implements the plugin protocol for one connector class. A process
// runs any number of connector instances, each made by newConn and known by
// its connector name, and any number of tasks (each with a fresh instance
// of its own, as its connector instance may run on another worker).
type server struct {
	pluginpb.UnimplementedPluginServer

	newConn func() sdk.Connector
	spec    sdk.Spec
	log     *slog.Logger
	maxMsg  int
	// converters are the converter classes tasks may use (nil: built-ins).
	converters *convert.Set

	mu      sync.Mutex
	running map[string]*runningConnector
	// gatherers are the metrics of the running tasks by connector and
	// task: a task started again while its predecessor is stuck in the
	// connector's code replaces the predecessor's registry, so the two
	// are never gathered together.
	gatherers map[taskKey]*prometheus.Registry
	tasks     sync.WaitGroup
	stopping  <-chan struct{} // closed by shutdown (stopCtx.Done)
	stopCtx   context.Context // cancelled by shutdown
	stop      context.CancelFunc
	data      *datachan.Conn // the task streams
}

// taskKey names a task within a plugin process.
type taskKey struct {
	connector string
	task      int
}

func newServer(newConn func() sdk.Connector, spec sdk.Spec, log *slog.Logger, maxMsg int) *server {
	stopCtx, stop := context.WithCancel(context.Background())
	return &server{
		newConn: newConn, spec: spec, log: log, maxMsg: maxMsg,
		running:   map[string]*runningConnector{},
		gatherers: map[taskKey]*prometheus.Registry{},
		stopping:  stopCtx.Done(), stopCtx: stopCtx, stop: stop,
	}
}

// shutdown stops every running task stream and waits for them, at most d.
func (s *server) shutdown(d time.Duration) {
	s.stop()
	done := make(chan struct{})
	go func() { s.tasks.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		s.log.Warn("tasks did not stop in time", "timeout", d)
	}
	s.mu.Lock()
	names := make([]string, 0, len(s.running))
	for name := range s.running {
		names = append(names, name)
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.stopConnector(ctx, name)
		}()
	}
	wg.Wait()
}

func (s *server) Spec(context.Context, *pluginpb.SpecRequest) (*pluginpb.SpecResponse, error) {
	return specToPB(s.spec), nil
}

func (s *server) Validate(ctx context.Context, req *pluginpb.ValidateRequest) (*pluginpb.ValidateResponse, error) {
	res := connconfig.ValidateWith(ctx, s.converters, s.newConn(), req.GetProps(), chain.Defaults(req.GetDefaults()))
	return wire.ValidationToPB(res), nil
}

// runningConnector is the started connector instance and its event queue.
type runningConnector struct {
	name   string
	conn   sdk.Connector
	cancel context.CancelFunc
	done   chan struct{} // closed when stopped
	log    *slog.Logger

	mu       sync.Mutex
	reconfig bool
	failed   error
	notify   chan struct{} // cap 1
}

func (rc *runningConnector) RequestTaskReconfiguration() {
	rc.mu.Lock()
	rc.reconfig = true
	rc.mu.Unlock()
	rc.wake()
}

func (rc *runningConnector) RaiseError(err error) {
	rc.mu.Lock()
	if rc.failed == nil {
		rc.failed = err
	}
	rc.mu.Unlock()
	rc.wake()
}

func (rc *runningConnector) Logger() *slog.Logger { return rc.log }

func (rc *runningConnector) wake() {
	select {
	case rc.notify <- struct{}{}:
	default:
	}
}

// take returns and clears the pending events.
func (rc *runningConnector) take() (reconfig bool, failed error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	reconfig, failed = rc.reconfig, rc.failed
	rc.reconfig = false
	rc.failed = nil
	return reconfig, failed
}

func (s *server) StartConnector(_ context.Context, req *pluginpb.StartConnectorRequest) (*pluginpb.StartConnectorResponse, error) {
	name := req.GetName()
	s.mu.Lock()
	if _, ok := s.running[name]; ok {
		s.mu.Unlock()
		return nil, status.Errorf(codes.FailedPrecondition, "connector %q already runs in this plugin process", name)
	}
	life, cancel := context.WithCancel(context.Background())
	rc := &runningConnector{
		name: name, conn: s.newConn(), cancel: cancel, done: make(chan struct{}),
		log: s.log.With("connector", name), notify: make(chan struct{}, 1),
	}
	s.running[name] = rc
	s.mu.Unlock()

	// Start gets a context that lives as long as the connector: connectors
	// that watch their environment keep using it after Start returns.
	if err := rc.conn.Start(life, rc, req.GetProps()); err != nil {
		s.mu.Lock()
		delete(s.running, name)
		s.mu.Unlock()
		cancel()
		close(rc.done)
		return nil, status.Errorf(codes.Unknown, "connector %s failed to start: %v", req.GetName(), err)
	}
	return &pluginpb.StartConnectorResponse{}, nil
}

func (s *server) connector(name string) (*runningConnector, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rc, ok := s.running[name]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "connector %q is not running in this plugin process", name)
	}
	return rc, nil
}

func (s *server) TaskConfigs(ctx context.Context, req *pluginpb.TaskConfigsRequest) (*pluginpb.TaskConfigsResponse, error) {
	rc, err := s.connector(req.GetName())
	if err != nil {
		return nil, err
	}
	cfgs, err := rc.conn.TaskConfigs(ctx, int(req.GetMaxTasks()))
	if err != nil {
		return nil, status.Errorf(codes.Unknown, "connector %s: task configs: %v", req.GetName(), err)
	}
	if len(cfgs) > int(req.GetMaxTasks()) {
		return nil, status.Errorf(codes.Internal, "connector %s returned %d task configs for tasks.max=%d", req.GetName(), len(cfgs), req.GetMaxTasks())
	}
	out := &pluginpb.TaskConfigsResponse{}
	for _, c := range cfgs {
		out.Configs = append(out.Configs, &pluginpb.TaskConfig{Props: c})
	}
	return out, nil
}

func (s *server) ConnectorEvents(req *pluginpb.ConnectorEventsRequest, stream pluginpb.Plugin_ConnectorEventsServer) error {
	rc, err := s.connector(req.GetName())
	if err != nil {
		return err
	}
	for {
		reconfig, failed := rc.take()
		if reconfig {
			if err := stream.Send(&pluginpb.ConnectorEvent{Event: &pluginpb.ConnectorEvent_ReconfigurationRequested{ReconfigurationRequested: &pluginpb.Empty{}}}); err != nil {
				return err
			}
		}
		if failed != nil {
			if err := stream.Send(&pluginpb.ConnectorEvent{Event: &pluginpb.ConnectorEvent_Failed{Failed: wire.ErrorToPB(failed)}}); err != nil {
				return err
			}
		}
		select {
		case <-rc.notify:
		case <-rc.done:
			return nil
		case <-stream.Context().Done():
			return nil
		}
	}
}

func (s *server) StopConnector(ctx context.Context, req *pluginpb.StopConnectorRequest) (*pluginpb.StopConnectorResponse, error) {
	if err := s.stopConnector(ctx, req.GetName()); err != nil {
		return nil, err
	}
	return &pluginpb.StopConnectorResponse{}, nil
}

func (s *server) stopConnector(ctx context.Context, name string) error {
	// Taken out of the map first: one stop per instance, however many
	// callers ask (the host and shutdown).
	s.mu.Lock()
	rc, ok := s.running[name]
	delete(s.running, name)
	s.mu.Unlock()
	if !ok {
		return status.Errorf(codes.NotFound, "connector %q is not running in this plugin process", name)
	}
	err := rc.conn.Stop(ctx)
	rc.cancel()
	close(rc.done)
	if err != nil {
		return status.Errorf(codes.Unknown, "connector %s: stop: %v", name, err)
	}
	return nil
}

func (s *server) Gather(context.Context, *pluginpb.GatherRequest) (*pluginpb.GatherResponse, error) {
	s.mu.Lock()
	gs := make(prometheus.Gatherers, 0, len(s.gatherers))
	for _, g := range s.gatherers {
		gs = append(gs, g)
	}
	s.mu.Unlock()
	fams, err := gs.Gather()
	if err != nil && len(fams) == 0 {
		return nil, status.Errorf(codes.Internal, "gather: %v", err)
	}
	return &pluginpb.GatherResponse{Families: fams}, nil
}

// addTask registers a running task's metrics, in place of those of an
// earlier task of the same id still stuck here, and counts it for
// shutdown.
func (s *server) addTask(c *taskContext) {
	s.tasks.Add(1)
	s.mu.Lock()
	s.gatherers[taskKey{c.connector, c.task}] = c.reg
	s.mu.Unlock()
}

// removeTask unregisters a task's metrics unless a successor of the same
// id has replaced them.
func (s *server) removeTask(c *taskContext) {
	k := taskKey{c.connector, c.task}
	s.mu.Lock()
	if s.gatherers[k] == c.reg {
		delete(s.gatherers, k)
	}
	s.mu.Unlock()
	s.tasks.Done()
}
