package worker

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// errorPolicy is the errors.* policy of a connector, with the shape of
// connconfig.ErrorPolicy in the lead's contract.
//
// TEMPORARY: parsed here until framework/connconfig implements
// ParseErrorPolicy (SDK-data issue); then this file becomes
// `type errorPolicy = connconfig.ErrorPolicy` and
// `var parseErrorPolicy = connconfig.ParseErrorPolicy`.
type errorPolicy struct {
	Tolerance            string        // none|all
	RetryTimeout         time.Duration // -1 infinite
	RetryDelayMax        time.Duration
	LogEnable            bool
	LogIncludeMessages   bool
	DLQTopic             string
	DLQReplicationFactor int16
	DLQContextHeaders    bool
}

// parseErrorPolicy parses Kafka Connect's errors.* keys with their
// defaults.
func parseErrorPolicy(props map[string]string) (errorPolicy, error) {
	p := errorPolicy{Tolerance: "none", RetryDelayMax: time.Minute, DLQReplicationFactor: 3}
	get := func(k string) (string, bool) {
		v, ok := props[k]
		return strings.TrimSpace(v), ok && strings.TrimSpace(v) != ""
	}
	if v, ok := get("errors.tolerance"); ok {
		switch strings.ToLower(v) {
		case "none", "all":
			p.Tolerance = strings.ToLower(v)
		default:
			return p, &ConfigError{Key: "errors.tolerance", Message: fmt.Sprintf("Invalid value %s for configuration errors.tolerance: String must be one of: none, all", v)}
		}
	}
	ms := func(k string, min int64, set func(time.Duration)) error {
		v, ok := get(k)
		if !ok {
			return nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < min {
			return &ConfigError{Key: k, Message: fmt.Sprintf("Invalid value %s for configuration %s: must be a number of milliseconds, at least %d", v, k, min)}
		}
		if n < 0 {
			set(-1)
		} else {
			set(time.Duration(n) * time.Millisecond)
		}
		return nil
	}
	if err := ms("errors.retry.timeout", -1, func(d time.Duration) { p.RetryTimeout = d }); err != nil {
		return p, err
	}
	if err := ms("errors.retry.delay.max.ms", 1, func(d time.Duration) { p.RetryDelayMax = d }); err != nil {
		return p, err
	}
	flag := func(k string, set func(bool)) error {
		v, ok := get(k)
		if !ok {
			return nil
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return &ConfigError{Key: k, Message: fmt.Sprintf("Invalid value %s for configuration %s: Expected value to be either true or false", v, k)}
		}
		set(b)
		return nil
	}
	for k, set := range map[string]func(bool){
		"errors.log.enable":                             func(b bool) { p.LogEnable = b },
		"errors.log.include.messages":                   func(b bool) { p.LogIncludeMessages = b },
		"errors.deadletterqueue.context.headers.enable": func(b bool) { p.DLQContextHeaders = b },
	} {
		if err := flag(k, set); err != nil {
			return p, err
		}
	}
	p.DLQTopic, _ = get("errors.deadletterqueue.topic.name")
	if v, ok := get("errors.deadletterqueue.topic.replication.factor"); ok {
		n, err := strconv.ParseInt(v, 10, 16)
		if err != nil || (n < 1 && n != -1) {
			return p, &ConfigError{Key: "errors.deadletterqueue.topic.replication.factor", Message: fmt.Sprintf("Invalid value %s: must be -1 (broker default) or at least 1", v)}
		}
		p.DLQReplicationFactor = int16(n)
	}
	return p, nil
}
