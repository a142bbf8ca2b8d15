package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/connectd/connectd/framework/herder"
	"github.com/connectd/connectd/framework/rest/api"
)

// httpError is an error with a status code decided by this package.
type httpError struct {
	code       int
	msg        string
	retryAfter time.Duration // > 0: send Retry-After
}

func (e *httpError) Error() string { return e.msg }

func badRequest(msg string) error { return &httpError{code: http.StatusBadRequest, msg: msg} }

func notFound(msg string) error { return &httpError{code: http.StatusNotFound, msg: msg} }

// DefaultRetryAfter is the Retry-After sent with rebalance conflicts whose
// herder error names no delay.
const DefaultRetryAfter = time.Second

// Kafka Connect's 409 messages; each says it is about a rebalance, so that
// clients can tell them from "already exists" (which has no Retry-After).
const (
	msgNoLeader         = "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."
	msgForwardExhausted = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
)

func rebalance(msg string, after time.Duration) error {
	return &httpError{code: http.StatusConflict, msg: msg, retryAfter: after}
}

// writeErr maps an error to its status code and writes the error body.
func writeErr(w http.ResponseWriter, err error) {
	var (
		he  *httpError
		nf  *herder.NotFoundError
		ae  *herder.AlreadyExistsError
		br  *herder.BadRequestError
		rb  *herder.RebalanceError
		te  *herder.TransientError
		nl  *herder.NotLeaderError
		fb  *herder.ForbiddenError
		ae2 *authError
	)
	switch {
	case errors.As(err, &he):
		if he.retryAfter > 0 {
			setRetryAfter(w, he.retryAfter)
		}
		writeError(w, he.code, he.msg)
	case errors.As(err, &ae2):
		writeError(w, ae2.code, ae2.msg)
	case errors.As(err, &nf):
		writeError(w, http.StatusNotFound, nf.Msg)
	case errors.As(err, &ae):
		writeError(w, http.StatusConflict, ae.Msg)
	case errors.As(err, &br):
		writeError(w, http.StatusBadRequest, br.Msg)
	case errors.As(err, &rb):
		after := rb.RetryAfter
		if after <= 0 {
			after = DefaultRetryAfter
		}
		// The herder's messages say why (a rebalance, start-up, shutdown,
		// a busy worker); Retry-After says when to try again.
		setRetryAfter(w, after)
		writeError(w, http.StatusConflict, rb.Msg)
	case errors.As(err, &te):
		after := te.RetryAfter
		if after <= 0 {
			after = DefaultRetryAfter
		}
		setRetryAfter(w, after)
		writeError(w, http.StatusConflict, te.Msg)
	case errors.As(err, &nl):
		// A route that does not forward got NotLeader: the client should
		// retry once the cluster settles.
		setRetryAfter(w, DefaultRetryAfter)
		writeError(w, http.StatusConflict, msgNoLeader)
	case errors.As(err, &fb):
		writeError(w, http.StatusForbidden, fb.Msg)
	default:
		writeError(w, http.StatusInternalServerError, err.Error())
	}
}

func setRetryAfter(w http.ResponseWriter, d time.Duration) {
	secs := int(math.Ceil(d.Seconds()))
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
}

// writeError writes {"error_code","message"}.
func writeError(w http.ResponseWriter, code int, msg string) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(api.ErrorMessage{ErrorCode: code, Message: msg})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(code)
	w.Write(buf.Bytes())
}
