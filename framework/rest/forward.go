package rest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/connectd/connectd/framework/rest/signature"
)

// forward re-issues a leader-only request to the leader, following Kafka
// Connect's two-hop rule: a request without ?forward= is forwarded with
// forward=true; one with forward=true may be forwarded once more with
// forward=false (the leader may send it on to the owning worker); one with
// forward=false is not forwarded again and gets 409. The original query
// parameters are kept, and the forwarded request is signed with the
// session key instead of carrying the user's credentials.
func (s *Server) forward(ctx context.Context, w http.ResponseWriter, rq *request, leaderURL string) {
	if leaderURL == "" {
		writeErr(w, rebalance(msgNoLeader, DefaultRetryAfter))
		return
	}
	var next string
	switch strings.ToLower(rq.query.Get("forward")) {
	case "":
		next = "true"
	case "true":
		next = "false"
	default:
		writeErr(w, rebalance(msgForwardExhausted, DefaultRetryAfter))
		return
	}
	key, _, ok := s.h.SessionKey()
	if !ok {
		writeErr(w, rebalance("Cannot forward the request to the leader yet: this worker has not read the inter-worker session key (a rebalance is underway); retry shortly", DefaultRetryAfter))
		return
	}
	q := url.Values{}
	for k, vs := range rq.query {
		if k != "forward" {
			q[k] = vs
		}
	}
	q.Set("forward", next)
	target := strings.TrimRight(leaderURL, "/") + rq.r.URL.EscapedPath() + "?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, rq.r.Method, target, bytes.NewReader(rq.body))
	if err != nil {
		writeErr(w, rebalance(fmt.Sprintf("Cannot forward the request to the leader at %s (a rebalance may be underway): %v", leaderURL, err), DefaultRetryAfter))
		return
	}
	if len(rq.body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	signature.Sign(req, rq.body, key, s.now())
	resp, err := s.fwd.Do(req)
	if err != nil {
		writeErr(w, rebalance(fmt.Sprintf("Cannot forward the request to the leader at %s (it may have failed; a rebalance will follow): %v", leaderURL, err), DefaultRetryAfter))
		return
	}
	defer resp.Body.Close()
	for _, h := range []string{"Content-Type", "Retry-After"} {
		if v := resp.Header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
	// Kafka Connect builds Location on the worker the client asked, so it
	// names that worker, not the leader.
	if v := resp.Header.Get("Location"); v != "" {
		if u, err := url.Parse(v); err == nil {
			w.Header().Set("Location", absoluteLocation(rq.r, u.EscapedPath()))
		}
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}
