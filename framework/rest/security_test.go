package rest_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/connectd/connectd/framework/rest"
	"github.com/connectd/connectd/framework/rest/signature"
)

const (
	testUser     = "alice"
	testPassword = "s3cret-Passw0rd!"
	testToken    = "tok-7f3a9c1e5b"
	testToken2   = "tok-digest-only"
)

func authFiles(t testing.TB) rest.AuthConfig {
	t.Helper()
	dir := t.TempDir()
	hash, err := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	creds := filepath.Join(dir, "credentials")
	if err := os.WriteFile(creds, []byte("# users\n"+testUser+":"+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := sha256.Sum256([]byte(testToken2))
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("ci:"+testToken+"\nops:sha256:"+hex.EncodeToString(d[:])+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return rest.AuthConfig{BasicCredentialsFile: creds, BearerTokensFile: tokens}
}

func TestAuthentication(t *testing.T) {
	e := newEnv(t, rest.Config{Auth: authFiles(t)})
	for _, tc := range []struct {
		name   string
		header string
		code   int
		msg    string
	}{
		{"missing", "", 401, "authentication required: send HTTP Basic credentials or a bearer token"},
		{"wrong password", basic(testUser, "nope"), 401, "invalid user name or password"},
		{"unknown user", basic("mallory", testPassword), 401, "invalid user name or password"},
		{"malformed basic", "Basic !!!", 401, "malformed HTTP Basic credentials"},
		{"wrong token", "Bearer nope", 401, "invalid bearer token"},
		{"other scheme", "Digest x", 401, "unsupported Authorization scheme; use Basic or Bearer"},
		{"basic ok", basic(testUser, testPassword), 200, ""},
		{"basic ok cached", basic(testUser, testPassword), 200, ""},
		{"token ok", "Bearer " + testToken, 200, ""},
		{"digest token ok", "Bearer " + testToken2, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.header != "" {
				hdr = []string{"Authorization", tc.header}
			}
			r := e.do("GET", "/connectors", nil, hdr...)
			if tc.code == 200 {
				r.want(t, 200, `[]`)
				return
			}
			r.wantError(t, tc.code, tc.msg)
			if ch := r.header.Get("WWW-Authenticate"); ch != `Basic realm="connectd", Bearer realm="connectd"` {
				t.Fatalf("WWW-Authenticate = %q", ch)
			}
		})
	}
	// Writes are guarded too, and a rejected one changes nothing.
	before := e.h.Snapshot()
	e.do("PUT", "/connectors/c/config", srcConfig("c", "1")).wantError(t, 401, "authentication required: send HTTP Basic credentials or a bearer token")
	if e.h.Snapshot() != before {
		t.Fatal("unauthenticated write changed state")
	}
	// Anonymous clients are refused before their body is read.
	e.do("PUT", "/connectors/c/config", strings.Repeat("x", 2<<20)).wantError(t, 401, "authentication required: send HTTP Basic credentials or a bearer token")
	// Principals appear in the request log; secrets never do.
	logs := e.logs.String()
	if !strings.Contains(logs, `"principal":"alice"`) || !strings.Contains(logs, `"principal":"ci"`) {
		t.Fatalf("request log lacks principals: %s", logs)
	}
	for _, secret := range []string{testPassword, testToken, testToken2, "nope"} {
		if strings.Contains(logs, secret) {
			t.Fatalf("log contains secret %q", secret)
		}
	}
}

// /health answers without credentials by default (probes carry none),
// /metrics only when asked; every other endpoint still needs them.
func TestUnauthenticatedHealthAndMetrics(t *testing.T) {
	metricsH := rest.WithMetricsHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("connectd_up 1\n"))
	}))
	for _, tc := range []struct {
		name          string
		auth          func(rest.AuthConfig) rest.AuthConfig
		health, mtrcs int
	}{
		{"defaults", func(a rest.AuthConfig) rest.AuthConfig { return a }, 200, 401},
		{"health authenticated", func(a rest.AuthConfig) rest.AuthConfig { a.HealthAuthenticated = true; return a }, 401, 401},
		{"metrics unauthenticated", func(a rest.AuthConfig) rest.AuthConfig { a.MetricsUnauthenticated = true; return a }, 200, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, rest.Config{Auth: tc.auth(authFiles(t))}, metricsH)
			if r := e.do("GET", "/health", nil); r.code != tc.health {
				t.Fatalf("GET /health without credentials: %d %s, want %d", r.code, r.body, tc.health)
			}
			if r := e.do("GET", "/metrics", nil); r.code != tc.mtrcs {
				t.Fatalf("GET /metrics without credentials: %d %s, want %d", r.code, r.body, tc.mtrcs)
			}
			// The exemption covers those two endpoints only.
			for _, p := range []string{"/", "/connectors", "/connector-plugins", "/openapi.json", "/connectors/x/status", "/admin/loggers"} {
				e.do("GET", p, nil).wantError(t, 401, "authentication required: send HTTP Basic credentials or a bearer token")
			}
			e.do("POST", "/connectors", map[string]any{"name": "c", "config": srcConfig("c", "1")}).wantError(t, 401, "authentication required: send HTTP Basic credentials or a bearer token")
			// With credentials everything answers as before.
			if r := e.do("GET", "/health", nil, "Authorization", basic(testUser, testPassword)); r.code != 200 {
				t.Fatalf("GET /health with credentials: %d %s", r.code, r.body)
			}
			if r := e.do("GET", "/metrics", nil, "Authorization", basic(testUser, testPassword)); r.code != 200 {
				t.Fatalf("GET /metrics with credentials: %d %s", r.code, r.body)
			}
		})
	}
}

