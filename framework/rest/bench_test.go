package rest_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/connectd/connectd/framework/rest"
	"github.com/connectd/connectd/framework/rest/resttest"
)

// BenchmarkHandler measures the REST layer's own cost per request (routing,
// auth, JSON encoding, metrics, logging to a discarded handler) over the
// in-memory herder, in process, without sockets.
func BenchmarkHandler(b *testing.B) {
	auth := authFiles(b)
	for _, bc := range []struct {
		name, method, path, body, authz string
		secured                         bool
	}{
		{name: "status", method: "GET", path: "/connectors/c/status"},
		{name: "status_basic_auth", method: "GET", path: "/connectors/c/status", secured: true, authz: basic(testUser, testPassword)},
		{name: "status_bearer", method: "GET", path: "/connectors/c/status", secured: true, authz: "Bearer " + testToken},
		{name: "put_config", method: "PUT", path: "/connectors/c/config", body: `{"connector.class":"` + resttest.SourceClass + `","tasks.max":"4"}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := rest.Config{}
			if bc.secured {
				cfg.Auth = auth
			}
			h := resttest.New()
			srv, err := rest.NewServer(cfg, h)
			if err != nil {
				b.Fatal(err)
			}
			handler := srv.Handler()
			req := func() *http.Request {
				r := httptest.NewRequest(bc.method, bc.path, strings.NewReader(bc.body))
				if bc.authz != "" {
					r.Header.Set("Authorization", bc.authz)
				}
				return r
			}
			seed := httptest.NewRequest("PUT", "/connectors/c/config", strings.NewReader(`{"connector.class":"`+resttest.SourceClass+`","tasks.max":"4"}`))
			if bc.authz != "" {
				seed.Header.Set("Authorization", bc.authz)
			}
			handler.ServeHTTP(httptest.NewRecorder(), seed)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				rec := httptest.NewRecorder()
				handler.ServeHTTP(rec, req())
				if rec.Code >= 300 {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}

// BenchmarkBcryptVerify is what one HTTP Basic check would cost without
// the server's verified-password cache, at bcrypt's default cost (10).
func BenchmarkBcryptVerify(b *testing.B) {
	hash, err := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.DefaultCost)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := bcrypt.CompareHashAndPassword(hash, []byte(testPassword)); err != nil {
			b.Fatal(err)
		}
	}
}
