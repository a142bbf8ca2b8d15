package configdef

import (
	"strings"
)

// ConfigError is a problem with one configuration key. Message is a whole
// sentence that names the key and the expected form, in Kafka's wording
// ("Invalid value abc for configuration tasks.max: Not a number of type
// INT").
type ConfigError struct {
	Key     string
	Message string
}

func (e *ConfigError) Error() string { return e.Message }

// Invalid returns Kafka's ConfigException message for a bad value:
// "Invalid value <value> for configuration <key>: <reason>". PASSWORD values
// (Secret) print as "[hidden]".
func Invalid(key string, value any, reason string) *ConfigError {
	msg := "Invalid value " + javaString(value) + " for configuration " + key
	if reason != "" {
		msg += ": " + reason
	}
	return &ConfigError{Key: key, Message: msg}
}

// Missing returns Kafka's message for a required key that has no value.
func Missing(key string) *ConfigError {
	return &ConfigError{Key: key, Message: `Missing required configuration "` + key + `" which has no default value.`}
}

// Errors is every problem Parse found, in definition order.
type Errors []*ConfigError

func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Message
	}
	return strings.Join(msgs, "; ")
}

// For returns the problems reported for key.
func (es Errors) For(key string) []*ConfigError {
	var out []*ConfigError
	for _, e := range es {
		if e.Key == key {
			out = append(out, e)
		}
	}
	return out
}
