package worker

import (
	"fmt"
	"sort"
	"strings"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// ConfigError is a connector configuration the worker refuses, tied to the
// key that must change.
type ConfigError struct {
	Key     string
	Message string
}

func (e *ConfigError) Error() string { return e.Key + ": " + e.Message }

// clientKind selects the connector client a configuration is built for.
type clientKind string

const (
	producerClient clientKind = "producer"
	consumerClient clientKind = "consumer"
	adminClient    clientKind = "admin"
)

// principalKeys are what the Principal override policy allows: the
// librdkafka equivalents of Kafka's sasl.jaas.config, sasl.mechanism and
// security.protocol.
var principalKeys = map[string]bool{
	"security.protocol": true, "sasl.mechanism": true, "sasl.mechanisms": true,
	"sasl.username": true, "sasl.password": true, "sasl.oauthbearer.config": true,
}

// clientConfig builds a connector client's librdkafka configuration:
// CommonProps, then the worker's <kind>.* settings, then the connector's
// <kind>.override.* (as the override policy allows), then forced, which
// neither may change. The forced keys are what the delivery guarantees
// rest on (transactional.id, isolation.level, group.id, ...).
func (w *Worker) clientConfig(kind clientKind, connProps map[string]string, forced map[string]any) (kafka.ConfigMap, error) {
	cm := kafka.ConfigMap{}
	for k, v := range w.cfg.CommonProps {
		cm[k] = v
	}
	var workerProps map[string]string
	switch kind {
	case producerClient:
		workerProps = w.cfg.ProducerProps
	case consumerClient:
		workerProps = w.cfg.ConsumerProps
	case adminClient:
		workerProps = w.cfg.AdminProps
	}
	for k, v := range workerProps {
		cm[k] = v
	}
	overrides, err := w.overrides(kind, connProps)
	if err != nil {
		return nil, err
	}
	for k, v := range overrides {
		if _, ok := forced[k]; ok {
			return nil, &ConfigError{Key: string(kind) + ".override." + k, Message: fmt.Sprintf("%s is set by the worker for its delivery guarantees and cannot be overridden", k)}
		}
		cm[k] = v
	}
	cm["bootstrap.servers"] = w.cfg.BootstrapServers
	for k, v := range forced {
		cm[k] = v
	}
	return cm, nil
}

// overrides returns the connector's <kind>.override.* settings, refusing
// them as the override policy says.
func (w *Worker) overrides(kind clientKind, connProps map[string]string) (map[string]string, error) {
	prefix := string(kind) + ".override."
	out := map[string]string{}
	var names []string
	for k := range connProps {
		if strings.HasPrefix(k, prefix) {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		name := strings.TrimPrefix(k, prefix)
		switch w.cfg.OverridePolicy {
		case overrideNone:
			return nil, &ConfigError{Key: k, Message: "client overrides are forbidden by the worker's connector.client.config.override.policy=None"}
		case overridePrincipal:
			if !principalKeys[name] {
				return nil, &ConfigError{Key: k, Message: "only credentials (security.protocol, sasl.*) may be overridden under connector.client.config.override.policy=Principal"}
			}
		}
		out[name] = connProps[k]
	}
	return out, nil
}

// checkOverrides reports every override the policy refuses, for Validate.
func (w *Worker) checkOverrides(connProps map[string]string) []*ConfigError {
	var errs []*ConfigError
	for _, kind := range []clientKind{producerClient, consumerClient, adminClient} {
		prefix := string(kind) + ".override."
		for k := range connProps {
			if !strings.HasPrefix(k, prefix) {
				continue
			}
			if _, err := w.overrides(kind, map[string]string{k: connProps[k]}); err != nil {
				errs = append(errs, err.(*ConfigError))
			}
		}
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Key < errs[j].Key })
	return errs
}

// internalClient is the configuration of the worker's own clients (the
// offsets topic readers and writers).
func (w *Worker) internalClient() map[string]string {
	m := map[string]string{}
	for k, v := range w.cfg.CommonProps {
		m[k] = v
	}
	m["bootstrap.servers"] = w.cfg.BootstrapServers
	return m
}
