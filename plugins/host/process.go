package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/plugins/internal/datachan"
	"github.com/connectd/connectd/plugins/internal/wire"
	"github.com/connectd/connectd/plugins/pluginpb"
)

// LaunchOptions configure one plugin process. Zero values take the
// documented defaults.
type LaunchOptions struct {
	Logger          *slog.Logger  // base logger; plugin log lines are merged into it
	Connector       string        // attribute for logs
	MaxMessageBytes int           // gRPC limit both sides (default 64 MiB)
	BatchBytes      int           // byte budget per stream message (default 4 MiB)
	CallTimeout     time.Duration // bound for unary calls and stream replies (default 30 s)
	// HandshakeTimeout bounds the start: from exec to go-plugin's
	// handshake line (default 30 s). A plugin that misses it is killed
	// with its whole process group.
	HandshakeTimeout time.Duration
	StopTimeout      time.Duration // graceful stop before kill (default 5 s)
	LogLevel         string        // plugin log level: debug, info (default), warn, error
	// LogLinesPerSecond rate-limits the plugin's log lines merged into
	// Logger (default 1000, bursts of one second's worth; negative:
	// unlimited). Excess lines are dropped and counted, never waited for.
	LogLinesPerSecond int
	// OnLogDropped is called with the number of plugin log lines dropped
	// (rate limit, or a log output that cannot keep up), for a metric.
	OnLogDropped func(n int)
	// GOGC and GOMemLimit, when set, become the plugin process's GOGC and
	// GOMEMLIMIT (Go's garbage collector settings, same syntax); unset,
	// the Go runtime's defaults apply (docs/plugins.md).
	GOGC       string
	GOMemLimit string
	// MallocArenaMax, when set, becomes the plugin process's
	// MALLOC_ARENA_MAX: plugins that run librdkafka clients keep their
	// C-allocator memory bounded as the worker does (malloc.arena.max).
	MallocArenaMax string
}

func (o *LaunchOptions) defaults() {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = wire.DefaultMaxMessageBytes
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = wire.DefaultBatchBytes
	}
	o.BatchBytes = min(o.BatchBytes, o.MaxMessageBytes-wire.MessageOverhead)
	if o.CallTimeout <= 0 {
		o.CallTimeout = 30 * time.Second
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = 5 * time.Second
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if o.LogLevel == "" {
		o.LogLevel = "info"
	}
	if o.LogLinesPerSecond == 0 {
		o.LogLinesPerSecond = DefaultLogLinesPerSecond
	}
}

// DefaultLogLinesPerSecond is LaunchOptions.LogLinesPerSecond's default.
const DefaultLogLinesPerSecond = 1000

// DefaultHandshakeTimeout is LaunchOptions.HandshakeTimeout's default.
const DefaultHandshakeTimeout = 30 * time.Second

// killWait bounds go-plugin's own clean-up after the process group was
// killed: it waits for the plugin's pipes to close, which they do once
// every process holding them is gone.
const killWait = 5 * time.Second

// Spec is a connector class's description, as its plugin reports it.
type Spec struct {
	Class                        string
	Version                      string
	Type                         sdk.Type
	Summary                      string
	Config                       []configdef.KeyInfo
	DefinesTransactionBoundaries bool
	ExactlyOnce                  bool
}

// Process is one running plugin process.
type Process struct {
	m      Manifest
	opts   LaunchOptions
	log    *slog.Logger
	client *plugin.Client
	cmd    *exec.Cmd
	rpc    pluginpb.PluginClient
	conn   *grpc.ClientConn
	stderr *stderrSink
	pid    int
	// data carries the task streams (the data channel).
	data *datachan.Conn

	done      chan struct{}
	mu        sync.Mutex
	closing   bool
	exitErr   error  // *ExitError after an unexpected exit
	dataErr   error  // why the data channel failed, if it did first
	killedFor string // why keepAlive killed the process, if it did
	closeOnce sync.Once
}

