// Package daemon assembles and runs one connectd worker process from its
// loaded worker properties: the per-logger levels and the log stream, the
// plugin catalog, the internal topics, the metrics registry and its
// optional listener, the herder, the worker, and the REST server. Run
// joins the cluster and, on cancellation (a signal), a REST server failure
// or the loss of group membership, shuts the pieces down in order: the
// herder first (stop tasks, commit, leave the group), then the worker
// (plugin processes and Kafka clients), then the REST server, so that the
// REST API answers while the worker drains.
//
// It writes start-up and shutdown milestones (lines "connectd worker: ..."
// on Opts.Stderr, or log records with log.format=json) that scripts and
// tests read.
//
// What it must not do: parse command lines, read files other than the
// plugin catalog, read the environment or exit the process — cmd/connectd
// does those and passes the results in Opts.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/convert"
	"github.com/connectd/connectd/framework/herder"
	"github.com/connectd/connectd/framework/logging"
	"github.com/connectd/connectd/framework/metrics"
	"github.com/connectd/connectd/framework/rest"
	"github.com/connectd/connectd/framework/rest/client"
	"github.com/connectd/connectd/framework/worker"
	"github.com/connectd/connectd/framework/workerconfig"
	"github.com/connectd/connectd/internal/kafkalog"
	"github.com/connectd/connectd/plugins/host"
)

// ShutdownMargin is added to task.shutdown.graceful.timeout.ms to bound a
// graceful shutdown: committing, writing statuses, leaving the group and
// closing the Kafka clients.
const ShutdownMargin = 10 * time.Second

// startTimeout bounds joining the cluster and starting the worker.
const startTimeout = 2 * time.Minute

var _ rest.Herder = (*herder.Herder)(nil)

// Opts is what Run needs from the command line and the process.
type Opts struct {
	// Config is the loaded worker.properties; Path names the file in
	// messages.
	Config *workerconfig.Config
	Path   string
	// Converters are the converter classes the worker lists and describes
	// besides the built-ins (GET /connector-plugins); nil: built-ins only.
	// Tasks use the classes their plugin binary was built with.
	Converters *convert.Set
	// Version and Commit identify the build (REST root, build-info metric).
	Version, Commit string
	// Stderr receives the milestones and the log stream.
	Stderr io.Writer
	// Collectors are registered on the worker's metrics registry beside
	// the framework's own (process-wide figures only the caller knows).
	Collectors []prometheus.Collector
	// Notes are records about process-wide settings the caller made
	// before Run, logged on the "connectd" logger once the plugins are
	// listed (the loggers do not exist before Run).
	Notes []Note
}

// Note is one record of Opts.Notes.
type Note struct {
	Level slog.Level
	Msg   string
	Args  []any
}

// logs are the loggers of one worker process.
type logs struct {
	levels   *logging.Levels
	base     *slog.Logger
	log      *slog.Logger // "connectd"
	progress func(format string, args ...any)
}

func (l *logs) logger(name string) *slog.Logger { return l.levels.Logger(l.base, name) }

// Run runs the worker until ctx is done, the REST server fails or the
// worker loses its group membership, and then shuts it down. It returns
// nil after a shutdown that ctx started, and an error that says what went
// wrong otherwise (an invalid configuration names the file and the key).
func Run(ctx context.Context, o Opts) error {
	cfg := o.Config
	restCfg, restKeys, err := rest.ParseConfig(cfg.Props)
	if err != nil {
		return fmt.Errorf("invalid worker config %s: %w", o.Path, err)
	}
	l, err := newLogs(o)
	if err != nil {
		return err
	}
	l.progress("reading %s", o.Path)
	if err := warnKeys(l.log, cfg, restKeys); err != nil {
		return fmt.Errorf("invalid worker config %s: %w", o.Path, err)
	}
	catalog, err := openPlugins(o, l)
	if err != nil {
		return err
	}
	for _, n := range o.Notes {
		l.log.Log(ctx, n.Level, n.Msg, n.Args...)
	}

	if err := ensureTopics(ctx, cfg, l.log); err != nil {
		if ctx.Err() != nil {
			l.progress("stopped (signal received) before the internal topics were ready")
			return nil
		}
		return err
	}
	l.progress("internal topics ready: config=%s offsets=%s status=%s", cfg.Herder.ConfigTopic, cfg.Herder.OffsetsTopic, cfg.Herder.StatusTopic)

	p, err := assemble(ctx, o, l, restCfg, catalog)
	if err != nil {
		return err
	}
	stopMetrics, err := serveMetrics(cfg.MetricsListener, p.metricsHandler, l.log)
	if err != nil {
		closeWorker(p.worker, cfg)
		return fmt.Errorf("metrics.listener: %w", err)
	}
	defer stopMetrics()
	if cfg.MetricsListener != "" {
		l.progress("metrics on %s/metrics", cfg.MetricsListener)
	}
	return p.run(ctx, cfg, l)
}

