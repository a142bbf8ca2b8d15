package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/herder"
	"github.com/connectd/connectd/framework/logging"
	"github.com/connectd/connectd/framework/rest/api"
)

// healthTimeout is Kafka Connect's DEFAULT_HEALTH_CHECK_TIMEOUT_MS.
const healthTimeout = 10 * time.Second

func (s *Server) serverInfo(ctx context.Context, _ *request) (*reply, error) {
	info, err := s.h.ServerInfo(ctx)
	if err != nil {
		return nil, err
	}
	return ok(info)
}

// health answers 200 only for a healthy worker, one that can serve every
// request now; starting, rebalancing, unhealthy or shutting down are all
// 503, so that a probe or load balancer takes the worker out of rotation
// and a client knows to come back (Kafka Connect answers 500 for
// "unhealthy"; a 5xx that means "try later" is 503).
func (s *Server) health(ctx context.Context, _ *request) (*reply, error) {
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	h := s.h.Health(ctx)
	if h.Status == api.HealthHealthy {
		return ok(h)
	}
	return &reply{status: http.StatusServiceUnavailable, body: h}, nil
}

func (s *Server) openapi(context.Context, *request) (*reply, error) {
	return ok(json.RawMessage(openAPIDocument))
}

func (s *Server) listConnectors(ctx context.Context, rq *request) (*reply, error) {
	names, err := s.h.Connectors(ctx)
	if err != nil {
		return nil, err
	}
	if names == nil {
		names = []string{}
	}
	// As Kafka Connect parses it: any expand parameter, even an empty or
	// unknown one, asks for the map form; only the exact values "status"
	// and "info" add a part ("status,info" in one value is unknown).
	expand, expanded := rq.query["expand"]
	if !expanded {
		return ok(names)
	}
	var withStatus, withInfo bool
	for _, e := range expand {
		switch e {
		case "status":
			withStatus = true
		case "info":
			withInfo = true
		}
	}
	out := make(map[string]api.ConnectorExpanded, len(names))
	for _, n := range names {
		var m api.ConnectorExpanded
		if withStatus {
			// The herder answers UNASSIGNED for a connector whose status
			// has not been reported yet, so NotFound here means the
			// connector was deleted while we listed.
			st, err := s.h.ConnectorStatus(ctx, n)
			if isNotFound(err) {
				continue // omitted, as in Kafka Connect
			}
			if err != nil {
				return nil, err
			}
			st = normStatus(st)
			m.Status = &st
		}
		if withInfo {
			info, err := s.h.ConnectorInfo(ctx, n)
			if isNotFound(err) {
				continue
			}
			if err != nil {
				return nil, err
			}
			info = normInfo(info)
			m.Info = &info
		}
		out[n] = m
	}
	return ok(out)
}

func isNotFound(err error) bool {
	var nf *herder.NotFoundError
	return errors.As(err, &nf)
}

// createRequest is api.CreateConnectorRequest as the server decodes it:
// pointers and a raw config, so that a missing or mistyped field is
// refused with a message naming it.
type createRequest struct {
	Name         *string         `json:"name"`
	Config       json.RawMessage `json:"config"`
	InitialState *string         `json:"initial_state"`
}

func (s *Server) createConnector(ctx context.Context, rq *request) (*reply, error) {
	var cr createRequest
	const what = `a JSON object {"name": string, "config": {string: string}, "initial_state": "RUNNING"|"PAUSED"|"STOPPED"}`
	if err := decodeStrict(rq.body, &cr, what); err != nil {
		return nil, err
	}
	if cr.Name == nil {
		return nil, badRequest(`field "name" is required: the connector name`)
	}
	name := strings.TrimSpace(*cr.Name)
	if len(cr.Config) == 0 || string(cr.Config) == "null" {
		return nil, badRequest(`field "config" is required: a JSON object of connector configuration keys to string values`)
	}
	cfg, err := decodeConfig(cr.Config, `field "config": a JSON object of string keys to string values`)
	if err != nil {
		return nil, err
	}
	if err := checkAndPutName(name, cfg); err != nil {
		return nil, err
	}
	var initial api.InitialState
	if cr.InitialState != nil {
		switch strings.ToUpper(strings.TrimSpace(*cr.InitialState)) {
		case "RUNNING":
			initial = api.InitialRunning
		case "PAUSED":
			initial = api.InitialPaused
		case "STOPPED":
			initial = api.InitialStopped
		default:
			return nil, badRequest(fmt.Sprintf("field \"initial_state\": %q is not one of RUNNING, PAUSED, STOPPED", *cr.InitialState))
		}
	}
	info, _, err := s.h.PutConnectorConfig(ctx, name, cfg, false, initial)
	if err != nil {
		return nil, err
	}
	return &reply{status: http.StatusCreated, body: normInfo(info), header: location(name)}, nil
}