// Launch verifies the binary's sha256 against the manifest (go-plugin
// SecureConfig, at every launch), starts it with AutoMTLS, a minimal
// environment and Pdeathsig in a process group of its own, and negotiates
// the protocol version within HandshakeTimeout.
// errors.Is(err, ErrChecksumMismatch) when the binary was changed after
// installation; errors.Is(err, ErrTimeout) when the handshake did not
// complete in time (the process group is killed then).
func Launch(ctx context.Context, m Manifest, opts LaunchOptions) (*Process, error) {
	opts.defaults()
	sum, err := hex.DecodeString(m.SHA256)
	if err != nil || len(sum) != sha256.Size {
		return nil, fmt.Errorf("launch plugin %s: manifest sha256 %q is not a hex SHA-256", m.Name, m.SHA256)
	}
	log := opts.Logger.With("plugin", m.Name)
	if opts.Connector != "" {
		log = log.With("connector", opts.Connector)
	}
	cmd := exec.Command(m.Path())
	// A minimal environment: the worker's credentials and settings are not
	// the plugin's business. go-plugin adds its handshake variables.
	cmd.Env = []string{
		wire.EnvMaxMessageBytes + "=" + strconv.Itoa(opts.MaxMessageBytes),
		wire.EnvLogLevel + "=" + opts.LogLevel,
	}
	if opts.GOGC != "" {
		cmd.Env = append(cmd.Env, "GOGC="+opts.GOGC)
	}
	if opts.GOMemLimit != "" {
		cmd.Env = append(cmd.Env, "GOMEMLIMIT="+opts.GOMemLimit)
	}
	if opts.MallocArenaMax != "" {
		cmd.Env = append(cmd.Env, "MALLOC_ARENA_MAX="+opts.MallocArenaMax)
	}
	setPdeathsig(cmd)
	setProcessGroup(cmd)
	// The data channel: a connected socketpair whose plugin end only this
	// child inherits, as file descriptor 3.
	versions := map[int]plugin.PluginSet{}
	for _, v := range ProtocolVersions() {
		versions[v] = plugin.PluginSet{wire.PluginName: &wire.GRPCPlugin{}}
	}
	hostEnd, pluginEnd, err := socketpair()
	if err != nil {
		// errors.Is(err, errors.ErrUnsupported) off Unix.
		return nil, fmt.Errorf("launch plugin %s: data channel: %w", m.Name, err)
	}
	defer pluginEnd.Close() // the child has its copy once started
	cmd.ExtraFiles = []*os.File{pluginEnd}
	cmd.Env = append(cmd.Env, wire.EnvDataFD+"=3")
	closeHostEnd := func() { hostEnd.Close() }
	limit := newLogLimiter(opts.LogLinesPerSecond)
	p := &Process{m: m, opts: opts, log: log, cmd: cmd, stderr: newStderrSink(log, opts.Connector, limit, opts.OnLogDropped), done: make(chan struct{})}
	p.client = plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  wire.Handshake,
		VersionedPlugins: versions,
		Cmd:              cmd,
		SecureConfig:     &plugin.SecureConfig{Checksum: sum, Hash: sha256.New()},
		AutoMTLS:         true,
		SkipHostEnv:      true,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		StartTimeout:     opts.HandshakeTimeout,
		Stderr:           p.stderr,
		SyncStdout:       stdoutSink{log: log, limit: limit, dropped: opts.OnLogDropped},
		SyncStderr:       newStderrSink(log, opts.Connector, limit, opts.OnLogDropped), // os.Stderr writes after the handshake
		// go-plugin's own logger is off: it would log every plugin line a
		// second time. stderrSink does the merging.
		Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Off}),
		GRPCDialOptions: []grpc.DialOption{
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(opts.MaxMessageBytes), grpc.MaxCallSendMsgSize(opts.MaxMessageBytes)),
			grpc.WithInitialWindowSize(wire.StreamWindowBytes), grpc.WithInitialConnWindowSize(wire.ConnWindowBytes),
			grpc.WithWriteBufferSize(wire.SocketBufferBytes), grpc.WithReadBufferSize(wire.SocketBufferBytes),
		},
	})

	type result struct {
		proto plugin.ClientProtocol
		err   error
	}
	started := make(chan result, 1)
	go func() {
		cp, err := p.client.Client()
		started <- result{cp, err}
	}()
	var r result
	select {
	case r = <-started:
	case <-ctx.Done():
		// go-plugin's start ends within HandshakeTimeout; only then is the
		// process (and so its group id) known.
		go func() {
			<-started
			if cmd.Process != nil {
				p.pid = cmd.Process.Pid
			}
			p.abort()
		}()
		closeHostEnd()
		return nil, fmt.Errorf("launch plugin %s: %w", m.Name, ctx.Err())
	}
	if cmd.Process != nil {
		p.pid = cmd.Process.Pid
	}
	if r.err != nil {
		p.abort()
		closeHostEnd()
		if errors.Is(r.err, plugin.ErrChecksumsDoNotMatch) {
			have, _ := fileSHA256(m.Path())
			return nil, fmt.Errorf("launch plugin %s: %w: %s has sha256 %s but its manifest says %s; the binary was changed after installation, reinstall it with 'connectd plugin install'",
				m.Name, ErrChecksumMismatch, m.Path(), have, m.SHA256)
		}
		if strings.Contains(r.err.Error(), "timeout while waiting for plugin to start") {
			return nil, fmt.Errorf("launch plugin %s (%s): %w: it did not complete the handshake within %s; killed its process group%s",
				m.Name, m.Path(), ErrTimeout, opts.HandshakeTimeout, tailNote(p.stderr.Tail()))
		}
		return nil, fmt.Errorf("launch plugin %s (%s): %w%s", m.Name, m.Path(), launchHint(r.err), tailNote(p.stderr.Tail()))
	}
	raw, err := r.proto.Dispense(wire.PluginName)
	if err != nil {
		p.abort()
		closeHostEnd()
		return nil, fmt.Errorf("launch plugin %s: %w", m.Name, err)
	}
	if p.data, err = p.openData(hostEnd); err != nil {
		p.abort()
		return nil, fmt.Errorf("launch plugin %s: %w", m.Name, err)
	}
	if v := p.client.NegotiatedVersion(); v != SharedProtocol {
		p.abort()
		closeHostEnd()
		return nil, fmt.Errorf("launch plugin %s: %w", m.Name, &ProtocolVersionError{Plugin: m.Name, Versions: []int{v}})
	}
	p.rpc = raw.(pluginpb.PluginClient)
	if gc, ok := r.proto.(*plugin.GRPCClient); ok {
		p.conn = gc.Conn
	}
	go p.watch()
	go p.keepAlive()
	log.Debug("plugin started", "pid", p.pid, "protocol", p.client.NegotiatedVersion())
	return p, nil
}