func newLogs(o Opts) (*logs, error) {
	cfg := o.Config
	root, err := logging.ParseLevel(cfg.LogLevel)
	if err != nil {
		return nil, fmt.Errorf("invalid worker config %s: log.level: %w", o.Path, err)
	}
	l := &logs{levels: logging.New(root), base: newBaseLogger(o.Stderr, cfg.LogFormat)}
	l.log = l.logger("connectd")
	// The start-up and shutdown milestones: plain lines for people and
	// scripts, records of the one log stream with log.format=json.
	l.progress = func(format string, args ...any) {
		fmt.Fprintf(o.Stderr, "connectd worker: "+format+"\n", args...)
	}
	if cfg.LogFormat == "json" {
		l.progress = func(format string, args ...any) { l.log.Info(fmt.Sprintf(format, args...)) }
	}
	return l, nil
}

func openPlugins(o Opts, l *logs) (*host.Catalog, error) {
	if len(o.Config.PluginPath) == 0 {
		return nil, fmt.Errorf("invalid worker config %s: plugin.path: no plugin directory configured (install plugins with `connectd plugin install --plugin-path DIR`)", o.Path)
	}
	catalog, err := host.OpenInstalled(o.Config.PluginPath...)
	if err != nil {
		return nil, fmt.Errorf("invalid worker config %s: %w", o.Path, err)
	}
	installed, err := catalog.List()
	if err != nil {
		return nil, fmt.Errorf("plugin.path: %w", err)
	}
	l.progress("%d connector plugins in %s", len(installed), strings.Join(catalog.Dirs(), ":"))
	return catalog, nil
}

// parts are the assembled pieces of a worker process.
type parts struct {
	herder         *herder.Herder
	worker         *worker.Worker
	rest           *rest.Server
	url            string // advertised REST URL
	metricsHandler http.Handler
}

// assemble builds the metrics registry, the herder, the REST server (bound,
// not serving yet) and the worker.
func assemble(ctx context.Context, o Opts, l *logs, restCfg rest.Config, catalog *host.Catalog) (*parts, error) {
	cfg := o.Config
	hcfg := cfg.Herder
	hcfg.Plugins = catalog
	hcfg.Converters = o.Converters
	hcfg.Version, hcfg.Commit = o.Version, o.Commit
	hcfg.Logger = l.logger("connectd.herder")
	// One registry for the whole worker; /metrics adds the plugin
	// processes' families to it at scrape time.
	reg := metrics.NewRegistry(metrics.BuildInfo{Version: hcfg.Version, Commit: hcfg.Commit})
	for _, c := range o.Collectors {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	metricsLog := l.logger("connectd.metrics")
	scrape, err := metrics.NewGatherer(reg, metrics.GathererOptions{Logger: metricsLog})
	if err != nil {
		return nil, err
	}
	p := &parts{metricsHandler: metrics.Handler(scrape, metricsLog)}
	hcfg.Metrics = reg
	hcfg.LogLevels = l.levels
	tlsConf, err := restCfg.TLS.ClientConfig()
	if err != nil {
		return nil, err
	}
	// The herder reaches the leader through signed internal requests.
	peer := client.NewPeer(func() ([]byte, bool) {
		k, _, ok := p.herder.SessionKey()
		return k, ok
	}, client.WithTLSConfig(tlsConf))
	if p.herder, err = herder.New(hcfg, peer); err != nil {
		return nil, err
	}

	p.rest, err = rest.NewServer(restCfg, p.herder, rest.WithLogger(l.logger("connectd.rest")),
		rest.WithRegisterer(reg), rest.WithLogLevels(l.levels), rest.WithMetricsHandler(p.metricsHandler))
	if err != nil {
		return nil, err
	}
	if err := p.rest.Listen(); err != nil {
		return nil, err
	}
	if p.url, err = cfg.AdvertisedURL(p.rest.Listeners()); err != nil {
		return nil, err
	}
	p.herder.SetWorkerURL(p.url)

	wcfg := cfg.Worker
	wcfg.WorkerID = herder.WorkerID(p.url)
	wcfg.Plugins = catalog
	wcfg.Logger = l.logger("connectd.worker")
	wcfg.Metrics = reg
	// A fenced exactly-once task restarts only while the cluster still
	// assigns it here (no successor).
	wcfg.OwnsTask = p.herder.OwnsTask
	if p.worker, err = worker.New(ctx, wcfg, p.herder); err != nil {
		return nil, err
	}
	scrape.SetPlugins(func() []metrics.PluginTarget {
		procs := p.worker.PluginProcesses()
		out := make([]metrics.PluginTarget, len(procs))
		for i, pp := range procs {
			out[i] = metrics.PluginTarget{Connector: pp.Connector, Plugin: pp.Plugin, Source: pp.Process}
		}
		return out
	})
	return p, nil
}

// run serves the REST API, joins the cluster, waits for the reason to stop
// and shuts down: herder, worker, then the REST server.
func (p *parts) run(ctx context.Context, cfg *workerconfig.Config, l *logs) error {
	serveCtx, stopServing := context.WithCancel(context.WithoutCancel(ctx))
	served := make(chan error, 1)
	go func() { served <- p.rest.Serve(serveCtx) }()
	l.progress("REST API listening on %s (advertised as %s)", strings.Join(p.rest.Listeners(), ", "), p.url)

	startCtx, cancelStart := context.WithTimeout(ctx, startTimeout)
	err := p.herder.Start(startCtx, p.worker)
	cancelStart()
	if err != nil {
		stopServing()
		<-served
		closeWorker(p.worker, cfg)
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("joining the cluster: %w", err)
	}
	l.progress("joined cluster %s as %s; worker started", cfg.Herder.GroupID, p.url)

	var runErr, memberErr error
	select {
	case <-ctx.Done():
		l.progress("stopping (signal received): stopping tasks, committing, leaving the group")
	case runErr = <-served:
		l.progress("stopping: the REST server failed: %v", runErr)
		served <- nil
	case memberErr = <-p.herder.Failed():
		l.progress("stopping: %v", memberErr)
	}
	sctx, cancel := context.WithTimeout(context.Background(), cfg.Worker.TaskShutdownTimeout+ShutdownMargin)
	defer cancel()
	start := time.Now()
	if err := p.herder.Stop(sctx); err != nil {
		l.log.Warn("herder stop", "err", err)
	}
	if err := p.worker.Close(sctx); err != nil {
		l.log.Warn("worker close", "err", err)
	}
	stopServing()
	<-served
	l.progress("stopped in %v", time.Since(start).Round(time.Millisecond))
	if runErr != nil {
		return fmt.Errorf("REST server: %w", runErr)
	}
	return memberErr
}

// serveMetrics serves /metrics alone on metrics.listener (http://host:port)
// until the returned stop is called; with no listener it does nothing.
func serveMetrics(listener string, h http.Handler, log *slog.Logger) (stop func(), err error) {
	if listener == "" {
		return func() {}, nil
	}
	addr := strings.TrimPrefix(listener, "http://")
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener failed", "listener", listener, "err", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}, nil
}

func closeWorker(w *worker.Worker, cfg *workerconfig.Config) {
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Worker.TaskShutdownTimeout+ShutdownMargin)
	defer cancel()
	_ = w.Close(ctx)
}

