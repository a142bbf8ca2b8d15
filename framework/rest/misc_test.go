package rest_test

import (
	"net/http"
	"net/http/httptest"
)

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func mustReq(method, target string) *http.Request { return httptest.NewRequest(method, target, nil) }
