package rest

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults of the Config fields that have one.
const (
	DefaultListener        = "http://:8083"
	DefaultMaxRequestBytes = 1 << 20
	DefaultRequestTimeout  = 90 * time.Second
	// DefaultCORSMethods is Jetty's CrossOriginFilter default, which Kafka
	// Connect uses when access.control.allow.methods is empty.
	DefaultCORSMethods = "GET,POST,HEAD"
)

// Config is the REST server's configuration. ParseConfig builds it from
// worker properties; the worker daemon may also fill it directly. Every
// field documents the worker property it comes from.
type Config struct {
	// Listeners are the URLs to listen on, "http://host:port" or
	// "https://host:port"; an empty host listens on all interfaces and port
	// 0 picks a free port (see Server.Listeners). Property: listeners
	// (comma-separated; default http://:8083).
	Listeners []string

	// AdminListeners, when non-nil, are the listeners that serve /admin/*
	// instead of Listeners; an empty non-nil slice disables /admin/*.
	// Property: admin.listeners (unset: admin endpoints on Listeners; set
	// to the empty string: disabled).
	AdminListeners []string

	// TLS configures every https listener, and the client used to forward
	// requests to other workers. Properties: listeners.https.ssl.* (or,
	// when no listeners.https.* key is set, the unprefixed ssl.* keys, as
	// Kafka Connect does).
	TLS TLSConfig

	// CORS. Properties: access.control.allow.origin (comma-separated
	// origins, or "*"; empty disables CORS) and access.control.allow.methods
	// (comma-separated; default GET,POST,HEAD).
	CORSAllowOrigin  string
	CORSAllowMethods string

	// Auth configures user authentication; with neither file set the API is
	// open, as Kafka Connect's is by default.
	Auth AuthConfig

	// MaxRequestBytes caps request bodies; larger ones are answered 413.
	// Property: rest.request.max.bytes (default 1048576).
	MaxRequestBytes int64

	// RequestTimeout bounds each herder call; on expiry the request fails
	// with 500 "Request timed out", as in Kafka Connect. Property:
	// rest.request.timeout.ms (default 90000).
	RequestTimeout time.Duration
}

// TLSConfig is the https listener's key material, in Kafka's key names
// (prefix listeners.https. or none). Only PEM key stores are supported:
//
//	ssl.keystore.type=PEM
//	ssl.keystore.location=<file holding the unencrypted private key and the certificate chain, PEM>
//	  or ssl.keystore.key + ssl.keystore.certificate.chain (the PEM text inline)
//	ssl.truststore.type=PEM
//	ssl.truststore.location=<file of CA certificates, PEM>
//	  or ssl.truststore.certificates (PEM text inline)
//	ssl.client.auth=none|requested|required
//
// The trust store verifies client certificates (mTLS) and, when this
// worker forwards a request, the other worker's certificate; the key store
// is then also presented as the client certificate.
type TLSConfig struct {
	KeystoreType             string // ssl.keystore.type; "" or PEM
	KeystoreLocation         string // ssl.keystore.location
	KeystoreKey              string // ssl.keystore.key (inline PEM; a secret)
	KeystoreCertificateChain string // ssl.keystore.certificate.chain (inline PEM)
	KeyPassword              string // ssl.key.password; encrypted keys are not supported, set only if empty
	TruststoreType           string // ssl.truststore.type; "" or PEM
	TruststoreLocation       string // ssl.truststore.location
	TruststoreCertificates   string // ssl.truststore.certificates (inline PEM)
	ClientAuth               string // ssl.client.auth: none (default), requested, required
}

// AuthConfig selects how users authenticate. Requests signed by another
// worker with the session key need no user credentials.
type AuthConfig struct {
	// BasicCredentialsFile holds "user:bcrypt-hash" lines (htpasswd -B
	// format; '#' comments). Property: rest.auth.basic.credentials.file.
	BasicCredentialsFile string
	// BearerTokensFile holds "principal:token" or "principal:sha256:<hex of
	// the token's SHA-256>" lines. Property: rest.auth.bearer.tokens.file.
	BearerTokensFile string
	// Realm is the HTTP Basic realm. Property: rest.auth.realm (default
	// "connectd").
	Realm string
	// HealthAuthenticated makes GET /health need credentials like every
	// other endpoint. By default it does not, so that Kubernetes probes,
	// Docker health checks and load balancers, which carry no
	// credentials, work with authentication on; /health tells nothing
	// but whether the worker is ready. Property:
	// rest.health.unauthenticated=false (default true).
	HealthAuthenticated bool
	// MetricsUnauthenticated serves GET /metrics without credentials, for
	// a Prometheus that scrapes the REST listener without them (metrics
	// name connectors and tasks). Property: rest.metrics.unauthenticated
	// (default false).
	MetricsUnauthenticated bool
}

// Property names ParseConfig reads.
const (
	PropListeners          = "listeners"
	PropAdminListeners     = "admin.listeners"
	PropCORSAllowOrigin    = "access.control.allow.origin"
	PropCORSAllowMethods   = "access.control.allow.methods"
	PropBasicCredentials   = "rest.auth.basic.credentials.file"
	PropBearerTokens       = "rest.auth.bearer.tokens.file"
	PropAuthRealm          = "rest.auth.realm"
	PropHealthUnauth       = "rest.health.unauthenticated"
	PropMetricsUnauth      = "rest.metrics.unauthenticated"
	PropMaxRequestBytes    = "rest.request.max.bytes"
	PropRequestTimeoutMS   = "rest.request.timeout.ms"
	httpsListenerSSLPrefix = "listeners.https."
)

