package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/framework/herder"
	"github.com/connectd/connectd/framework/rest/signature"
)

// levelFor logs failures louder than successes.
func levelFor(code int) slog.Level {
	switch {
	case code >= 500:
		return slog.LevelWarn
	case code >= 400:
		return slog.LevelInfo
	default:
		return slog.LevelDebug
	}
}

// handler builds the request pipeline for one kind of listener: withPublic
// serves the non-admin routes, withAdmin the /admin ones.
func (s *Server) handler(withPublic, withAdmin bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rw := &recorder{ResponseWriter: w, status: 0}
		op := "unmatched"
		principal := ""
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("REST handler panicked", "method", r.Method, "path", r.URL.EscapedPath(), "handler", op, "panic", fmt.Sprint(p))
				if rw.status == 0 {
					writeError(rw, http.StatusInternalServerError, "internal error; see the worker log")
				}
			}
			code := rw.status
			if code == 0 {
				code = http.StatusOK
			}
			d := time.Since(start)
			s.metrics.observe(op, code, d)
			// Only the method, path, principal name and outcome are logged:
			// never headers or bodies, which carry credentials and configs.
			s.log.LogAttrs(r.Context(), levelFor(code), "REST request",
				slog.String("method", r.Method), slog.String("path", r.URL.EscapedPath()), slog.String("handler", op),
				slog.Int("status", code), slog.Duration("duration", d), slog.String("remote", r.RemoteAddr), slog.String("principal", principal))
		}()

		if s.cors(rw, r) {
			op = "cors_preflight"
			return
		}
		rt, params, pathFound, badEscape := match(s.routes, r.Method, r.URL.EscapedPath())
		if rt != nil && ((rt.admin && !withAdmin) || (!rt.admin && !withPublic)) {
			rt = nil
		}
		if rt == nil {
			op, principal = s.unmatched(rw, r, badEscape, pathFound, withPublic, withAdmin)
			return
		}
		op = rt.op
		if rt.admin && s.levels == nil {
			writeError(rw, http.StatusNotFound, "this worker does not expose /admin/loggers")
			return
		}

		// Users are authenticated before the body is read, so anonymous
		// clients cannot make the worker buffer bodies; a signature covers
		// the body, so signed requests are checked after reading it.
		signed := signature.Present(r.Header)
		if !signed {
			id, err := s.authenticateUser(r, rt)
			if err != nil {
				s.writeAuthErr(rw, err)
				return
			}
			principal = id
		}
		if err := negotiate(r, rt); err != nil {
			writeErr(rw, err)
			return
		}
		if rt.metrics {
			if s.metricsH == nil {
				writeError(rw, http.StatusNotFound, "this worker does not serve /metrics")
				return
			}
			s.metricsH.ServeHTTP(rw, r)
			return
		}
		body, err := s.readBodyFor(r, rt)
		if err != nil {
			writeErr(rw, err)
			return
		}
		if signed {
			id, err := s.authenticateWorker(r, body)
			if err != nil {
				s.writeAuthErr(rw, err)
				return
			}
			principal = id
		}
		rq := &request{r: r, params: params, query: r.URL.Query(), body: body}
		if rt.forward {
			if _, err := boolParam(rq.query, "forward", false); err != nil {
				writeErr(rw, err)
				return
			}
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
		defer cancel()
		ctx = herder.WithReadScope(ctx)
		rep, err := rt.handle(s, ctx, rq)
		if err != nil {
			var nl *herder.NotLeaderError
			if errors.As(err, &nl) && rt.forward {
				s.forward(ctx, rw, rq, nl.LeaderURL)
				return
			}
			if ctx.Err() != nil && r.Context().Err() == nil && errors.Is(err, context.DeadlineExceeded) {
				writeError(rw, http.StatusInternalServerError, "Request timed out")
				return
			}
			writeErr(rw, err)
			return
		}
		writeReply(rw, r, rep)
	})
}

