// Package rest serves connectd's Kafka Connect–compatible REST API: the
// endpoint catalogue, JSON shapes, status codes and {"error_code","message"}
// error bodies of Kafka Connect (see the OpenAPI document served at
// GET /openapi.json, kept in openapi.json next to this file) and the
// behaviour Kafka Connect gets from Jersey (415 and 406 media-type checks,
// OPTIONS with Allow, absolute Location URLs), plus the
// operational parts around it: forwarding of leader-only writes to the
// leader (Kafka's two-hop ?forward= rule), HMAC-signed inter-worker
// requests, HTTP Basic (bcrypt) and bearer-token authentication (which
// GET /health, and GET /metrics if configured, skip, for probes), TLS and
// mTLS listeners, CORS, a request body cap, request logging and Prometheus
// request metrics, and /admin/loggers over framework/logging.
//
// The server talks to the cluster only through the Herder interface
// defined here (framework/herder's *Herder implements it); the bodies it
// exchanges are framework/rest/api's types, which the client and the CLI
// share. Worker
// properties map to Config with ParseConfig; the keys follow Kafka's
// names (listeners, admin.listeners, listeners.https.ssl.*,
// access.control.*) and connectd's own (rest.auth.*, rest.request.*,
// rest.health.unauthenticated, rest.metrics.unauthenticated).
//
// What this package must not do: keep cluster state, decide leadership or
// run connectors (the herder does), or return or log secrets: credentials,
// tokens, the session key and TLS keys never appear in a response or a log
// line, and PASSWORD-typed values in validate responses are "[hidden]".
package rest