func basic(u, p string) string {
	r, _ := http.NewRequest("GET", "/", nil)
	r.SetBasicAuth(u, p)
	return r.Header.Get("Authorization")
}

func TestAuthFileErrorsNameTheKey(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("alice:plaintext-password\n"), 0o600)
	_, err := rest.NewServer(rest.Config{Auth: rest.AuthConfig{BasicCredentialsFile: bad}}, newEnv(t, rest.Config{}).h)
	if err == nil || !strings.Contains(err.Error(), "rest.auth.basic.credentials.file") || !strings.Contains(err.Error(), "line 1") || strings.Contains(err.Error(), "plaintext-password") {
		t.Fatalf("err = %v", err)
	}
}

// signed builds a request signed with key.
func signed(t *testing.T, method, url string, body []byte, key []byte, now time.Time) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	signature.Sign(req, body, key, now)
	return req
}

func send(t *testing.T, req *http.Request) resp {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(res.Body)
	return resp{code: res.StatusCode, header: res.Header, body: buf.Bytes()}
}

func TestInternalRequestSignatures(t *testing.T) {
	e := newEnv(t, rest.Config{Auth: authFiles(t)})
	e.user, e.pass = testUser, testPassword
	e.do("PUT", "/connectors/c/config", srcConfig("c", "1")).want(t, 201, mustJSON(map[string]any{
		"name": "c", "config": srcConfig("c", "1"), "tasks": []any{map[string]any{"connector": "c", "task": 0}}, "type": "source"}))
	key, _, _ := e.h.SessionKey()
	body := []byte(`[{"task.class":"x","a":"1"}]`)
	now := time.Now()

	// A user's credentials do not open internal endpoints.
	e.do("POST", "/connectors/c/tasks", string(body)).wantError(t, 400, "Internal request missing required signature")

	send(t, signed(t, "POST", e.ts.URL+"/connectors/c/tasks", body, []byte("forged-key-forged-key-forged-key"), now)).
		wantError(t, 403, "Internal request contained invalid signature.")
	// The signature covers the body, the path and the time.
	req := signed(t, "POST", e.ts.URL+"/connectors/c/tasks", []byte(`[{"task.class":"y"}]`), key, now)
	req.Body, req.ContentLength = http.NoBody, 0
	send(t, withBody(req, body)).wantError(t, 403, "Internal request contained invalid signature.")
	req = signed(t, "PUT", e.ts.URL+"/connectors/c/fence", nil, key, now)
	req.URL.Path = "/connectors/other/fence"
	send(t, req).wantError(t, 403, "Internal request contained invalid signature.")
	send(t, signed(t, "POST", e.ts.URL+"/connectors/c/tasks", body, key, now.Add(-10*time.Minute))).
		wantErrorContaining(t, 403, "expired")
	req = signed(t, "POST", e.ts.URL+"/connectors/c/tasks", body, key, now)
	req.Header.Set(signature.HeaderAlgorithm, "HmacMD5")
	send(t, req).wantErrorContaining(t, 400, "'HmacMD5'")
	if got := e.h.Pushed("c"); got != nil {
		t.Fatalf("rejected internal requests reached the herder: %v", got)
	}

	// A valid signature works, without user credentials.
	send(t, signed(t, "POST", e.ts.URL+"/connectors/c/tasks", body, key, now)).want(t, 204, "")
	if got := e.h.Pushed("c"); len(got) != 1 || got[0]["task.class"] != "x" || got[0]["a"] != "1" {
		t.Fatalf("pushed = %v", got)
	}
	send(t, signed(t, "PUT", e.ts.URL+"/connectors/c/fence", nil, key, now)).want(t, 204, "")
	if f := e.h.Fenced(); len(f) != 1 || f[0] != "c" {
		t.Fatalf("fenced = %v", f)
	}

	// No session key yet: a retryable conflict, not an acceptance.
	e.h.SetSessionKey(nil)
	r := send(t, signed(t, "PUT", e.ts.URL+"/connectors/c/fence", nil, key, now))
	r.wantErrorContaining(t, 409, "session key")
	if r.header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	if strings.Contains(e.logs.String(), string(key)) {
		t.Fatal("session key in the log")
	}
}

