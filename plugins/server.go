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
// runs at most one connector instance (the sdk.Connector value is shared)
// and any number of tasks.
type server struct {
	pluginpb.UnimplementedPluginServer

	conn   sdk.Connector
	spec   sdk.Spec
	log    *slog.Logger
	maxMsg int
	// converters are the converter classes tasks may use (nil: built-ins).
	converters *convert.Set

	mu        sync.Mutex
	running   *runningConnector
	gatherers map[*prometheus.Registry]struct{}
	tasks     sync.WaitGroup
	stopping  <-chan struct{} // closed by shutdown (stopCtx.Done)
	stopCtx   context.Context // cancelled by shutdown
	stop      context.CancelFunc
	data      *datachan.Conn // the task streams
}

func newServer(c sdk.Connector, spec sdk.Spec, log *slog.Logger, maxMsg int) *server {
	stopCtx, stop := context.WithCancel(context.Background())
	return &server{
		conn: c, spec: spec, log: log, maxMsg: maxMsg,
		gatherers: map[*prometheus.Registry]struct{}{},
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
	rc := s.running
	s.mu.Unlock()
	if rc != nil {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		_ = s.stopConnector(ctx, rc.name)
	}
}

func (s *server) Spec(context.Context, *pluginpb.SpecRequest) (*pluginpb.SpecResponse, error) {
	return specToPB(s.spec), nil
}

func (s *server) Validate(ctx context.Context, req *pluginpb.ValidateRequest) (*pluginpb.ValidateResponse, error) {
	res := connconfig.ValidateWith(ctx, s.converters, s.conn, req.GetProps(), chain.Defaults(req.GetDefaults()))
	return wire.ValidationToPB(res), nil
}

// runningConnector is the started connector instance and its event queue.
type runningConnector struct {
	name   string
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
	s.mu.Lock()
	if s.running != nil {
		name := s.running.name
		s.mu.Unlock()
		return nil, status.Errorf(codes.FailedPrecondition, "this plugin process already runs connector %q", name)
	}
	life, cancel := context.WithCancel(context.Background())
	rc := &runningConnector{
		name: req.GetName(), cancel: cancel, done: make(chan struct{}),
		log: s.log.With("connector", req.GetName()), notify: make(chan struct{}, 1),
	}
	s.running = rc
	s.mu.Unlock()

	// Start gets a context that lives as long as the connector: connectors
	// that watch their environment keep using it after Start returns.
	if err := s.conn.Start(life, rc, req.GetProps()); err != nil {
		s.mu.Lock()
		s.running = nil
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
	if s.running == nil || s.running.name != name {
		return nil, status.Errorf(codes.NotFound, "connector %q is not running in this plugin process", name)
	}
	return s.running, nil
}

func (s *server) TaskConfigs(ctx context.Context, req *pluginpb.TaskConfigsRequest) (*pluginpb.TaskConfigsResponse, error) {
	if _, err := s.connector(req.GetName()); err != nil {
		return nil, err
	}
	cfgs, err := s.conn.TaskConfigs(ctx, int(req.GetMaxTasks()))
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
	rc, err := s.connector(name)
	if err != nil {
		return err
	}
	err = s.conn.Stop(ctx)
	rc.cancel()
	close(rc.done)
	s.mu.Lock()
	s.running = nil
	s.mu.Unlock()
	if err != nil {
		return status.Errorf(codes.Unknown, "connector %s: stop: %v", name, err)
	}
	return nil
}

func (s *server) Gather(context.Context, *pluginpb.GatherRequest) (*pluginpb.GatherResponse, error) {
	s.mu.Lock()
	gs := make(prometheus.Gatherers, 0, len(s.gatherers))
	for g := range s.gatherers {
		gs = append(gs, g)
	}
	s.mu.Unlock()
	fams, err := gs.Gather()
	if err != nil && len(fams) == 0 {
		return nil, status.Errorf(codes.Internal, "gather: %v", err)
	}
	return &pluginpb.GatherResponse{Families: fams}, nil
}

// addTask registers a running task's metrics and counts it for shutdown.
func (s *server) addTask(reg *prometheus.Registry) {
	s.tasks.Add(1)
	s.mu.Lock()
	s.gatherers[reg] = struct{}{}
	s.mu.Unlock()
}

func (s *server) removeTask(reg *prometheus.Registry) {
	s.mu.Lock()
	delete(s.gatherers, reg)
	s.mu.Unlock()
	s.tasks.Done()
}