// abort kills a plugin that failed to start, with its process group, and
// lets go-plugin clean up (bounded: it waits for the plugin's pipes).
func (p *Process) abort() {
	if err := killGroup(p.pid); err != nil {
		p.log.Warn("killing the plugin's process group", "pid", p.pid, "error", err)
	}
	p.killClient()
}

// killClient runs go-plugin's Kill, which waits for the plugin's output
// pipes to close, for at most killWait.
func (p *Process) killClient() bool {
	done := make(chan struct{})
	go func() {
		p.client.Kill()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(killWait):
		p.log.Error("plugin output still open after its process group was killed", "pid", p.pid)
		return false
	}
}

// openData starts the host's end of the data channel.
func (p *Process) openData(f *os.File) (*datachan.Conn, error) {
	nc, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("data channel: %w", err)
	}
	if uc, ok := nc.(*net.UnixConn); ok {
		_ = uc.SetWriteBuffer(wire.SocketBufferBytes)
		_ = uc.SetReadBuffer(wire.SocketBufferBytes)
	}
	c, err := datachan.New(nc, datachan.Options{
		Role: datachan.Host, MaxBody: p.opts.MaxMessageBytes, WriteTimeout: p.opts.CallTimeout,
		Decode: wire.DecodeForHost,
		OnFail: func(err error) {
			if errors.Is(err, datachan.ErrProtocol) || errors.Is(err, datachan.ErrTimeout) {
				p.log.Error("plugin data channel failed; its tasks fail", "error", err)
				p.mu.Lock()
				if p.dataErr == nil {
					p.dataErr = err
				}
				p.mu.Unlock()
			}
		},
	})
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("data channel: %w", err)
	}
	return c, nil
}

