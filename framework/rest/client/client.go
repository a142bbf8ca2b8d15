// Package client is a Go client of the Kafka Connect REST API as connectd
// serves it (it works against Kafka Connect too, minus connectd's
// extensions): typed calls for every endpoint, the API's errors as *Error,
// HTTP Basic, bearer-token and TLS/mTLS options, retries of rebalance
// conflicts (409 with Retry-After) with backoff, and signed inter-worker
// calls for workers that hold the session key.
//
// Its bodies are framework/rest/api's types, the ones the server serves.
// It imports nothing that uses cgo, so a program that does not link
// librdkafka can use it (TestDependenciesArePureGo checks the closure).
//
// The connectd CLI, the chaos suite and the quickstart use it. What it
// must not do: cache cluster state or decide anything for the caller
// beyond retrying rebalance conflicts, or import a package that uses cgo.
package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/framework/rest/signature"
)

// DefaultURL is where a local worker listens by default.
const DefaultURL = "http://127.0.0.1:8083"

// Client calls one worker's REST API. It is safe for concurrent use.
type Client struct {
	base     *url.URL
	hc       *http.Client
	user     string
	pass     string
	token    string
	retries  int
	backoff  time.Duration
	maxWait  time.Duration
	tlsConf  *tls.Config
	sessKey  func() ([]byte, bool)
	now      func() time.Time
	sleep    func(ctx context.Context, d time.Duration) error
	hcCustom bool
}

// Option configures a Client.
type Option func(*Client) error

// WithBasicAuth sends HTTP Basic credentials.
func WithBasicAuth(user, password string) Option {
	return func(c *Client) error { c.user, c.pass = user, password; return nil }
}

// WithBearerToken sends "Authorization: Bearer <token>".
func WithBearerToken(token string) Option {
	return func(c *Client) error { c.token = token; return nil }
}

// WithTLSFiles trusts the CA certificates in caFile (PEM; "" keeps the
// system roots) and, when certFile and keyFile are set, presents that
// client certificate (mTLS).
func WithTLSFiles(caFile, certFile, keyFile string) Option {
	return func(c *Client) error {
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if caFile != "" {
			b, err := os.ReadFile(caFile)
			if err != nil {
				return fmt.Errorf("CA file: %w", err)
			}
			tc.RootCAs = x509.NewCertPool()
			if !tc.RootCAs.AppendCertsFromPEM(b) {
				return fmt.Errorf("CA file %s: no PEM certificates", caFile)
			}
		}
		if (certFile == "") != (keyFile == "") {
			return errors.New("a client certificate needs both the certificate and the key file")
		}
		if certFile != "" {
			kp, err := tls.LoadX509KeyPair(certFile, keyFile)
			if err != nil {
				return fmt.Errorf("client certificate: %w", err)
			}
			tc.Certificates = []tls.Certificate{kp}
		}
		c.tlsConf = tc
		return nil
	}
}

// WithTLSConfig sets the TLS configuration directly.
func WithTLSConfig(tc *tls.Config) Option {
	return func(c *Client) error { c.tlsConf = tc; return nil }
}

// WithHTTPClient replaces the HTTP client (TLS options then do not apply).
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error { c.hc, c.hcCustom = hc, true; return nil }
}

// WithRebalanceRetries retries requests answered 409 with Retry-After (a
// rebalance, never "already exists") up to n times, waiting the longer of
// Retry-After (capped at maxWait) and an exponential backoff from initial.
// The default is no retries.
func WithRebalanceRetries(n int, initial, maxWait time.Duration) Option {
	return func(c *Client) error { c.retries, c.backoff, c.maxWait = n, initial, maxWait; return nil }
}

// WithSessionKey signs every request with the inter-worker session key, as
// a worker does for the internal endpoints.
func WithSessionKey(key func() ([]byte, bool)) Option {
	return func(c *Client) error { c.sessKey = key; return nil }
}

// New returns a client for the worker at baseURL ("" means DefaultURL).
func New(baseURL string, opts ...Option) (*Client, error) {
	if baseURL == "" {
		baseURL = DefaultURL
	}
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("worker URL %q: want http(s)://host:port", baseURL)
	}
	c := &Client{base: u, now: time.Now, sleep: sleepCtx, maxWait: 10 * time.Second}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	if !c.hcCustom {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = c.tlsConf
		c.hc = &http.Client{Transport: tr, Timeout: 120 * time.Second}
	}
	return c, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// URL returns the worker's base URL.
func (c *Client) URL() string { return c.base.String() }

