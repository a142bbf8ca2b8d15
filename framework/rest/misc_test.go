package rest_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"time"
)

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func mustReq(method, target string) *http.Request { return httptest.NewRequest(method, target, nil) }

func ioNopCloser(r io.Reader) io.ReadCloser { return io.NopCloser(r) }

func contextWithCancel() (context.Context, context.CancelFunc) {
	return context.WithCancel(context.Background())
}

func nowFunc() time.Time { return time.Now() }
