package configdef

import (
	"errors"
	"fmt"
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

// WithPrefix returns a copy of e for a key embedded under prefix (a
// converter's or transform's own key seen from the connector config): the
// key and the message name the full key ("value.converter.schemas.enable").
func (e *ConfigError) WithPrefix(prefix string) *ConfigError {
	if e.Key == "" {
		return &ConfigError{Key: prefix, Message: prefix + "*: " + e.Message}
	}
	full := prefix + e.Key
	msg := strings.Replace(e.Message, "for configuration "+e.Key, "for configuration "+full, 1)
	msg = strings.Replace(msg, `configuration "`+e.Key+`"`, `configuration "`+full+`"`, 1)
	if msg == e.Message && !strings.Contains(msg, full) {
		msg = full + ": " + msg
	}
	return &ConfigError{Key: full, Message: msg}
}

// Prefix rewrites the configuration errors in err (a *ConfigError or
// Errors) with WithPrefix; other errors are wrapped with the prefix.
func Prefix(err error, prefix string) error {
	var errs Errors
	if errors.As(err, &errs) {
		out := make(Errors, len(errs))
		for i, e := range errs {
			out[i] = e.WithPrefix(prefix)
		}
		return out
	}
	var ce *ConfigError
	if errors.As(err, &ce) {
		return ce.WithPrefix(prefix)
	}
	return fmt.Errorf("%s*: %w", prefix, err)
}