func location(name string) http.Header {
	return http.Header{"Location": {"/connectors/" + url.PathEscape(name)}}
}

func (s *Server) getConnector(ctx context.Context, rq *request) (*reply, error) {
	info, err := s.h.ConnectorInfo(ctx, rq.params["connector"])
	if err != nil {
		return nil, err
	}
	return ok(normInfo(info))
}

func (s *Server) deleteConnector(ctx context.Context, rq *request) (*reply, error) {
	if err := s.h.DeleteConnector(ctx, rq.params["connector"]); err != nil {
		return nil, err
	}
	return status(http.StatusNoContent)
}

func (s *Server) getConnectorConfig(ctx context.Context, rq *request) (*reply, error) {
	cfg, err := s.h.ConnectorConfig(ctx, rq.params["connector"])
	if err != nil {
		return nil, err
	}
	if cfg == nil {
		cfg = map[string]string{}
	}
	return ok(cfg)
}

func (s *Server) putConnectorConfig(ctx context.Context, rq *request) (*reply, error) {
	name := rq.params["connector"]
	cfg, err := decodeConfig(rq.body, "a JSON object of connector configuration keys to string values")
	if err != nil {
		return nil, err
	}
	if err := checkAndPutName(name, cfg); err != nil {
		return nil, err
	}
	info, created, err := s.h.PutConnectorConfig(ctx, name, cfg, true, "")
	if err != nil {
		return nil, err
	}
	if created {
		return &reply{status: http.StatusCreated, body: normInfo(info), header: location(name)}, nil
	}
	return ok(normInfo(info))
}

func (s *Server) patchConnectorConfig(ctx context.Context, rq *request) (*reply, error) {
	name := rq.params["connector"]
	const what = "a JSON object of connector configuration keys to string values (null removes a key)"
	var raw map[string]json.RawMessage
	if err := decodeStrict(rq.body, &raw, what); err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, badRequest("request body must be " + what + ", not null")
	}
	patch := make(map[string]*string, len(raw))
	for k, v := range raw {
		sv, present, err := stringValue(k, v)
		if err != nil {
			return nil, err
		}
		if present {
			patch[k] = &sv
		} else {
			patch[k] = nil
		}
	}
	if n, ok := patch["name"]; ok {
		if n == nil {
			return nil, badRequest(`the "name" key cannot be removed from a connector configuration`)
		}
		if *n != name {
			return nil, badRequest(fmt.Sprintf("Connector name configuration (%s) doesn't match connector name in the URL (%s)", *n, name))
		}
	}
	info, err := s.h.PatchConnectorConfig(ctx, name, patch)
	if err != nil {
		return nil, err
	}
	return ok(normInfo(info))
}

func (s *Server) getConnectorStatus(ctx context.Context, rq *request) (*reply, error) {
	st, err := s.h.ConnectorStatus(ctx, rq.params["connector"])
	if err != nil {
		return nil, err
	}
	return ok(normStatus(st))
}

func (s *Server) getTaskConfigs(ctx context.Context, rq *request) (*reply, error) {
	ts, err := s.h.TaskConfigs(ctx, rq.params["connector"])
	if err != nil {
		return nil, err
	}
	if ts == nil {
		ts = []api.TaskInfo{}
	}
	for i := range ts {
		if ts[i].Config == nil {
			ts[i].Config = map[string]string{}
		}
	}
	return ok(ts)
}

// getTasksConfig is Kafka Connect's deprecated GET /connectors/{c}/tasks-config.
func (s *Server) getTasksConfig(ctx context.Context, rq *request) (*reply, error) {
	ts, err := s.h.TaskConfigs(ctx, rq.params["connector"])
	if err != nil {
		return nil, err
	}
	out := make(map[string]map[string]string, len(ts))
	for _, t := range ts {
		c := t.Config
		if c == nil {
			c = map[string]string{}
		}
		out[t.ID.String()] = c
	}
	return ok(out)
}

