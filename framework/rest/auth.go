package rest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"

	"golang.org/x/crypto/bcrypt"

	"github.com/connectd/connectd/framework/rest/signature"
)

// authError is an authentication failure (401, or 400/403/409 for
// inter-worker signatures). Messages never contain the credentials.
type authError struct {
	code int
	msg  string
}

func (e *authError) Error() string { return e.msg }

// PrincipalWorker is the principal of a request signed by another worker.
const PrincipalWorker = "connectd-worker"

// authenticateWorker checks a request that carries signature headers: it
// must be validly signed with the session key, and is then another worker.
func (s *Server) authenticateWorker(r *http.Request, body []byte) (string, error) {
	key, _, ok := s.h.SessionKey()
	if !ok {
		return "", rebalance("This worker has not yet read the inter-worker session key from the config topic (the cluster is starting or a rebalance is underway); retry shortly", DefaultRetryAfter)
	}
	switch err := signature.Verify(r, body, key, s.now()); {
	case err == nil:
		return PrincipalWorker, nil
	case errors.Is(err, signature.ErrMissing):
		return "", &authError{code: http.StatusBadRequest, msg: "Internal request missing required signature"}
	case errors.Is(err, signature.ErrUnsupportedAlgorithm):
		return "", &authError{code: http.StatusBadRequest, msg: err.Error()}
	case errors.Is(err, signature.ErrExpired):
		return "", &authError{code: http.StatusForbidden, msg: "Internal request signature has expired or has a malformed timestamp (" + signature.HeaderTimestamp + ")"}
	default:
		return "", &authError{code: http.StatusForbidden, msg: "Internal request contained invalid signature."}
	}
}

// authenticateUser checks an unsigned request: internal routes need a
// signature; others need user credentials when they are configured,
// except /health and /metrics when the configuration exempts them.
func (s *Server) authenticateUser(r *http.Request, rt *route) (string, error) {
	if rt.internal {
		return "", &authError{code: http.StatusBadRequest, msg: "Internal request missing required signature"}
	}
	if s.exempt(rt) {
		return "", nil
	}
	return s.auth.user(r)
}

// exempt reports whether a route is served without user credentials.
func (s *Server) exempt(rt *route) bool {
	switch rt.op {
	case "health":
		return !s.cfg.Auth.HealthAuthenticated
	case "metrics":
		return s.cfg.Auth.MetricsUnauthenticated
	}
	return false
}

func (s *Server) writeAuthErr(w http.ResponseWriter, err error) {
	if ae, ok := err.(*authError); ok && ae.code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", s.auth.challenge())
	}
	writeErr(w, err)
}

// authenticator checks user credentials: HTTP Basic against bcrypt hashes
// and bearer tokens against SHA-256 digests.
type authenticator struct {
	realm  string
	basic  map[string][]byte // user → bcrypt hash
	tokens []tokenEntry

	// verified caches the SHA-256 of the last password that passed bcrypt
	// for each user, so that a client does not pay bcrypt on every call.
	mu       sync.Mutex
	verified map[string][32]byte
}

type tokenEntry struct {
	principal string
	digest    [32]byte
}

// dummyHash equalizes the time of unknown-user and wrong-password answers.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("connectd-dummy"), bcrypt.MinCost)

func newAuthenticator(c AuthConfig) (*authenticator, error) {
	a := &authenticator{realm: c.Realm, verified: map[string][32]byte{}}
	if c.BasicCredentialsFile != "" {
		m, err := loadCredentials(c.BasicCredentialsFile)
		if err != nil {
			return nil, err
		}
		a.basic = m
	}
	if c.BearerTokensFile != "" {
		t, err := loadTokens(c.BearerTokensFile)
		if err != nil {
			return nil, err
		}
		a.tokens = t
	}
	return a, nil
}

func (a *authenticator) enabled() bool { return a.basic != nil || a.tokens != nil }

func (a *authenticator) challenge() string {
	var cs []string
	if a.basic != nil {
		cs = append(cs, fmt.Sprintf("Basic realm=%q", a.realm))
	}
	if a.tokens != nil {
		cs = append(cs, fmt.Sprintf("Bearer realm=%q", a.realm))
	}
	return strings.Join(cs, ", ")
}

