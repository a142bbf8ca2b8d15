// Package signature signs and verifies connectd's inter-worker REST
// requests with the cluster's session key (Kafka Connect's KIP-507
// scheme): HMAC-SHA256, sent base64-encoded in X-Connect-Authorization
// with the algorithm in X-Connect-Request-Signature-Algorithm.
//
// Kafka Connect signs only the body; connectd signs the method, the
// request URI (path and query as sent), a timestamp header and the body,
// so a captured signature cannot be replayed against another endpoint or
// after MaxSkew. What this package must not do: obtain or store keys (the
// herder reads the session key from the config topic).
package signature

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"strconv"
	"time"
)

// Header names and the one supported algorithm.
const (
	HeaderSignature = "X-Connect-Authorization"
	HeaderAlgorithm = "X-Connect-Request-Signature-Algorithm"
	HeaderTimestamp = "X-Connectd-Request-Timestamp" // unix milliseconds
	Algorithm       = "HmacSHA256"
	// MaxSkew is how far a signed request's timestamp may be from the
	// receiver's clock.
	MaxSkew = 5 * time.Minute
)

// Errors Verify returns; callers map them to status codes (Kafka Connect
// answers a missing signature or an unsupported algorithm 400 and an
// invalid signature 403).
var (
	ErrMissing              = errors.New("internal request missing required signature")
	ErrUnsupportedAlgorithm = errors.New("unsupported request signature algorithm")
	ErrInvalid              = errors.New("internal request contained invalid signature")
	ErrExpired              = errors.New("internal request signature timestamp is missing, malformed or outside the allowed clock skew")
)

// Present reports whether a request carries any signature header.
func Present(h http.Header) bool {
	return h.Get(HeaderSignature) != "" || h.Get(HeaderAlgorithm) != "" || h.Get(HeaderTimestamp) != ""
}

// Sign adds the signature headers to req, whose body is body. It must be
// called after req.URL is final.
func Sign(req *http.Request, body, key []byte, now time.Time) {
	ts := strconv.FormatInt(now.UnixMilli(), 10)
	req.Header.Set(HeaderAlgorithm, Algorithm)
	req.Header.Set(HeaderTimestamp, ts)
	req.Header.Set(HeaderSignature, base64.StdEncoding.EncodeToString(mac(key, req.Method, req.URL.RequestURI(), ts, body)))
}

// Verify checks a received request (server side: r.RequestURI is the raw
// request target) against key.
func Verify(r *http.Request, body, key []byte, now time.Time) error {
	sig := r.Header.Get(HeaderSignature)
	alg := r.Header.Get(HeaderAlgorithm)
	if sig == "" || alg == "" {
		return ErrMissing
	}
	if alg != Algorithm {
		return fmt.Errorf("%w: this worker does not support the '%s' key signing algorithm used by other workers; it supports %s", ErrUnsupportedAlgorithm, alg, Algorithm)
	}
	ts := r.Header.Get(HeaderTimestamp)
	ms, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return ErrExpired
	}
	if d := now.Sub(time.UnixMilli(ms)); d > MaxSkew || d < -MaxSkew {
		return ErrExpired
	}
	got, err := base64.StdEncoding.DecodeString(sig)
	if err != nil {
		return ErrInvalid
	}
	uri := r.RequestURI
	if uri == "" {
		uri = r.URL.RequestURI()
	}
	if !hmac.Equal(got, mac(key, r.Method, uri, ts, body)) {
		return ErrInvalid
	}
	return nil
}

func mac(key []byte, method, uri, ts string, body []byte) []byte {
	var m hash.Hash = hmac.New(sha256.New, key)
	m.Write([]byte(method))
	m.Write([]byte{'\n'})
	m.Write([]byte(uri))
	m.Write([]byte{'\n'})
	m.Write([]byte(ts))
	m.Write([]byte{'\n'})
	m.Write(body)
	return m.Sum(nil)
}