func (s *Server) putTaskConfigs(ctx context.Context, rq *request) (*reply, error) {
	var raw []map[string]json.RawMessage
	if err := decodeStrict(rq.body, &raw, "a JSON array of task configurations (objects of string keys to string values)"); err != nil {
		return nil, err
	}
	configs := make([]map[string]string, len(raw))
	for i, m := range raw {
		if m == nil {
			return nil, badRequest(fmt.Sprintf("task configuration %d is null", i))
		}
		configs[i] = make(map[string]string, len(m))
		for k, v := range m {
			sv, present, err := stringValue(k, v)
			if err != nil {
				return nil, err
			}
			if !present {
				return nil, badRequest(fmt.Sprintf("task configuration %d: key %q must have a string value, not null", i, k))
			}
			configs[i][k] = sv
		}
	}
	if err := s.h.PutTaskConfigs(ctx, rq.params["connector"], configs); err != nil {
		return nil, err
	}
	return status(http.StatusNoContent)
}

func (s *Server) fenceZombies(ctx context.Context, rq *request) (*reply, error) {
	if err := s.h.FenceZombies(ctx, rq.params["connector"]); err != nil {
		return nil, err
	}
	return status(http.StatusNoContent)
}

func taskID(rq *request) (api.ConnectorTaskID, error) {
	c, t := rq.params["connector"], rq.params["task"]
	n, err := strconv.Atoi(t)
	if err != nil || n < 0 || strings.HasPrefix(t, "+") {
		return api.ConnectorTaskID{}, notFound(fmt.Sprintf("Unknown task: task id %q of connector %s is not a non-negative integer", t, c))
	}
	return api.ConnectorTaskID{Connector: c, Task: n}, nil
}

func (s *Server) getTaskStatus(ctx context.Context, rq *request) (*reply, error) {
	id, err := taskID(rq)
	if err != nil {
		return nil, err
	}
	st, err := s.h.TaskStatus(ctx, id)
	if err != nil {
		return nil, err
	}
	return ok(st)
}

func (s *Server) restartTask(ctx context.Context, rq *request) (*reply, error) {
	id, err := taskID(rq)
	if err != nil {
		return nil, err
	}
	if err := s.h.RestartTask(ctx, id); err != nil {
		return nil, err
	}
	return status(http.StatusNoContent)
}

// boolParam parses an optional boolean query parameter. Kafka Connect
// (JAX-RS) silently reads anything but "true" as false; connectd rejects
// values that are neither, so a typo does not change the meaning.
func boolParam(q url.Values, name string, def bool) (bool, error) {
	vs, present := q[name]
	if !present || len(vs) == 0 || vs[0] == "" {
		return def, nil
	}
	switch strings.ToLower(vs[0]) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, badRequest(fmt.Sprintf("query parameter %s=%q must be true or false", name, vs[0]))
}

func (s *Server) restartConnector(ctx context.Context, rq *request) (*reply, error) {
	includeTasks, err := boolParam(rq.query, "includeTasks", false)
	if err != nil {
		return nil, err
	}
	onlyFailed, err := boolParam(rq.query, "onlyFailed", false)
	if err != nil {
		return nil, err
	}
	st, err := s.h.RestartConnector(ctx, rq.params["connector"], includeTasks, onlyFailed)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return status(http.StatusNoContent)
	}
	return &reply{status: http.StatusAccepted, body: normStatus(*st)}, nil
}

func (s *Server) pauseConnector(ctx context.Context, rq *request) (*reply, error) {
	if err := s.h.PauseConnector(ctx, rq.params["connector"]); err != nil {
		return nil, err
	}
	return status(http.StatusAccepted)
}

func (s *Server) resumeConnector(ctx context.Context, rq *request) (*reply, error) {
	if err := s.h.ResumeConnector(ctx, rq.params["connector"]); err != nil {
		return nil, err
	}
	return status(http.StatusAccepted)
}

func (s *Server) stopConnector(ctx context.Context, rq *request) (*reply, error) {
	if err := s.h.StopConnector(ctx, rq.params["connector"]); err != nil {
		return nil, err
	}
	return status(http.StatusNoContent)
}

func (s *Server) getConnectorTopics(ctx context.Context, rq *request) (*reply, error) {
	name := rq.params["connector"]
	topics, err := s.h.ConnectorTopics(ctx, name)
	// Kafka Connect reads active topics from the status topic without
	// looking the connector up: an unknown one has no topics.
	if err != nil && !isNotFound(err) {
		return nil, err
	}
	if topics == nil {
		topics = []string{}
	}
	return ok(map[string]map[string][]string{name: {"topics": topics}})
}