// Error is an error answer of the API.
type Error struct {
	StatusCode int    // HTTP status
	ErrorCode  int    // error_code of the body
	Message    string // message of the body (or the raw body if it was not one)
	// RetryAfter is set for rebalance conflicts (409 with Retry-After).
	RetryAfter time.Duration

	raw []byte
}

func (e *Error) Error() string {
	return fmt.Sprintf("%d: %s", e.StatusCode, e.Message)
}

// IsNotFound reports a 404 answer.
func IsNotFound(err error) bool { return statusOf(err) == http.StatusNotFound }

// IsConflict reports any 409 answer (exists or rebalance).
func IsConflict(err error) bool { return statusOf(err) == http.StatusConflict }

// IsRebalance reports a 409 that is a rebalance (it carries Retry-After),
// as opposed to "already exists".
func IsRebalance(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.StatusCode == http.StatusConflict && e.RetryAfter > 0
}

// IsUnauthorized reports a 401 or 403 answer.
func IsUnauthorized(err error) bool {
	s := statusOf(err)
	return s == http.StatusUnauthorized || s == http.StatusForbidden
}

func statusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.StatusCode
	}
	return 0
}

// do sends one request, retrying rebalance conflicts; out (if non-nil)
// receives the JSON body of a 2xx answer. It returns the status code.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, in, out any) (int, http.Header, error) {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return 0, nil, err
		}
	}
	for attempt := 0; ; attempt++ {
		code, hdr, err := c.once(ctx, method, path, query, body, out)
		if err == nil || !IsRebalance(err) || attempt >= c.retries {
			return code, hdr, err
		}
		wait := c.backoff << attempt
		var e *Error
		errors.As(err, &e)
		if ra := min(e.RetryAfter, c.maxWait); ra > wait {
			wait = ra
		}
		if err := c.sleep(ctx, wait); err != nil {
			return code, hdr, err
		}
	}
}

func (c *Client) once(ctx context.Context, method, path string, query url.Values, body []byte, out any) (int, http.Header, error) {
	u := *c.base
	u.RawPath = c.base.EscapedPath() + path
	u.Path, _ = url.PathUnescape(u.RawPath)
	u.RawQuery = query.Encode()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	switch {
	case c.token != "":
		req.Header.Set("Authorization", "Bearer "+c.token)
	case c.user != "":
		req.SetBasicAuth(c.user, c.pass)
	}
	if c.sessKey != nil {
		if key, ok := c.sessKey(); ok {
			signature.Sign(req, body, key, c.now())
		}
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 256<<20))
	if err != nil {
		return res.StatusCode, res.Header, err
	}
	if res.StatusCode >= 300 {
		e := &Error{StatusCode: res.StatusCode, raw: raw}
		var em api.ErrorMessage
		if json.Unmarshal(raw, &em) == nil && em.Message != "" {
			e.ErrorCode, e.Message = em.ErrorCode, em.Message
		} else {
			e.ErrorCode, e.Message = res.StatusCode, strings.TrimSpace(string(raw))
			if e.Message == "" {
				e.Message = http.StatusText(res.StatusCode)
			}
		}
		if ra := res.Header.Get("Retry-After"); ra != "" && res.StatusCode == http.StatusConflict {
			if s, err := strconv.Atoi(ra); err == nil && s >= 0 {
				e.RetryAfter = time.Duration(max(s, 1)) * time.Second
			}
		}
		return res.StatusCode, res.Header, e
	}
	if out != nil && len(bytes.TrimSpace(raw)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber() // offsets are 64-bit; float64 would round them
		if err := dec.Decode(out); err != nil {
			return res.StatusCode, res.Header, fmt.Errorf("decoding the answer of %s %s: %w", method, path, err)
		}
	}
	return res.StatusCode, res.Header, nil
}

func conn(name string, rest ...string) string {
	p := "/connectors/" + url.PathEscape(name)
	for _, r := range rest {
		p += "/" + r
	}
	return p
}

// ServerInfo is GET /.
func (c *Client) ServerInfo(ctx context.Context) (api.ServerInfo, error) {
	var v api.ServerInfo
	_, _, err := c.do(ctx, "GET", "/", nil, nil, &v)
	return v, err
}

// Health is GET /health; a 503/500 answer is returned as Health with the
// status, not as an error.
func (c *Client) Health(ctx context.Context) (api.Health, error) {
	var v api.Health
	_, _, err := c.do(ctx, "GET", "/health", nil, nil, &v)
	var e *Error
	if errors.As(err, &e) && (e.StatusCode == 503 || e.StatusCode == 500) {
		// The health body of "starting"/"unhealthy" is a Health, not an error body.
		if jerr := json.Unmarshal(e.raw, &v); jerr == nil && v.Status != "" {
			return v, nil
		}
	}
	return v, err
}

