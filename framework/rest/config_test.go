package rest_test

import (
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/rest"
)

func TestParseConfig(t *testing.T) {
	cfg, used, err := rest.ParseConfig(map[string]string{
		"listeners":                             "http://:8083, https://127.0.0.1:8443",
		"access.control.allow.origin":           "https://ui.example",
		"access.control.allow.methods":          "GET,PUT",
		"rest.auth.basic.credentials.file":      "creds",
		"rest.auth.bearer.tokens.file":          "tokens",
		"rest.request.max.bytes":                "2048",
		"rest.request.timeout.ms":               "1500",
		"rest.health.unauthenticated":           "FALSE",
		"rest.metrics.unauthenticated":          "true",
		"listeners.https.ssl.keystore.location": "ks.pem",
		"ssl.keystore.location":                 "ignored.pem", // prefixed keys win, all or nothing
		"bootstrap.servers":                     "not-mine:9092",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := rest.Config{
		Listeners:        []string{"http://:8083", "https://127.0.0.1:8443"},
		CORSAllowOrigin:  "https://ui.example",
		CORSAllowMethods: "GET,PUT",
		Auth:             rest.AuthConfig{BasicCredentialsFile: "creds", BearerTokensFile: "tokens", HealthAuthenticated: true, MetricsUnauthenticated: true},
		MaxRequestBytes:  2048,
		RequestTimeout:   1500 * time.Millisecond,
		TLS:              rest.TLSConfig{KeystoreLocation: "ks.pem"},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("cfg = %+v\nwant  %+v", cfg, want)
	}
	sort.Strings(used)
	for _, k := range used {
		if k == "bootstrap.servers" || k == "ssl.keystore.location" {
			t.Fatalf("used reports %s", k)
		}
	}
	// By default /health is open and /metrics is not.
	if cfg, _, err := rest.ParseConfig(map[string]string{}); err != nil || cfg.Auth.HealthAuthenticated || cfg.Auth.MetricsUnauthenticated {
		t.Fatalf("defaults: %+v %v", cfg.Auth, err)
	}
	// Unprefixed ssl.* keys apply when no listeners.https.* key is set.
	cfg, _, err = rest.ParseConfig(map[string]string{"ssl.keystore.location": "plain.pem", "ssl.client.auth": "required"})
	if err != nil || cfg.TLS.KeystoreLocation != "plain.pem" || cfg.TLS.ClientAuth != "required" || cfg.Listeners[0] != "http://:8083" {
		t.Fatalf("unprefixed: %+v %v", cfg, err)
	}
	for _, tc := range []struct{ key, val string }{
		{"listeners", "ftp://:21"},
		{"listeners", "http://localhost"},
		{"admin.listeners", "http://:x"},
		{"rest.request.max.bytes", "-1"},
		{"rest.request.timeout.ms", "soon"},
		{"rest.health.unauthenticated", "yes"},
		{"rest.metrics.unauthenticated", "1"},
	} {
		if _, _, err := rest.ParseConfig(map[string]string{tc.key: tc.val}); err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s=%s: err = %v, want one naming the key", tc.key, tc.val, err)
		}
	}
}