// launchHint explains go-plugin's start-up errors in connectd's terms.
func launchHint(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "Unrecognized remote plugin message"):
		return fmt.Errorf("%w: the plugin wrote to stdout before the handshake (nothing may print to stdout before plugins.Serve): %v", ErrProtocol, err)
	case strings.Contains(msg, "Incompatible API version"), strings.Contains(msg, "incompatible"):
		return fmt.Errorf("%w: no common protocol version: %v", ErrProtocol, err)
	}
	return err
}

func tailNote(tail string) string {
	if tail == "" {
		return ""
	}
	return "; last stderr lines:\n" + tail
}

// watch turns the process's exit into Done/Err. go-plugin has no exit
// callback (hashicorp/go-plugin#92), so it polls Exited; on Linux only
// once the process has exited (exitNotice, a pidfd in the network poller),
// so a plugin that lives costs no polling. A plugin that died while
// something it forked still holds its pipes would never count as exited:
// once a second watch checks the process itself, and kills what is left
// of its process group when it is gone.
func (p *Process) watch() {
	if exited := exitNotice(p.pid); exited != nil {
		<-exited
	}
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	ticks, reaped := 0, false
	for range t.C {
		if !p.client.Exited() {
			if ticks++; ticks%50 == 0 && !reaped && leaderExited(p.pid) {
				reaped = true
				if err := killGroup(p.pid); err != nil {
					p.log.Warn("killing the process group of an exited plugin", "pid", p.pid, "error", err)
				}
			}
			continue
		}
		p.mu.Lock()
		if !p.closing {
			state := "unknown exit"
			code := -1
			if ps := p.cmd.ProcessState; ps != nil {
				state, code = ps.String(), ps.ExitCode()
			}
			exit := &ExitError{Plugin: p.m.Name, Pid: p.pid, Code: code, State: state, StderrTail: p.stderr.Tail()}
			if p.dataErr != nil {
				exit.DataFailure = p.dataErr.Error()
			}
			exit.Killed = p.killedFor
			p.exitErr = exit
			p.log.Error("plugin process exited unexpectedly", "pid", p.pid, "state", state)
		}
		p.mu.Unlock()
		_ = p.data.Close()
		close(p.done)
		return
	}
}

// keepAlive asks the plugin's health service every CallTimeout/3 whether
// the process still answers. A process that does not (stopped, or wedged
// as a whole) is killed, so that its tasks fail with the reason: an idle
// task sends nothing that could notice, and a task's own Poll watch runs
// inside the process. It costs one call per process, whatever the number
// of tasks in it.
func (p *Process) keepAlive() {
	tick := time.NewTicker(max(p.opts.CallTimeout/3, 100*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-tick.C:
		}
		err := p.Ping(context.Background())
		if err == nil || !errors.Is(err, ErrTimeout) || p.isClosing() || p.exited() {
			continue
		}
		p.log.Error("plugin process does not answer; killing it", "pid", p.pid, "error", err)
		p.mu.Lock()
		p.killedFor = fmt.Sprintf("it did not answer a health check within %s", p.opts.CallTimeout)
		p.mu.Unlock()
		if err := killGroup(p.pid); err != nil {
			p.log.Warn("killing the plugin's process group", "pid", p.pid, "error", err)
		}
		return
	}
}

func (p *Process) isClosing() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closing
}

// ProtocolVersion is the negotiated protocol version.
func (p *Process) ProtocolVersion() int { return p.client.NegotiatedVersion() }

// Pid is the plugin's process id.
func (p *Process) Pid() int { return p.pid }

