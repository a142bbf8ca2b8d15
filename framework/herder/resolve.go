package herder

import (
	"maps"
	"strings"

	"github.com/connectd/connectd/framework/configdef"
)

// resolve replaces config-provider placeholders (${env:VAR},
// ${file:path:key}) with their values. It runs only on the worker that
// runs the connector or task: stored configs keep their placeholders.
func (h *Herder) resolve(props map[string]string) (map[string]string, error) {
	if h.cfg.Resolver == nil || !h.cfg.Resolver.HasPlaceholders(props) {
		return maps.Clone(props), nil
	}
	return h.cfg.Resolver.Resolve(props)
}

// resolveFor resolves a config of connector and remembers the resolved
// values, so that status traces of the connector's connector instance and
// tasks can be scrubbed of them (an error message may quote a value).
func (h *Herder) resolveFor(connector string, props map[string]string) (map[string]string, error) {
	resolved, err := h.resolve(props)
	if err != nil {
		return nil, err
	}
	var found map[string]string
	for k, raw := range props {
		if v := resolved[k]; v != raw && len(v) >= minScrubLen {
			if found == nil {
				found = map[string]string{}
			}
			found[v] = raw
		}
	}
	if found != nil {
		h.secretsMu.Lock()
		if h.secrets == nil {
			h.secrets = map[string]map[string]string{}
		}
		if h.secrets[connector] == nil {
			h.secrets[connector] = map[string]string{}
		}
		for v, raw := range found {
			h.secrets[connector][v] = raw
		}
		h.secretsMu.Unlock()
	}
	return resolved, nil
}

// minScrubLen is the shortest resolved value scrubbed from traces; shorter
// ones would mangle ordinary text.
const minScrubLen = 4

// scrub replaces the connector's resolved placeholder values in a status
// trace with their placeholders.
func (h *Herder) scrub(connector, trace string) string {
	if trace == "" {
		return trace
	}
	h.secretsMu.Lock()
	defer h.secretsMu.Unlock()
	for v, raw := range h.secrets[connector] {
		trace = strings.ReplaceAll(trace, v, raw)
	}
	return trace
}

// minSecretLen is the shortest resolved value that reverseTransform also
// replaces where it appears under another key: short values ("true", "1")
// are too common to be told apart from a copied secret.
const minSecretLen = 8

// reverseTransform puts the connector config's placeholders back into task
// configs before they are written to the config topic, so resolved secrets
// never reach it. Like Kafka's AbstractHerder.reverseTransform, a task key
// whose connector value holds a placeholder gets the raw value back; in
// addition, a task value equal to a resolved secret of at least
// minSecretLen characters gets that secret's placeholder, wherever the
// connector copied it.
func reverseTransform(raw, resolved map[string]string, tasks []map[string]string) []map[string]string {
	byKey := map[string]string{}
	byValue := map[string]string{}
	for k, rv := range raw {
		res, ok := resolved[k]
		if !ok || res == rv {
			continue
		}
		byKey[k] = rv
		if len(res) >= minSecretLen {
			byValue[res] = rv
		}
	}
	out := make([]map[string]string, len(tasks))
	for i, t := range tasks {
		o := make(map[string]string, len(t))
		for k, v := range t {
			if rv, ok := byKey[k]; ok {
				o[k] = rv
			} else if rv, ok := byValue[v]; ok {
				o[k] = rv
			} else {
				o[k] = v
			}
		}
		out[i] = o
	}
	return out
}

// restoreRawValues puts the raw (placeholder) values back into a
// validation result computed on resolved values, so that validating a
// config never returns a resolved secret.
func restoreRawValues(res configdef.ValidationResult, raw, resolved map[string]string) configdef.ValidationResult {
	for i := range res.Configs {
		v := &res.Configs[i].Value
		rv, ok := raw[v.Name]
		res := resolved[v.Name]
		if !ok || res == rv {
			continue
		}
		if v.Value != nil {
			s := rv
			v.Value = &s
		}
		if res != "" {
			for j, e := range v.Errors {
				v.Errors[j] = strings.ReplaceAll(e, res, rv)
			}
		}
	}
	return res
}
