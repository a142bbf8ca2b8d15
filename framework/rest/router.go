package rest

import (
	"context"
	"net/http"
	"net/url"
	"strings"
)

// route is one endpoint. The route table is the single source of truth for
// dispatch, metrics labels (op) and the OpenAPI cross-check test.
type route struct {
	method   string
	pattern  string // "/connectors/{connector}/status"
	op       string // the OpenAPI operationId, also the metrics handler label
	admin    bool   // served only where admin endpoints are (admin.listeners)
	internal bool   // inter-worker: needs a valid session-key signature
	forward  bool   // accepts ?forward= and forwards on NotLeaderError
	metrics  bool   // served by the metrics handler (WithMetricsHandler), not handle
	segs     []string
	handle   func(s *Server, ctx context.Context, rq *request) (*reply, error)
}

// request is what a handler sees: the matched path parameters (unescaped),
// the query and the already size-capped body.
type request struct {
	r      *http.Request
	params map[string]string
	query  url.Values
	body   []byte
}

// reply is a handler's answer; body nil means no body.
type reply struct {
	status int
	body   any
	header http.Header
}

func ok(body any) (*reply, error) { return &reply{status: http.StatusOK, body: body}, nil }

func status(code int) (*reply, error) { return &reply{status: code}, nil }

func routes() []*route {
	rs := []*route{
		{method: "GET", pattern: "/", op: "serverInfo", handle: (*Server).serverInfo},
		{method: "GET", pattern: "/health", op: "health", handle: (*Server).health},
		{method: "GET", pattern: "/openapi.json", op: "openapi", handle: (*Server).openapi},
		{method: "GET", pattern: "/metrics", op: "metrics", metrics: true},
		{method: "GET", pattern: "/connectors", op: "listConnectors", handle: (*Server).listConnectors},
		{method: "POST", pattern: "/connectors", op: "createConnector", forward: true, handle: (*Server).createConnector},
		{method: "GET", pattern: "/connectors/{connector}", op: "getConnector", handle: (*Server).getConnector},
		{method: "DELETE", pattern: "/connectors/{connector}", op: "deleteConnector", forward: true, handle: (*Server).deleteConnector},
		{method: "GET", pattern: "/connectors/{connector}/config", op: "getConnectorConfig", handle: (*Server).getConnectorConfig},
		{method: "PUT", pattern: "/connectors/{connector}/config", op: "putConnectorConfig", forward: true, handle: (*Server).putConnectorConfig},
		{method: "PATCH", pattern: "/connectors/{connector}/config", op: "patchConnectorConfig", forward: true, handle: (*Server).patchConnectorConfig},
		{method: "GET", pattern: "/connectors/{connector}/status", op: "getConnectorStatus", handle: (*Server).getConnectorStatus},
		{method: "GET", pattern: "/connectors/{connector}/tasks", op: "getTaskConfigs", handle: (*Server).getTaskConfigs},
		{method: "POST", pattern: "/connectors/{connector}/tasks", op: "putTaskConfigs", internal: true, forward: true, handle: (*Server).putTaskConfigs},
		{method: "GET", pattern: "/connectors/{connector}/tasks-config", op: "getTasksConfig", handle: (*Server).getTasksConfig},
		{method: "GET", pattern: "/connectors/{connector}/tasks/{task}/status", op: "getTaskStatus", handle: (*Server).getTaskStatus},
		{method: "POST", pattern: "/connectors/{connector}/tasks/{task}/restart", op: "restartTask", forward: true, handle: (*Server).restartTask},
		{method: "POST", pattern: "/connectors/{connector}/restart", op: "restartConnector", forward: true, handle: (*Server).restartConnector},
		{method: "PUT", pattern: "/connectors/{connector}/pause", op: "pauseConnector", forward: true, handle: (*Server).pauseConnector},
		{method: "PUT", pattern: "/connectors/{connector}/resume", op: "resumeConnector", forward: true, handle: (*Server).resumeConnector},
		{method: "PUT", pattern: "/connectors/{connector}/stop", op: "stopConnector", forward: true, handle: (*Server).stopConnector},
		{method: "PUT", pattern: "/connectors/{connector}/fence", op: "fenceZombies", internal: true, forward: true, handle: (*Server).fenceZombies},
		{method: "GET", pattern: "/connectors/{connector}/topics", op: "getConnectorTopics", handle: (*Server).getConnectorTopics},
		{method: "PUT", pattern: "/connectors/{connector}/topics/reset", op: "resetConnectorTopics", forward: true, handle: (*Server).resetConnectorTopics},
		{method: "GET", pattern: "/connectors/{connector}/offsets", op: "getOffsets", handle: (*Server).getOffsets},
		{method: "PATCH", pattern: "/connectors/{connector}/offsets", op: "alterOffsets", forward: true, handle: (*Server).alterOffsets},
		{method: "DELETE", pattern: "/connectors/{connector}/offsets", op: "resetOffsets", forward: true, handle: (*Server).resetOffsets},
		{method: "GET", pattern: "/connector-plugins", op: "listPlugins", handle: (*Server).listPlugins},
		{method: "GET", pattern: "/connector-plugins/{plugin}/config", op: "getPluginConfig", handle: (*Server).getPluginConfig},
		{method: "PUT", pattern: "/connector-plugins/{plugin}/config/validate", op: "validateConfig", handle: (*Server).validateConfig},
		{method: "GET", pattern: "/admin/loggers", op: "listLoggers", admin: true, handle: (*Server).listLoggers},
		{method: "GET", pattern: "/admin/loggers/{logger}", op: "getLogger", admin: true, handle: (*Server).getLogger},
		{method: "PUT", pattern: "/admin/loggers/{logger}", op: "setLogger", admin: true, forward: true, handle: (*Server).setLogger},
	}
	for _, r := range rs {
		r.segs = splitPath(r.pattern)
	}
	return rs
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// match finds the route for a method and escaped path. Path segments are
// unescaped one by one, so "%2F" inside a connector name is part of the
// name, not a separator. pathFound reports a path match with another
// method (405).
func match(rs []*route, method, escapedPath string) (rt *route, params map[string]string, pathFound bool, badEscape bool) {
	p := escapedPath
	if len(p) > 1 && strings.HasSuffix(p, "/") {
		p = p[:len(p)-1] // JAX-RS tolerates one trailing slash
	}
	raw := splitPath(p)
	segs := make([]string, len(raw))
	for i, s := range raw {
		u, err := url.PathUnescape(s)
		if err != nil {
			return nil, nil, false, true
		}
		segs[i] = u
	}
	for _, r := range rs {
		if len(r.segs) != len(segs) {
			continue
		}
		var ps map[string]string
		matched := true
		for i, pat := range r.segs {
			if strings.HasPrefix(pat, "{") {
				if segs[i] == "" {
					matched = false
					break
				}
				if ps == nil {
					ps = map[string]string{}
				}
				ps[pat[1:len(pat)-1]] = segs[i]
				continue
			}
			if pat != segs[i] {
				matched = false
				break
			}
		}
		if !matched {
			continue
		}
		pathFound = true
		if r.method == method || (method == http.MethodHead && r.method == http.MethodGet) {
			return r, ps, true, false
		}
	}
	return nil, nil, pathFound, false
}