func unauthorized(msg string) error { return &authError{code: http.StatusUnauthorized, msg: msg} }

func (a *authenticator) user(r *http.Request) (string, error) {
	if !a.enabled() {
		return "", nil
	}
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", unauthorized("authentication required: send HTTP Basic credentials or a bearer token")
	}
	scheme, cred, _ := strings.Cut(h, " ")
	cred = strings.TrimSpace(cred)
	switch strings.ToLower(scheme) {
	case "basic":
		if a.basic == nil {
			return "", unauthorized("HTTP Basic authentication is not enabled on this worker")
		}
		raw, err := base64.StdEncoding.DecodeString(cred)
		if err != nil {
			return "", unauthorized("malformed HTTP Basic credentials")
		}
		user, pass, found := strings.Cut(string(raw), ":")
		if !found {
			return "", unauthorized("malformed HTTP Basic credentials")
		}
		if !a.checkPassword(user, pass) {
			return "", unauthorized("invalid user name or password")
		}
		return user, nil
	case "bearer":
		if a.tokens == nil {
			return "", unauthorized("bearer-token authentication is not enabled on this worker")
		}
		d := sha256.Sum256([]byte(cred))
		principal := ""
		for _, t := range a.tokens {
			if subtle.ConstantTimeCompare(d[:], t.digest[:]) == 1 {
				principal = t.principal
			}
		}
		if principal == "" {
			return "", unauthorized("invalid bearer token")
		}
		return principal, nil
	default:
		return "", unauthorized("unsupported Authorization scheme; use Basic or Bearer")
	}
}

func (a *authenticator) checkPassword(user, pass string) bool {
	hash, known := a.basic[user]
	d := sha256.Sum256([]byte(pass))
	if known {
		a.mu.Lock()
		prev, cached := a.verified[user]
		a.mu.Unlock()
		if cached && subtle.ConstantTimeCompare(prev[:], d[:]) == 1 {
			return true
		}
	} else {
		hash = dummyHash
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(pass)) != nil || !known {
		return false
	}
	a.mu.Lock()
	a.verified[user] = d
	a.mu.Unlock()
	return true
}

// loadCredentials reads "user:bcrypt-hash" lines.
func loadCredentials(path string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := eachLine(path, func(n int, line string) error {
		user, hash, ok := strings.Cut(line, ":")
		if !ok || user == "" {
			return fmt.Errorf("%s (%s) line %d: want user:bcrypt-hash", PropBasicCredentials, path, n)
		}
		if _, err := bcrypt.Cost([]byte(hash)); err != nil {
			return fmt.Errorf("%s (%s) line %d: the hash of user %q is not a bcrypt hash: %v", PropBasicCredentials, path, n, user, err)
		}
		out[user] = []byte(hash)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s (%s): no credentials in the file", PropBasicCredentials, path)
	}
	return out, nil
}

// loadTokens reads "principal:token" or "principal:sha256:<hex>" lines.
func loadTokens(path string) ([]tokenEntry, error) {
	var out []tokenEntry
	err := eachLine(path, func(n int, line string) error {
		principal, tok, ok := strings.Cut(line, ":")
		if !ok || principal == "" || tok == "" {
			return fmt.Errorf("%s (%s) line %d: want principal:token or principal:sha256:<hex>", PropBearerTokens, path, n)
		}
		e := tokenEntry{principal: principal}
		if hexd, isDigest := strings.CutPrefix(tok, "sha256:"); isDigest {
			b, err := hex.DecodeString(hexd)
			if err != nil || len(b) != sha256.Size {
				return fmt.Errorf("%s (%s) line %d: sha256: needs 64 hex digits", PropBearerTokens, path, n)
			}
			copy(e.digest[:], b)
		} else {
			e.digest = sha256.Sum256([]byte(tok))
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s (%s): no tokens in the file", PropBearerTokens, path)
	}
	return out, nil
}

func eachLine(path string, f func(n int, line string) error) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if err := f(n, line); err != nil {
			return err
		}
	}
	return sc.Err()
}
