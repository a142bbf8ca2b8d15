package signature

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// received turns a client request into what a server sees.
func received(req *http.Request, body []byte) *http.Request {
	r := httptest.NewRequest(req.Method, req.URL.RequestURI(), bytes.NewReader(body))
	r.Header = req.Header.Clone()
	return r
}

func TestSignVerify(t *testing.T) {
	key := []byte("k1")
	now := time.UnixMilli(1_700_000_000_000)
	body := []byte(`[{"a":"b"}]`)
	mk := func() *http.Request {
		req, _ := http.NewRequest("POST", "http://w:8083/connectors/a%2Fb/tasks?forward=true", bytes.NewReader(body))
		Sign(req, body, key, now)
		return req
	}
	if err := Verify(received(mk(), body), body, key, now.Add(time.Minute)); err != nil {
		t.Fatalf("valid: %v", err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(r *http.Request) (*http.Request, []byte, []byte, time.Time)
		want   error
	}{
		{"other key", func(r *http.Request) (*http.Request, []byte, []byte, time.Time) { return r, body, []byte("k2"), now }, ErrInvalid},
		{"other body", func(r *http.Request) (*http.Request, []byte, []byte, time.Time) { return r, []byte(`[]`), key, now }, ErrInvalid},
		{"other path", func(r *http.Request) (*http.Request, []byte, []byte, time.Time) {
			r.RequestURI = "/connectors/x/tasks?forward=true"
			return r, body, key, now
		}, ErrInvalid},
		{"other query", func(r *http.Request) (*http.Request, []byte, []byte, time.Time) {
			r.RequestURI = "/connectors/a%2Fb/tasks?forward=false"
			return r, body, key, now
		}, ErrInvalid},
		{"other method", func(r *http.Request) (*http.Request, []byte, []byte, time.Time) {
			r.Method = "PUT"
			return r, body, key, now
		}, ErrInvalid},
		{"too old", func(r *http.Request) (*http.Request, []byte, []byte, time.Time) {
			return r, body, key, now.Add(MaxSkew + time.Second)
		}, ErrExpired},
		{"from the future", func(r *http.Request) (*http.Request, []byte, []byte, time.Time) {
			return r, body, key, now.Add(-MaxSkew - time.Second)
		}, ErrExpired},
		{"no signature", func(r *http.Request) (*http.Request, []byte, []byte, time.Time) {
			r.Header.Del(HeaderSignature)
			return r, body, key, now
		}, ErrMissing},
		{"bad base64", func(r *http.Request) (*http.Request, []byte, []byte, time.Time) {
			r.Header.Set(HeaderSignature, "***")
			return r, body, key, now
		}, ErrInvalid},
		{"other algorithm", func(r *http.Request) (*http.Request, []byte, []byte, time.Time) {
			r.Header.Set(HeaderAlgorithm, "HmacSHA1")
			return r, body, key, now
		}, ErrUnsupportedAlgorithm},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, b, k, at := tc.mutate(received(mk(), body))
			if err := Verify(r, b, k, at); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}