func (s *Server) resetConnectorTopics(ctx context.Context, rq *request) (*reply, error) {
	// As for GET: resetting the (empty) topic set of an unknown connector
	// is accepted.
	if err := s.h.ResetConnectorTopics(ctx, rq.params["connector"]); err != nil && !isNotFound(err) {
		return nil, err
	}
	return status(http.StatusAccepted)
}

func (s *Server) getOffsets(ctx context.Context, rq *request) (*reply, error) {
	offs, err := s.h.Offsets(ctx, rq.params["connector"])
	if err != nil {
		return nil, err
	}
	if offs.Offsets == nil {
		offs.Offsets = []api.ConnectorOffset{}
	}
	return ok(offs)
}

const msgNoOffsets = "Partitions / offsets need to be provided for an alter offsets request"

func (s *Server) alterOffsets(ctx context.Context, rq *request) (*reply, error) {
	var body struct {
		Offsets []struct {
			Partition json.RawMessage `json:"partition"`
			Offset    json.RawMessage `json:"offset"`
		} `json:"offsets"`
	}
	const what = `a JSON object {"offsets": [{"partition": {...}, "offset": {...} or null}, ...]}`
	if err := decodeStrict(rq.body, &body, what); err != nil {
		return nil, err
	}
	if len(body.Offsets) == 0 {
		return nil, badRequest(msgNoOffsets)
	}
	offs := api.ConnectorOffsets{Offsets: make([]api.ConnectorOffset, len(body.Offsets))}
	for i, o := range body.Offsets {
		p, err := jsonObject(o.Partition, fmt.Sprintf("offsets[%d].partition", i), false)
		if err != nil {
			return nil, err
		}
		v, err := jsonObject(o.Offset, fmt.Sprintf("offsets[%d].offset", i), true)
		if err != nil {
			return nil, err
		}
		offs.Offsets[i] = api.ConnectorOffset{Partition: p, Offset: v}
	}
	msg, err := s.h.AlterOffsets(ctx, rq.params["connector"], offs)
	if err != nil {
		return nil, err
	}
	return ok(api.Message{Message: msg})
}

// jsonObject decodes a JSON object keeping numbers exact (json.Number), so
// 64-bit offsets survive.
func jsonObject(raw json.RawMessage, field string, nullable bool) (map[string]any, error) {
	t := strings.TrimSpace(string(raw))
	if t == "" || t == "null" {
		if nullable {
			return nil, nil
		}
		return nil, badRequest(fmt.Sprintf("%s is required and must be a JSON object", field))
	}
	if t[0] != '{' {
		return nil, badRequest(fmt.Sprintf("%s must be a JSON object", field))
	}
	var m map[string]any
	if err := decodeStrict(raw, &m, field+" as a JSON object"); err != nil {
		return nil, err
	}
	return m, nil
}

func (s *Server) resetOffsets(ctx context.Context, rq *request) (*reply, error) {
	msg, err := s.h.ResetOffsets(ctx, rq.params["connector"])
	if err != nil {
		return nil, err
	}
	return ok(api.Message{Message: msg})
}

func (s *Server) listPlugins(ctx context.Context, rq *request) (*reply, error) {
	only, err := boolParam(rq.query, "connectorsOnly", true)
	if err != nil {
		return nil, err
	}
	ps, err := s.h.Plugins(ctx, only)
	if err != nil {
		return nil, err
	}
	if ps == nil {
		ps = []api.PluginInfo{}
	}
	return ok(ps)
}

func (s *Server) getPluginConfig(ctx context.Context, rq *request) (*reply, error) {
	keys, err := s.h.PluginConfig(ctx, rq.params["plugin"], rq.query.Get("version"))
	if err != nil {
		return nil, err
	}
	if keys == nil {
		keys = []configdef.KeyInfo{}
	}
	for i := range keys {
		if keys[i].Dependents == nil {
			keys[i].Dependents = []string{}
		}
	}
	return ok(keys)
}

// normalizedPluginName is Kafka Connect's: a trailing "Connector" is
// dropped, so aliases and class names compare equal.
func normalizedPluginName(n string) string {
	return strings.TrimSuffix(n, "Connector")
}

func (s *Server) validateConfig(ctx context.Context, rq *request) (*reply, error) {
	plugin := rq.params["plugin"]
	cfg, err := decodeConfig(rq.body, "a JSON object of connector configuration keys to string values")
	if err != nil {
		return nil, err
	}
	inc, ok := cfg["connector.class"]
	if !ok || strings.TrimSpace(inc) == "" {
		// Kafka's message echoes the whole config, which may hold secrets;
		// this one does not.
		return nil, badRequest("Connector config contains no connector type: the connector.class key is required")
	}
	if !strings.HasSuffix(normalizedPluginName(inc), normalizedPluginName(plugin)) {
		return nil, badRequest(fmt.Sprintf("Included connector type %s does not match request type %s", inc, plugin))
	}
	res, err := s.h.ValidateConfig(ctx, plugin, cfg)
	if err != nil {
		return nil, err
	}
	maskPasswords(&res)
	return &reply{status: http.StatusOK, body: res}, nil
}

