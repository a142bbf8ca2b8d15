// Package restapi holds the REST contract tests against real connectd
// worker processes (`connectd worker`) on the real Kafka broker, with the
// datagen plugin installed: every endpoint's success and error paths,
// forwarding between workers, authentication, and secrets kept out of
// responses and logs. framework/rest's own tests cover the HTTP layer over
// an in-memory herder; these prove the whole stack answers the same way.
package restapi
