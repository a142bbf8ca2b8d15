package workerconfig

import (
	"fmt"
	"slices"
	"strings"

	"github.com/connectd/connectd/framework/configdef"
)

// UnknownKey is a worker property nothing reads, with the known key it is
// most likely a typo of ("" when none is close).
type UnknownKey struct {
	Key        string
	DidYouMean string
}

// Message is the warning for the key, naming the nearest known key.
func (u UnknownKey) Message() string {
	if u.DidYouMean == "" {
		return "unknown worker property " + u.Key + " ignored"
	}
	return "unknown worker property " + u.Key + "; did you mean " + u.DidYouMean + "?"
}

// guardedKeys are the properties whose absence silently weakens a
// delivery guarantee or the worker's security: left at its default by a
// misspelt name, exactly.once.source.support runs sources at-least-once,
// the rest.auth.* files leave the REST API open, listeners binds every
// interface, security.protocol talks to Kafka in plaintext, and the
// override policy lets connectors override every client setting. A typo
// of one of them stops start-up instead of warning.
var guardedKeys = []string{
	ExactlyOnceSource, OverridePolicy, Listeners, "security.protocol",
	"rest.auth.basic.credentials.file", "rest.auth.bearer.tokens.file",
}

// clientFamilies are the open-ended prefixes of per-client settings, for
// suggestions when their first segment is misspelt.
var clientFamilies = []string{"producer.", "consumer.", "admin."}

// knownKeys lists every worker property name connectd knows exactly: its
// definitions, the Kafka Connect keys it ignores and the unprefixed
// client settings.
func knownKeys() []string {
	var out []string
	for _, k := range Def().Keys() {
		out = append(out, k.Name)
	}
	for k := range kafkaConnectOnly {
		out = append(out, k)
	}
	for _, p := range clientPrefixes {
		if !strings.HasSuffix(p, ".") {
			out = append(out, p)
		}
	}
	out = append(out, ConfigProviders)
	slices.Sort(out)
	return slices.Compact(out)
}

// UnknownKeys returns the keys of Unknown that are not in used (keys
// another part of the worker reads itself, such as framework/rest's),
// each with the nearest known key. A typo of a guarded key (see
// guardedKeys) is returned as a *configdef.ConfigError naming both keys
// as well: the worker must not start without the setting the operator
// meant to make.
func (c *Config) UnknownKeys(used []string) ([]UnknownKey, error) {
	known := knownKeys()
	var out []UnknownKey
	var errs configdef.Errors
	for _, k := range c.Unknown {
		if slices.Contains(used, k) {
			continue
		}
		u := UnknownKey{Key: k}
		u.DidYouMean, _ = configdef.Nearest(k, known, clientFamilies...)
		out = append(out, u)
		if slices.Contains(guardedKeys, u.DidYouMean) {
			if _, set := c.Props[u.DidYouMean]; !set {
				errs = append(errs, &configdef.ConfigError{Key: k, Message: fmt.Sprintf(
					"%s: unknown worker property; did you mean %s? The worker does not start with a misspelt %s, which would leave that setting at its default (%s)",
					k, u.DidYouMean, u.DidYouMean, guardedDefault(u.DidYouMean))})
			}
		}
	}
	// A misspelt worker key under a client prefix (admin.listners) reads
	// as a client setting that librdkafka does not know: it is reported
	// here, with the key it is close to, instead of as a dropped setting.
	for k := range c.Dropped {
		if slices.Contains(used, k) {
			continue
		}
		if near, ok := configdef.Nearest(k, known); ok {
			out = append(out, UnknownKey{Key: k, DidYouMean: near})
		}
	}
	slices.SortFunc(out, func(a, b UnknownKey) int { return strings.Compare(a.Key, b.Key) })
	if len(errs) == 1 {
		return out, errs[0]
	}
	if len(errs) > 1 {
		return out, errs
	}
	return out, nil
}

// guardedDefault says what the default of a guarded key means.
func guardedDefault(key string) string {
	switch key {
	case ExactlyOnceSource:
		return "at-least-once source tasks"
	case OverridePolicy:
		return "All: connectors may override every client setting"
	case Listeners:
		return "http://:8083, every interface"
	case "security.protocol":
		return "plaintext connections to Kafka"
	}
	return "no authentication on the REST API"
}