// Connectors lists connector names.
func (c *Client) Connectors(ctx context.Context) ([]string, error) {
	var v []string
	_, _, err := c.do(ctx, "GET", "/connectors", nil, nil, &v)
	return v, err
}

// ConnectorsExpanded lists connectors with their status and/or info.
func (c *Client) ConnectorsExpanded(ctx context.Context, status, info bool) (map[string]api.ConnectorExpanded, error) {
	q := url.Values{}
	if status {
		q.Add("expand", "status")
	}
	if info {
		q.Add("expand", "info")
	}
	v := map[string]api.ConnectorExpanded{}
	_, _, err := c.do(ctx, "GET", "/connectors", q, nil, &v)
	return v, err
}

// Connector is GET /connectors/{name}.
func (c *Client) Connector(ctx context.Context, name string) (api.ConnectorInfo, error) {
	var v api.ConnectorInfo
	_, _, err := c.do(ctx, "GET", conn(name), nil, nil, &v)
	return v, err
}

// Config is GET /connectors/{name}/config.
func (c *Client) Config(ctx context.Context, name string) (map[string]string, error) {
	var v map[string]string
	_, _, err := c.do(ctx, "GET", conn(name, "config"), nil, nil, &v)
	return v, err
}

// Create is POST /connectors; initial may be "" (RUNNING), RUNNING, PAUSED or STOPPED.
func (c *Client) Create(ctx context.Context, name string, config map[string]string, initial api.InitialState) (api.ConnectorInfo, error) {
	body := api.CreateConnectorRequest{Name: name, Config: config, InitialState: initial}
	var v api.ConnectorInfo
	_, _, err := c.do(ctx, "POST", "/connectors", nil, body, &v)
	return v, err
}

// PutConfig is PUT /connectors/{name}/config (create or replace).
func (c *Client) PutConfig(ctx context.Context, name string, config map[string]string) (info api.ConnectorInfo, created bool, err error) {
	code, _, err := c.do(ctx, "PUT", conn(name, "config"), nil, config, &info)
	return info, code == http.StatusCreated, err
}

// PatchConfig is PATCH /connectors/{name}/config; a nil value removes the key.
func (c *Client) PatchConfig(ctx context.Context, name string, patch map[string]*string) (api.ConnectorInfo, error) {
	var v api.ConnectorInfo
	_, _, err := c.do(ctx, "PATCH", conn(name, "config"), nil, patch, &v)
	return v, err
}

// Delete is DELETE /connectors/{name}.
func (c *Client) Delete(ctx context.Context, name string) error {
	_, _, err := c.do(ctx, "DELETE", conn(name), nil, nil, nil)
	return err
}

// Status is GET /connectors/{name}/status.
func (c *Client) Status(ctx context.Context, name string) (api.ConnectorStateInfo, error) {
	var v api.ConnectorStateInfo
	_, _, err := c.do(ctx, "GET", conn(name, "status"), nil, nil, &v)
	return v, err
}

// Tasks is GET /connectors/{name}/tasks.
func (c *Client) Tasks(ctx context.Context, name string) ([]api.TaskInfo, error) {
	var v []api.TaskInfo
	_, _, err := c.do(ctx, "GET", conn(name, "tasks"), nil, nil, &v)
	return v, err
}

// TaskStatus is GET /connectors/{name}/tasks/{task}/status.
func (c *Client) TaskStatus(ctx context.Context, name string, task int) (api.TaskState, error) {
	var v api.TaskState
	_, _, err := c.do(ctx, "GET", conn(name, "tasks", strconv.Itoa(task), "status"), nil, nil, &v)
	return v, err
}

// Restart is POST /connectors/{name}/restart. The result is nil for a
// plain restart (204) and the restart plan otherwise (202).
func (c *Client) Restart(ctx context.Context, name string, includeTasks, onlyFailed bool) (*api.ConnectorStateInfo, error) {
	q := url.Values{}
	if includeTasks {
		q.Set("includeTasks", "true")
	}
	if onlyFailed {
		q.Set("onlyFailed", "true")
	}
	var v api.ConnectorStateInfo
	code, _, err := c.do(ctx, "POST", conn(name, "restart"), q, nil, &v)
	if err != nil || code == http.StatusNoContent {
		return nil, err
	}
	return &v, nil
}

// RestartTask is POST /connectors/{name}/tasks/{task}/restart.
func (c *Client) RestartTask(ctx context.Context, name string, task int) error {
	_, _, err := c.do(ctx, "POST", conn(name, "tasks", strconv.Itoa(task), "restart"), nil, nil, nil)
	return err
}