func withBody(req *http.Request, b []byte) *http.Request {
	r2 := req.Clone(req.Context())
	r2.Body = http.NoBody
	if len(b) > 0 {
		r2.Body = ioNopCloser(bytes.NewReader(b))
	}
	r2.ContentLength = int64(len(b))
	return r2
}

// ---- TLS ----

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newCA(t *testing.T, cn string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return &testCA{cert: c, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a PEM key store (key + chain) for a leaf certificate.
func (ca *testCA) issue(t *testing.T, cn string, server bool) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature,
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		tmpl.DNSNames = []string{"localhost"}
	} else {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kd, _ := x509.MarshalPKCS8PrivateKey(key)
	return append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
}

func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// serveTLS starts a server from worker properties and returns its URL.
func serveTLS(t *testing.T, props map[string]string) string {
	t.Helper()
	cfg, _, err := rest.ParseConfig(props)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := rest.NewServer(cfg, newEnv(t, rest.Config{}).h)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := contextWithCancel()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return srv.Listeners()[0]
}

func tlsClient(roots []byte, clientKeystore []byte) *http.Client {
	c := &tls.Config{}
	if roots != nil {
		c.RootCAs = x509.NewCertPool()
		c.RootCAs.AppendCertsFromPEM(roots)
	}
	if clientKeystore != nil {
		kp, err := tls.X509KeyPair(clientKeystore, clientKeystore)
		if err != nil {
			panic(err)
		}
		c.Certificates = []tls.Certificate{kp}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: c}, Timeout: 10 * time.Second}
}

func get(c *http.Client, url string) (int, error) {
	res, err := c.Get(url)
	if err != nil {
		return 0, err
	}
	res.Body.Close()
	return res.StatusCode, nil
}

func TestTLSListener(t *testing.T) {
	dir := t.TempDir()
	ca := newCA(t, "test-ca")
	ks := writeFile(t, dir, "server.pem", ca.issue(t, "worker", true))
	url := serveTLS(t, map[string]string{
		"listeners":                             "https://127.0.0.1:0",
		"listeners.https.ssl.keystore.type":     "PEM",
		"listeners.https.ssl.keystore.location": ks,
	})
	if !strings.HasPrefix(url, "https://127.0.0.1:") {
		t.Fatalf("listener url %q", url)
	}
	if code, err := get(tlsClient(ca.pem, nil), url+"/connectors"); err != nil || code != 200 {
		t.Fatalf("trusted client: %d %v", code, err)
	}
	if _, err := get(tlsClient(newCA(t, "other").pem, nil), url+"/connectors"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("client trusting another CA: err = %v, want a certificate error", err)
	}
	// Plain HTTP to the TLS port never reaches the API.
	if code, err := get(&http.Client{Timeout: 5 * time.Second}, strings.Replace(url, "https", "http", 1)+"/connectors"); err == nil && code == 200 {
		t.Fatal("plain http was served by the https listener")
	}
}