func newBaseLogger(out io.Writer, format string) *slog.Logger {
	// Levels are filtered per logger by logging.Levels; the handler
	// passes everything.
	opts := &slog.HandlerOptions{Level: logging.LevelTrace}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(out, opts))
	}
	return slog.New(slog.NewTextHandler(out, opts))
}

// warnKeys reports worker properties that nothing uses, by name and with
// the known key each is most likely a typo of; a typo of a guarantee or
// security setting is an error (workerconfig.Config.UnknownKeys).
func warnKeys(log *slog.Logger, cfg *workerconfig.Config, restKeys []string) error {
	used := map[string]bool{}
	for _, k := range restKeys {
		used[k] = true
	}
	unknown, err := cfg.UnknownKeys(restKeys)
	for _, u := range unknown {
		used[u.Key] = true // not reported again as a dropped client setting
		if strings.HasPrefix(u.Key, "ssl.") {
			continue
		}
		if u.DidYouMean != "" {
			log.Warn(u.Message(), "key", u.Key, "did_you_mean", u.DidYouMean)
		} else {
			log.Warn(u.Message(), "key", u.Key)
		}
	}
	for k, why := range cfg.Ignored {
		log.Info("Kafka Connect worker property not used by connectd: "+k, "key", k, "reason", why)
	}
	for k, why := range cfg.Dropped {
		if !used[k] {
			log.Warn("client property not passed to Kafka clients: "+k, "key", k, "reason", why)
		}
	}
	return err
}

func ensureTopics(ctx context.Context, cfg *workerconfig.Config, log *slog.Logger) error {
	cm := kafka.ConfigMap{"bootstrap.servers": cfg.Herder.BootstrapServers, "client.id": cfg.Herder.GroupID + "-topics"}
	for k, v := range cfg.Herder.ClientProps {
		cm[k] = v
	}
	admin, err := kafkalog.NewAdmin(log, cm)
	if err != nil {
		return fmt.Errorf("kafka admin client: %w", err)
	}
	defer admin.Close()
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := herder.EnsureTopics(tctx, admin.AdminClient, log, cfg.Topics...); err != nil {
		var te *herder.TopicError
		if errors.As(err, &te) {
			return err
		}
		return fmt.Errorf("internal topics (is Kafka reachable at %s?): %w", cfg.Herder.BootstrapServers, err)
	}
	return nil
}
