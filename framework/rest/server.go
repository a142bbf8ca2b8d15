package rest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Option customizes a Server.
type Option func(*Server)

// WithLogger sets the logger for request logs and errors (default: discard).
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// WithRegisterer registers the request metrics (connectd_rest_requests_total
// and connectd_rest_request_duration_seconds) on r.
func WithRegisterer(r prometheus.Registerer) Option { return func(s *Server) { s.reg = r } }

// WithLogLevels serves /admin/loggers from l; without it those endpoints
// answer 404.
func WithLogLevels(l LogLevels) Option { return func(s *Server) { s.levels = l } }

// WithMetricsHandler serves GET /metrics from h (the worker's Prometheus
// scrape, framework/metrics.Handler); without it /metrics answers 404.
// Scrapes need the same credentials as every other endpoint unless
// Config.Auth.MetricsUnauthenticated (rest.metrics.unauthenticated) is set.
func WithMetricsHandler(h http.Handler) Option { return func(s *Server) { s.metricsH = h } }

// WithForwardClient sets the HTTP client used to forward requests to the
// leader (default: one built from Config.TLS with no overall timeout; the
// request context bounds it).
func WithForwardClient(c *http.Client) Option { return func(s *Server) { s.fwd = c } }

// WithClock sets the time source used for request signatures (tests).
func WithClock(now func() time.Time) Option { return func(s *Server) { s.now = now } }

// Server is the REST API server. Create it with NewServer; serve it with
// Serve, or mount Handler in a server of your own.
type Server struct {
	cfg    Config
	h      Herder
	log    *slog.Logger
	reg    prometheus.Registerer
	levels LogLevels
	fwd    *http.Client
	// metricsH serves GET /metrics.
	metricsH http.Handler
	now      func() time.Time
	auth     *authenticator
	tlsConf  *tls.Config // nil without https listeners and TLS material
	metrics  *metrics
	routes   []*route

	full, public, admin http.Handler

	mu        sync.Mutex
	bound     []boundListener
	listening bool
}

type boundListener struct {
	url   string
	ln    net.Listener
	https bool
	h     http.Handler
}

// NewServer checks cfg, loads the TLS material and credential files it
// names and registers the metrics. It does not listen yet.
func NewServer(cfg Config, h Herder, opts ...Option) (*Server, error) {
	if h == nil {
		return nil, errors.New("rest: nil Herder")
	}
	s := &Server{cfg: cfg.withDefaults(), h: h, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	needTLS := false
	for _, l := range append(append([]string(nil), s.cfg.Listeners...), s.cfg.AdminListeners...) {
		pl, err := parseListener(l)
		if err != nil {
			return nil, fmt.Errorf("rest: %w", err)
		}
		needTLS = needTLS || pl.https
	}
	tc, err := s.cfg.TLS.serverConfig(needTLS)
	if err != nil {
		return nil, fmt.Errorf("rest: %w", err)
	}
	s.tlsConf = tc
	if s.fwd == nil {
		cc, err := s.cfg.TLS.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("rest: %w", err)
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = cc
		s.fwd = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	s.auth, err = newAuthenticator(s.cfg.Auth)
	if err != nil {
		return nil, fmt.Errorf("rest: %w", err)
	}
	s.metrics, err = newMetrics(s.reg)
	if err != nil {
		return nil, fmt.Errorf("rest: %w", err)
	}
	s.routes = routes()
	s.full = s.handler(true, true)
	s.public = s.handler(true, s.cfg.AdminListeners == nil)
	s.admin = s.handler(false, true)
	return s, nil
}

// Handler returns the whole API (admin endpoints included), for tests and
// for embedding; it does no TLS itself.
func (s *Server) Handler() http.Handler { return s.full }

// Listen binds every listener. It is called by Serve if needed; call it
// first to learn the bound addresses (Listeners) when a port is 0.
func (s *Server) Listen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listening {
		return nil
	}
	bind := func(spec string, h http.Handler) error {
		pl, err := parseListener(spec)
		if err != nil {
			return err
		}
		ln, err := net.Listen("tcp", pl.addr)
		if err != nil {
			return fmt.Errorf("rest: listen %s: %w", spec, err)
		}
		host := hostOf(spec)
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		scheme := "http"
		if pl.https {
			scheme = "https"
			ln = tls.NewListener(ln, s.tlsConf)
		}
		if host == "" {
			host = "localhost"
		}
		s.bound = append(s.bound, boundListener{url: scheme + "://" + net.JoinHostPort(host, port), ln: ln, https: pl.https, h: h})
		return nil
	}
	for _, l := range s.cfg.Listeners {
		if err := bind(l, s.public); err != nil {
			s.closeBoundLocked()
			return err
		}
	}
	if s.cfg.AdminListeners != nil {
		for _, l := range s.cfg.AdminListeners {
			if err := bind(l, s.admin); err != nil {
				s.closeBoundLocked()
				return err
			}
		}
	}
	s.listening = true
	return nil
}

func hostOf(spec string) string {
	rest := spec[strings.Index(spec, "://")+3:]
	h, _, err := net.SplitHostPort(rest)
	if err != nil {
		return ""
	}
	return h
}

func (s *Server) closeBoundLocked() {
	for _, b := range s.bound {
		b.ln.Close()
	}
	s.bound = nil
}

// Listeners returns the bound listener URLs, in Config order (Listeners,
// then AdminListeners), with the real port; a listener on all interfaces
// is reported as localhost.
func (s *Server) Listeners() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.bound))
	for i, b := range s.bound {
		out[i] = b.url
	}
	return out
}

// Serve listens (if Listen was not called) and serves until ctx is done,
// then shuts down gracefully, giving in-flight requests up to 10 s.
func (s *Server) Serve(ctx context.Context) error {
	if err := s.Listen(); err != nil {
		return err
	}
	s.mu.Lock()
	bound := append([]boundListener(nil), s.bound...)
	s.mu.Unlock()
	errc := make(chan error, len(bound))
	var servers []*http.Server
	for _, b := range bound {
		hs := &http.Server{
			Handler:           b.h,
			ReadHeaderTimeout: 30 * time.Second,
			ReadTimeout:       2 * time.Minute, // bodies are capped; this bounds slow senders
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
			BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		}
		servers = append(servers, hs)
		go func() { errc <- hs.Serve(b.ln) }()
		s.log.Info("REST API listening", "url", b.url)
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, hs := range servers {
		if e := hs.Shutdown(sctx); e != nil && err == nil {
			err = e
		}
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