func TestMutualTLS(t *testing.T) {
	dir := t.TempDir()
	ca := newCA(t, "test-ca")
	clientCA := newCA(t, "client-ca")
	url := serveTLS(t, map[string]string{
		"listeners":                               "https://127.0.0.1:0",
		"listeners.https.ssl.keystore.location":   writeFile(t, dir, "server.pem", ca.issue(t, "worker", true)),
		"listeners.https.ssl.truststore.type":     "PEM",
		"listeners.https.ssl.truststore.location": writeFile(t, dir, "clients.pem", clientCA.pem),
		"listeners.https.ssl.client.auth":         "required",
	})
	if code, err := get(tlsClient(ca.pem, clientCA.issue(t, "ops", false)), url+"/connectors"); err != nil || code != 200 {
		t.Fatalf("client with a trusted certificate: %d %v", code, err)
	}
	if _, err := get(tlsClient(ca.pem, nil), url+"/connectors"); err == nil {
		t.Fatal("client without a certificate was accepted")
	}
	if _, err := get(tlsClient(ca.pem, newCA(t, "rogue").issue(t, "mallory", false)), url+"/connectors"); err == nil {
		t.Fatal("client with an untrusted certificate was accepted")
	}
}

func TestTLSConfigErrors(t *testing.T) {
	h := newEnv(t, rest.Config{}).h
	for _, tc := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{"listeners": "https://127.0.0.1:0"}, "listeners.https.ssl.keystore.location"},
		{map[string]string{"listeners": "https://127.0.0.1:0", "ssl.keystore.type": "JKS", "ssl.keystore.location": "x"}, "ssl.keystore.type=JKS is not supported"},
		{map[string]string{"listeners": "https://127.0.0.1:0", "listeners.https.ssl.keystore.location": "/nonexistent/ks.pem"}, "ssl.keystore.location"},
	} {
		cfg, _, err := rest.ParseConfig(tc.props)
		if err == nil {
			_, err = rest.NewServer(cfg, h)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.props, err, tc.want)
		}
	}
	if _, _, err := rest.ParseConfig(map[string]string{"listeners.https.ssl.client.auth": "maybe"}); err == nil || !strings.Contains(err.Error(), "listeners.https.ssl.client.auth") {
		t.Errorf("bad client auth: %v", err)
	}
}

func TestCORS(t *testing.T) {
	e := newEnv(t, rest.Config{CORSAllowOrigin: "https://ui.example", CORSAllowMethods: "GET,POST,PUT,DELETE"})
	r := e.do("OPTIONS", "/connectors", nil, "Origin", "https://ui.example", "Access-Control-Request-Method", "PUT")
	if r.code != 200 || r.header.Get("Access-Control-Allow-Origin") != "https://ui.example" || r.header.Get("Access-Control-Allow-Methods") != "GET,POST,PUT,DELETE" ||
		!strings.Contains(r.header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("preflight: %d %v", r.code, r.header)
	}
	r = e.do("OPTIONS", "/connectors", nil, "Origin", "https://ui.example", "Access-Control-Request-Method", "PATCH")
	if r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("preflight for a method not allowed got CORS headers: %v", r.header)
	}
	r = e.do("GET", "/connectors", nil, "Origin", "https://ui.example")
	if r.code != 200 || r.header.Get("Access-Control-Allow-Origin") != "https://ui.example" {
		t.Fatalf("simple request: %d %v", r.code, r.header)
	}
	r = e.do("GET", "/connectors", nil, "Origin", "https://evil.example")
	if r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("foreign origin got CORS headers: %v", r.header)
	}
	// CORS off by default.
	e2 := newEnv(t, rest.Config{})
	if r := e2.do("GET", "/connectors", nil, "Origin", "https://ui.example"); r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatal("CORS header without access.control.allow.origin")
	}
}
