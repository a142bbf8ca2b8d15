package herder

import (
	"fmt"
	"strings"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/worker"
	"github.com/connectd/connectd/plugins/host"
)

// Plugin version keys (KIP-891). connector.plugin.version chooses among
// the installed versions of the connector's plugin (framework/worker
// resolves it); the converters are built in, so their only version is
// this worker's, and a range that excludes it is refused.
var converterVersionKeys = []struct{ key, converterKey, display string }{
	{"key.converter.plugin.version", "key.converter", "Key converter version"},
	{"value.converter.plugin.version", "value.converter", "Value converter version"},
	{"header.converter.plugin.version", "header.converter", "Header converter version"},
}

// checkConverterVersions refuses a converter version range that the
// built-in converters (this worker's version) do not satisfy.
func (h *Herder) checkConverterVersions(props map[string]string) error {
	for _, k := range converterVersionKeys {
		spec := props[k.key]
		r, err := host.ParseVersionRange(spec)
		if err != nil {
			return &BadRequestError{Msg: fmt.Sprintf("%s: Invalid version range for %s: %v", k.key, k.converterKey, err)}
		}
		if !r.Contains(h.cfg.Version) {
			return &BadRequestError{Msg: fmt.Sprintf("%s: Plugin %s not found that matches the version range %s, available versions: %s",
				k.key, strings.TrimSpace(props[k.converterKey]), r, h.cfg.Version)}
		}
	}
	return nil
}

// addVersionKeys lists the *.plugin.version keys in a validation result
// as Kafka Connect 4.1 does, each with the version that will run when the
// config does not choose one.
func (h *Herder) addVersionKeys(res *configdef.ValidationResult, props map[string]string) {
	have := map[string]bool{}
	for _, c := range res.Configs {
		have[c.Value.Name] = true
	}
	group := "Common"
	add := func(key, display, doc, running string, order int) {
		if have[key] {
			return
		}
		v := running
		if raw, ok := props[key]; ok {
			v = raw
		}
		res.Configs = append(res.Configs, configdef.ConfigInfo{
			Definition: &configdef.KeyInfo{Name: key, Type: configdef.String, Importance: configdef.Low,
				Documentation: doc, Group: &group, Order: order, Width: configdef.WidthMedium,
				DisplayName: display, Dependents: []string{}},
			Value: configdef.ConfigValue{Name: key, Value: &v, RecommendedValues: []string{}, Errors: []string{}, Visible: true},
		})
	}
	running := ""
	if h.cfg.Plugins != nil {
		if r, err := host.ParseVersionRange(props[worker.ConnectorPluginVersionKey]); err == nil {
			if m, err := h.cfg.Plugins.LookupVersion(strings.TrimSpace(props["connector.class"]), r); err == nil {
				running = m.Version
			}
		}
	}
	add(worker.ConnectorPluginVersionKey, "Connector version",
		"Version of the connector: a version (exactly that one), a Maven version range such as [1.0,2.0), or latest. Unset: the highest installed version.",
		running, 2)
	for i, k := range converterVersionKeys {
		add(k.key, k.display, "Version of the "+strings.TrimSuffix(k.key, ".plugin.version")+
			" class. Converters are built into connectd: the only version is the worker's. Unset: that version.", h.cfg.Version, 5+i)
	}
}