// unmatched answers a request no route on this listener serves: 400 for
// a path that cannot be unescaped, OPTIONS for a served path, 405 (with
// Allow) for a path served with other methods, else 404. It returns the
// handler label and the principal for the request log.
func (s *Server) unmatched(w http.ResponseWriter, r *http.Request, badEscape, pathFound, withPublic, withAdmin bool) (op, principal string) {
	if badEscape {
		writeError(w, http.StatusBadRequest, "malformed percent-escape in the request path")
		return "unmatched", ""
	}
	if pathFound && r.Method == http.MethodOptions {
		return "options", s.serveOptions(w, r, withPublic, withAdmin)
	}
	if methods, found := s.allowed(r.URL.EscapedPath(), withPublic, withAdmin); found {
		w.Header().Set("Allow", strings.Join(methods, ","))
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("HTTP method %s is not supported by %s", r.Method, r.URL.EscapedPath()))
		return "unmatched", ""
	}
	writeError(w, http.StatusNotFound, fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.EscapedPath()))
	return "unmatched", ""
}

// readBodyFor reads the capped body and, where the resource consumes
// JSON, refuses one sent without a Content-Type.
func (s *Server) readBodyFor(r *http.Request, rt *route) ([]byte, error) {
	body, err := readBody(r, s.cfg.MaxRequestBytes)
	if err == nil && consumesJSON(rt) {
		err = checkBodyType(r, body)
	}
	return body, err
}

// serveOptions answers OPTIONS for a path this listener serves, after the
// same authentication as the path's other methods; it returns the
// principal for the request log.
func (s *Server) serveOptions(w http.ResponseWriter, r *http.Request, withPublic, withAdmin bool) string {
	methods, found := s.allowed(r.URL.EscapedPath(), withPublic, withAdmin)
	if !found {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.EscapedPath()))
		return ""
	}
	if rt, _, _, _ := match(s.routes, http.MethodGet, r.URL.EscapedPath()); rt != nil && s.exempt(rt) {
		options(w, r, methods)
		return ""
	}
	id, err := s.auth.user(r)
	if err != nil {
		s.writeAuthErr(w, err)
		return ""
	}
	options(w, r, methods)
	return id
}

// negotiate applies Kafka Connect's media types before the body is read:
// 415 for a Content-Type other than JSON where the resource consumes
// JSON, then 406 for an Accept without JSON. /metrics negotiates its own
// exposition format.
func negotiate(r *http.Request, rt *route) error {
	if rt.metrics {
		return nil
	}
	if consumesJSON(rt) {
		if err := checkContentType(r); err != nil {
			return err
		}
	}
	if !acceptsJSON(r.Header) {
		return notAcceptable(r.Header)
	}
	return nil
}

// readBody reads the whole body up to limit bytes; more is a 413.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if r.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, &httpError{code: http.StatusBadRequest, msg: "could not read the request body: " + err.Error()}
	}
	if int64(len(b)) > limit {
		return nil, tooLarge(limit)
	}
	return b, nil
}

func tooLarge(limit int64) error {
	return &httpError{code: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("request body is larger than the limit of %d bytes (rest.request.max.bytes)", limit)}
}

func writeReply(w http.ResponseWriter, r *http.Request, rep *reply) {
	for k, vs := range rep.header {
		for _, v := range vs {
			if k == "Location" {
				v = absoluteLocation(r, v)
			}
			w.Header().Add(k, v)
		}
	}
	if rep.body == nil {
		w.WriteHeader(rep.status)
		return
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if raw, ok := rep.body.(json.RawMessage); ok {
		buf.Write(raw)
	} else if err := enc.Encode(rep.body); err != nil {
		writeError(w, http.StatusInternalServerError, "could not encode the response: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(rep.status)
	if r.Method != http.MethodHead {
		w.Write(buf.Bytes())
	}
}

// recorder remembers the status code for logs and metrics.
type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}