// maskPasswords hides PASSWORD values whatever the herder returned; the
// herder should have done it already, this is the last line.
func maskPasswords(res *configdef.ValidationResult) {
	hidden := "[hidden]"
	if res.Groups == nil {
		res.Groups = []string{}
	}
	if res.Configs == nil {
		res.Configs = []configdef.ConfigInfo{}
	}
	for i := range res.Configs {
		c := &res.Configs[i]
		isPassword := c.Definition != nil && c.Definition.Type == configdef.Password
		if isPassword && c.Value.Value != nil {
			c.Value.Value = &hidden
		}
		if isPassword {
			c.Value.RecommendedValues = []string{}
		}
		if c.Value.RecommendedValues == nil {
			c.Value.RecommendedValues = []string{}
		}
		if c.Value.Errors == nil {
			c.Value.Errors = []string{}
		}
		if c.Definition != nil && c.Definition.Dependents == nil {
			c.Definition.Dependents = []string{}
		}
	}
}

func (s *Server) listLoggers(context.Context, *request) (*reply, error) {
	return ok(s.levels.All())
}

func (s *Server) getLogger(_ context.Context, rq *request) (*reply, error) {
	name := rq.params["logger"]
	l, found := s.levels.Get(name)
	if !found {
		return nil, notFound(fmt.Sprintf("Logger %s not found. Known loggers: %s.", name, s.knownLoggers()))
	}
	return ok(l)
}

// knownLoggers lists the registered logger names for error messages.
func (s *Server) knownLoggers() string {
	all := s.levels.All()
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func (s *Server) setLogger(ctx context.Context, rq *request) (*reply, error) {
	name := rq.params["logger"]
	var body map[string]json.RawMessage
	if err := decodeStrict(rq.body, &body, `a JSON object {"level": "<level>"}`); err != nil {
		return nil, err
	}
	raw, present := body["level"]
	level, has, err := stringValue("level", raw)
	if !present || (err == nil && !has) {
		return nil, badRequest("Desired 'level' parameter was not specified in the request.")
	}
	if err != nil {
		return nil, err
	}
	// Kafka Connect answers an unknown level with 404; kept for tools that
	// rely on it, with the allowed levels named.
	if _, err := logging.ParseLevel(level); err != nil {
		return nil, notFound(err.Error())
	}
	// Checked before any scope: a cluster-wide change would reach every
	// worker's log levels through the config topic.
	if err := logging.ValidName(name); err != nil {
		return nil, badRequest(fmt.Sprintf("%v. Known loggers: %s.", err, s.knownLoggers()))
	}
	scope := strings.ToLower(rq.query.Get("scope"))
	switch scope {
	case "cluster":
		cl, ok := s.h.(ClusterLoggers)
		if !ok {
			return nil, badRequest("scope=cluster is not supported by this worker; use scope=worker")
		}
		if err := cl.SetClusterLoggerLevel(ctx, name, strings.ToUpper(level)); err != nil {
			return nil, err
		}
		return status(http.StatusNoContent)
	case "", "worker":
	default:
		s.log.Warn("unknown scope for a logger level change; applying it to this worker only", "scope", scope, "logger", name)
	}
	affected, err := s.levels.Set(name, level)
	if err != nil {
		return nil, badRequest(fmt.Sprintf("%v. Known loggers: %s.", err, s.knownLoggers()))
	}
	if affected == nil {
		affected = []string{}
	}
	return ok(affected)
}

func normInfo(i api.ConnectorInfo) api.ConnectorInfo {
	if i.Config == nil {
		i.Config = map[string]string{}
	}
	if i.Tasks == nil {
		i.Tasks = []api.ConnectorTaskID{}
	}
	if i.Type == "" {
		i.Type = api.TypeUnknown
	}
	return i
}

func normStatus(s api.ConnectorStateInfo) api.ConnectorStateInfo {
	if s.Tasks == nil {
		s.Tasks = []api.TaskState{}
	}
	if s.Type == "" {
		s.Type = api.TypeUnknown
	}
	return s
}
