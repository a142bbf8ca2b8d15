package herder

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/framework/transform"
	"github.com/connectd/connectd/plugins/host"
)

// Catalog is the part of plugins/host.Catalog the herder uses: the
// connector plugins installed in plugin.path.
type Catalog interface {
	List() ([]host.Manifest, error)
	Lookup(class string) (host.Manifest, error)
}

// connectorType looks the connector's class up in the plugin catalog.
func (h *Herder) connectorType(cfg map[string]string) api.ConnectorType {
	if h.cfg.Plugins == nil {
		return api.TypeUnknown
	}
	m, err := h.cfg.Plugins.Lookup(strings.TrimSpace(cfg["connector.class"]))
	if err != nil {
		return api.TypeUnknown
	}
	switch api.ConnectorType(m.Type) {
	case api.TypeSource, api.TypeSink:
		return api.ConnectorType(m.Type)
	}
	return api.TypeUnknown
}

// Plugin types of GET /connector-plugins?connectorsOnly=false, as Kafka
// Connect names them.
const (
	pluginTransformation  = "transformation"
	pluginPredicate       = "predicate"
	pluginConverter       = "converter"
	pluginHeaderConverter = "header_converter"
)

// Plugins is GET /connector-plugins: the installed connectors, and with
// connectorsOnly=false also the built-in transformations, predicates and
// converters.
func (h *Herder) Plugins(ctx context.Context, connectorsOnly bool) ([]api.PluginInfo, error) {
	out := []api.PluginInfo{}
	if h.cfg.Plugins != nil {
		ms, err := h.cfg.Plugins.List()
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			out = append(out, api.PluginInfo{Class: m.Name, Type: string(m.Type), Version: m.Version})
		}
	}
	if connectorsOnly {
		return out, nil
	}
	v := h.cfg.Version
	for _, t := range transform.Transformations() {
		out = append(out, api.PluginInfo{Class: t.Class, Type: pluginTransformation, Version: v})
	}
	for _, p := range transform.Predicates() {
		out = append(out, api.PluginInfo{Class: p.Class, Type: pluginPredicate, Version: v})
	}
	for _, c := range h.cfg.Converters.Infos() {
		if c.Record {
			out = append(out, api.PluginInfo{Class: c.Class, Type: pluginConverter, Version: v})
		}
		if c.Header {
			out = append(out, api.PluginInfo{Class: c.Class, Type: pluginHeaderConverter, Version: v})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Class < out[j].Class })
	return out, nil
}

// PluginConfig is GET /connector-plugins/{p}/config: the plugin's own
// configuration keys (a connector's from its installed manifest, without
// running it).
func (h *Herder) PluginConfig(ctx context.Context, class string) ([]configdef.KeyInfo, error) {
	if h.cfg.Plugins != nil {
		m, err := h.cfg.Plugins.Lookup(class)
		if err == nil {
			if m.Config == nil {
				return []configdef.KeyInfo{}, nil
			}
			return m.Config, nil
		}
		if !errors.Is(err, host.ErrUnknownPlugin) {
			return nil, err
		}
	}
	if t, ok := transform.LookupTransformation(class); ok {
		return t.New().Def().Infos(), nil
	}
	if p, ok := transform.LookupPredicate(class); ok {
		return p.New().Def().Infos(), nil
	}
	if c, ok := h.cfg.Converters.Lookup(class); ok && c.Def != nil {
		return c.Def().Infos(), nil
	}
	return nil, &NotFoundError{Msg: fmt.Sprintf("Unknown plugin %s.", class)}
}