// Pause is PUT /connectors/{name}/pause.
func (c *Client) Pause(ctx context.Context, name string) error {
	_, _, err := c.do(ctx, "PUT", conn(name, "pause"), nil, nil, nil)
	return err
}

// Resume is PUT /connectors/{name}/resume.
func (c *Client) Resume(ctx context.Context, name string) error {
	_, _, err := c.do(ctx, "PUT", conn(name, "resume"), nil, nil, nil)
	return err
}

// Stop is PUT /connectors/{name}/stop.
func (c *Client) Stop(ctx context.Context, name string) error {
	_, _, err := c.do(ctx, "PUT", conn(name, "stop"), nil, nil, nil)
	return err
}

// Topics is GET /connectors/{name}/topics.
func (c *Client) Topics(ctx context.Context, name string) ([]string, error) {
	var v map[string]struct {
		Topics []string `json:"topics"`
	}
	_, _, err := c.do(ctx, "GET", conn(name, "topics"), nil, nil, &v)
	return v[name].Topics, err
}

// ResetTopics is PUT /connectors/{name}/topics/reset.
func (c *Client) ResetTopics(ctx context.Context, name string) error {
	_, _, err := c.do(ctx, "PUT", conn(name, "topics", "reset"), nil, nil, nil)
	return err
}

// Offsets is GET /connectors/{name}/offsets.
func (c *Client) Offsets(ctx context.Context, name string) (api.ConnectorOffsets, error) {
	var v api.ConnectorOffsets
	_, _, err := c.do(ctx, "GET", conn(name, "offsets"), nil, nil, &v)
	return v, err
}

// AlterOffsets is PATCH /connectors/{name}/offsets.
func (c *Client) AlterOffsets(ctx context.Context, name string, offsets api.ConnectorOffsets) (string, error) {
	var v api.Message
	_, _, err := c.do(ctx, "PATCH", conn(name, "offsets"), nil, offsets, &v)
	return v.Message, err
}

// ResetOffsets is DELETE /connectors/{name}/offsets.
func (c *Client) ResetOffsets(ctx context.Context, name string) (string, error) {
	var v api.Message
	_, _, err := c.do(ctx, "DELETE", conn(name, "offsets"), nil, nil, &v)
	return v.Message, err
}

// Plugins is GET /connector-plugins.
func (c *Client) Plugins(ctx context.Context, connectorsOnly bool) ([]api.PluginInfo, error) {
	var v []api.PluginInfo
	_, _, err := c.do(ctx, "GET", "/connector-plugins", url.Values{"connectorsOnly": {strconv.FormatBool(connectorsOnly)}}, nil, &v)
	return v, err
}

// PluginConfig is GET /connector-plugins/{class}/config.
func (c *Client) PluginConfig(ctx context.Context, class string) ([]api.ConfigKeyInfo, error) {
	var v []api.ConfigKeyInfo
	_, _, err := c.do(ctx, "GET", "/connector-plugins/"+url.PathEscape(class)+"/config", nil, nil, &v)
	return v, err
}

// Validate is PUT /connector-plugins/{class}/config/validate.
func (c *Client) Validate(ctx context.Context, class string, config map[string]string) (api.ConfigInfos, error) {
	var v api.ConfigInfos
	_, _, err := c.do(ctx, "PUT", "/connector-plugins/"+url.PathEscape(class)+"/config/validate", nil, config, &v)
	return v, err
}

// Loggers is GET /admin/loggers.
func (c *Client) Loggers(ctx context.Context) (map[string]api.LoggerLevel, error) {
	var v map[string]api.LoggerLevel
	_, _, err := c.do(ctx, "GET", "/admin/loggers", nil, nil, &v)
	return v, err
}

// SetLoggerLevel is PUT /admin/loggers/{name} at worker scope; it returns
// the loggers changed.
func (c *Client) SetLoggerLevel(ctx context.Context, name, level string) ([]string, error) {
	var v []string
	_, _, err := c.do(ctx, "PUT", "/admin/loggers/"+url.PathEscape(name), nil, map[string]string{"level": level}, &v)
	return v, err
}

// PutTaskConfigs is the internal POST /connectors/{name}/tasks; the client
// needs WithSessionKey.
func (c *Client) PutTaskConfigs(ctx context.Context, name string, configs []map[string]string) error {
	_, _, err := c.do(ctx, "POST", conn(name, "tasks"), nil, configs, nil)
	return err
}

// FenceZombies is the internal PUT /connectors/{name}/fence; the client
// needs WithSessionKey.
func (c *Client) FenceZombies(ctx context.Context, name string) error {
	_, _, err := c.do(ctx, "PUT", conn(name, "fence"), nil, nil, nil)
	return err
}