// Manifest is the manifest the process was launched from.
func (p *Process) Manifest() Manifest { return p.m }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err returns the *ExitError after an unexpected exit, else nil.
func (p *Process) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exitErr
}

// gone returns the error for using a process that has exited.
func (p *Process) gone() error {
	if err := p.Err(); err != nil {
		return err
	}
	return fmt.Errorf("plugin %s: %w (closed)", p.m.Name, ErrPluginExited)
}

func (p *Process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// failure turns a gRPC error from a call or stream into the error callers
// see: the exit (with stderr tail) if the process died, a timeout, or the
// remote error.
func (p *Process) failure(op string, err error, timedOut bool) error {
	if p.exited() || p.awaitExit(500*time.Millisecond) {
		return fmt.Errorf("plugin %s: %s: %w", p.m.Name, op, p.gone())
	}
	if timedOut {
		return fmt.Errorf("plugin %s: %s: %w within %s", p.m.Name, op, ErrTimeout, p.opts.CallTimeout)
	}
	var remote *datachan.RemoteError
	switch {
	case errors.As(err, &remote):
		return fmt.Errorf("plugin %s: %s: %s", p.m.Name, op, remote.Message)
	case errors.Is(err, datachan.ErrProtocol):
		return fmt.Errorf("plugin %s: %s: %w: %v", p.m.Name, op, ErrProtocol, err)
	case errors.Is(err, datachan.ErrTimeout):
		return fmt.Errorf("plugin %s: %s: %w: %v", p.m.Name, op, ErrTimeout, err)
	case errors.Is(err, datachan.ErrPeerClosed), errors.Is(err, datachan.ErrClosed):
		return fmt.Errorf("plugin %s: %s: data channel lost: %v", p.m.Name, op, err)
	}
	st, ok := status.FromError(err)
	if ok {
		switch {
		case st.Code() == codes.Internal && strings.Contains(st.Message(), "unmarshal"):
			return fmt.Errorf("plugin %s: %s: %w: malformed message: %s", p.m.Name, op, ErrProtocol, st.Message())
		case st.Code() == codes.ResourceExhausted:
			return fmt.Errorf("plugin %s: %s: message too large (raise MaxMessageBytes): %s", p.m.Name, op, st.Message())
		case st.Code() == codes.Unavailable || st.Code() == codes.Canceled:
			return fmt.Errorf("plugin %s: %s: connection lost: %s", p.m.Name, op, st.Message())
		}
		return fmt.Errorf("plugin %s: %s: %s", p.m.Name, op, st.Message())
	}
	return fmt.Errorf("plugin %s: %s: %w", p.m.Name, op, err)
}

// awaitExit waits up to d for the process to exit: a broken stream
// usually means the process is dying, and its exit status and stderr tail
// make the better error.
func (p *Process) awaitExit(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// unary runs one bounded unary call.
func (p *Process) unary(ctx context.Context, op string, call func(ctx context.Context) error) error {
	if p.exited() {
		return fmt.Errorf("plugin %s: %s: %w", p.m.Name, op, p.gone())
	}
	cctx, cancel := context.WithTimeout(ctx, p.opts.CallTimeout)
	defer cancel()
	err := call(cctx)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("plugin %s: %s: %w", p.m.Name, op, ctx.Err())
	}
	timedOut := cctx.Err() == context.DeadlineExceeded
	// The plugin's gRPC server enforces the same deadline (it travels with
	// the call) and may reset the stream a moment before this side's
	// timer fires: a cancellation that close to the deadline is the
	// deadline.
	if d, ok := cctx.Deadline(); !timedOut && ok && time.Until(d) < 250*time.Millisecond {
		if c := status.Code(err); c == codes.Canceled || c == codes.DeadlineExceeded {
			timedOut = true
		}
	}
	return p.failure(op, err, timedOut)
}

// Spec asks the plugin for its connector's spec.
func (p *Process) Spec(ctx context.Context) (Spec, error) {
	s, _, err := p.spec(ctx)
	return s, err
}

// spec also returns the protocol versions the plugin speaks.
func (p *Process) spec(ctx context.Context) (Spec, []int, error) {
	var r *pluginpb.SpecResponse
	err := p.unary(ctx, "spec", func(ctx context.Context) (err error) {
		r, err = p.rpc.Spec(ctx, &pluginpb.SpecRequest{})
		return err
	})
	if err != nil {
		return Spec{}, nil, err
	}
	s := Spec{
		Class: r.GetClass(), Version: r.GetVersion(), Type: sdk.Type(r.GetType()), Summary: r.GetSummary(),
		DefinesTransactionBoundaries: r.GetDefinesTransactionBoundaries(), ExactlyOnce: r.GetExactlyOnce(),
	}
	for _, k := range r.GetConfig() {
		s.Config = append(s.Config, wire.KeyInfoFromPB(k))
	}
	if s.Type != sdk.Source && s.Type != sdk.Sink {
		return Spec{}, nil, fmt.Errorf("plugin %s: spec: %w: type %q", p.m.Name, ErrProtocol, s.Type)
	}
	versions := []int{p.ProtocolVersion()}
	if vs := r.GetProtocolVersions(); len(vs) > 0 {
		versions = versions[:0]
		for _, v := range vs {
			versions = append(versions, int(v))
		}
		slices.Sort(versions)
	}
	return s, versions, nil
}

// Validate validates a whole connector configuration in the plugin.
func (p *Process) Validate(ctx context.Context, props map[string]string, defaults chain.Defaults) (configdef.ValidationResult, error) {
	var r *pluginpb.ValidateResponse
	err := p.unary(ctx, "validate", func(ctx context.Context) (err error) {
		r, err = p.rpc.Validate(ctx, &pluginpb.ValidateRequest{Props: props, Defaults: defaults})
		return err
	})
	if err != nil {
		return configdef.ValidationResult{}, err
	}
	return wire.ValidationFromPB(r), nil
}

// Gather returns the plugin-side metrics of every running task, labelled
// with connector and task.
func (p *Process) Gather(ctx context.Context) ([]*dto.MetricFamily, error) {
	var r *pluginpb.GatherResponse
	err := p.unary(ctx, "gather", func(ctx context.Context) (err error) {
		r, err = p.rpc.Gather(ctx, &pluginpb.GatherRequest{})
		return err
	})
	if err != nil {
		return nil, err
	}
	return r.GetFamilies(), nil
}

// Ping checks the plugin's gRPC health service (go-plugin registers it).
func (p *Process) Ping(ctx context.Context) error {
	return p.unary(ctx, "ping", func(ctx context.Context) error {
		if p.conn == nil {
			return errors.New("no gRPC connection")
		}
		r, err := healthpb.NewHealthClient(p.conn).Check(ctx, &healthpb.HealthCheckRequest{Service: plugin.GRPCServiceName})
		if err != nil {
			return err
		}
		if r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			return fmt.Errorf("health status %s", r.GetStatus())
		}
		return nil
	})
}

// Close stops the process: go-plugin's graceful shutdown first, then
// SIGKILL to its whole process group after StopTimeout (or when ctx ends),
// or at once after a graceful exit, so that nothing the plugin forked
// outlives it. Stop tasks and connectors first for a clean stop; Close is
// safe to call more than once.
func (p *Process) Close(ctx context.Context) error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closing = true
		p.mu.Unlock()
		killed := make(chan struct{})
		go func() { p.client.Kill(); close(killed) }()
		timer := time.NewTimer(p.opts.StopTimeout)
		defer timer.Stop()
		select {
		case <-killed:
		case <-timer.C:
			p.log.Warn("plugin did not stop in time; killing its process group", "timeout", p.opts.StopTimeout)
		case <-ctx.Done():
		}
		if err := killGroup(p.pid); err != nil {
			p.log.Warn("killing the plugin's process group", "pid", p.pid, "error", err)
		}
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			p.log.Error("plugin process did not go away after kill", "pid", p.pid)
		}
	})
	return nil
}