// ParseConfig builds a Config from worker properties and returns the keys
// it used, so the caller can warn about unknown ones. An invalid value is
// an error naming the key.
func ParseConfig(props map[string]string) (Config, []string, error) {
	var used []string
	get := func(k string) (string, bool) {
		v, ok := props[k]
		if ok {
			used = append(used, k)
		}
		return strings.TrimSpace(v), ok
	}
	var c Config
	if v, ok := get(PropListeners); ok && v != "" {
		c.Listeners = splitList(v)
	} else {
		c.Listeners = []string{DefaultListener}
	}
	for _, l := range c.Listeners {
		if _, err := parseListener(l); err != nil {
			return Config{}, used, fmt.Errorf("%s: %w", PropListeners, err)
		}
	}
	if v, ok := get(PropAdminListeners); ok {
		c.AdminListeners = splitList(v)
		if c.AdminListeners == nil {
			c.AdminListeners = []string{}
		}
		for _, l := range c.AdminListeners {
			if _, err := parseListener(l); err != nil {
				return Config{}, used, fmt.Errorf("%s: %w", PropAdminListeners, err)
			}
		}
	}
	c.CORSAllowOrigin, _ = get(PropCORSAllowOrigin)
	c.CORSAllowMethods, _ = get(PropCORSAllowMethods)
	c.Auth.BasicCredentialsFile, _ = get(PropBasicCredentials)
	c.Auth.BearerTokensFile, _ = get(PropBearerTokens)
	c.Auth.Realm, _ = get(PropAuthRealm)
	if v, ok := get(PropHealthUnauth); ok && v != "" {
		b, err := parseBool(PropHealthUnauth, v)
		if err != nil {
			return Config{}, used, err
		}
		c.Auth.HealthAuthenticated = !b
	}
	if v, ok := get(PropMetricsUnauth); ok && v != "" {
		b, err := parseBool(PropMetricsUnauth, v)
		if err != nil {
			return Config{}, used, err
		}
		c.Auth.MetricsUnauthenticated = b
	}
	if v, ok := get(PropMaxRequestBytes); ok && v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return Config{}, used, fmt.Errorf("%s: %q is not a positive integer", PropMaxRequestBytes, v)
		}
		c.MaxRequestBytes = n
	}
	if v, ok := get(PropRequestTimeoutMS); ok && v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return Config{}, used, fmt.Errorf("%s: %q is not a positive integer", PropRequestTimeoutMS, v)
		}
		c.RequestTimeout = time.Duration(n) * time.Millisecond
	}

	// Kafka's valuesWithPrefixAllOrNothing: if any listeners.https.* key is
	// present only the prefixed keys count, else the unprefixed ssl.* ones.
	prefix := ""
	for k := range props {
		if strings.HasPrefix(k, httpsListenerSSLPrefix) {
			prefix = httpsListenerSSLPrefix
			break
		}
	}
	ssl := func(k string) string { v, _ := get(prefix + k); return v }
	c.TLS = TLSConfig{
		KeystoreType:             ssl("ssl.keystore.type"),
		KeystoreLocation:         ssl("ssl.keystore.location"),
		KeystoreKey:              ssl("ssl.keystore.key"),
		KeystoreCertificateChain: ssl("ssl.keystore.certificate.chain"),
		KeyPassword:              ssl("ssl.key.password"),
		TruststoreType:           ssl("ssl.truststore.type"),
		TruststoreLocation:       ssl("ssl.truststore.location"),
		TruststoreCertificates:   ssl("ssl.truststore.certificates"),
		ClientAuth:               ssl("ssl.client.auth"),
	}
	switch strings.ToLower(c.TLS.ClientAuth) {
	case "", "none", "requested", "required":
	default:
		return Config{}, used, fmt.Errorf("%sssl.client.auth: %q is not one of none, requested, required", prefix, c.TLS.ClientAuth)
	}
	return c, used, nil
}

// parseBool reads a boolean property as Kafka does: true or false, in
// any case.
func parseBool(key, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%s: %q is not true or false", key, v)
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// listener is one parsed listener URL.
type listener struct {
	https bool
	addr  string // host:port for net.Listen
}

func parseListener(s string) (listener, error) {
	u, err := url.Parse(s)
	if err != nil {
		return listener{}, fmt.Errorf("listener %q: %w", s, err)
	}
	var l listener
	switch strings.ToLower(u.Scheme) {
	case "http":
	case "https":
		l.https = true
	default:
		return listener{}, fmt.Errorf("listener %q: scheme must be http or https", s)
	}
	if u.Path != "" && u.Path != "/" {
		return listener{}, fmt.Errorf("listener %q: must not have a path", s)
	}
	port := u.Port()
	if port == "" {
		return listener{}, fmt.Errorf("listener %q: needs a port", s)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return listener{}, fmt.Errorf("listener %q: bad port", s)
	}
	l.addr = net.JoinHostPort(u.Hostname(), port)
	return l, nil
}

func (c Config) withDefaults() Config {
	if len(c.Listeners) == 0 {
		c.Listeners = []string{DefaultListener}
	}
	if c.MaxRequestBytes <= 0 {
		c.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.CORSAllowMethods == "" {
		c.CORSAllowMethods = DefaultCORSMethods
	}
	if c.Auth.Realm == "" {
		c.Auth.Realm = "connectd"
	}
	return c
}
