package herder

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

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
	LookupVersion(class string, r host.VersionRange) (host.Manifest, error)
}

// connectorType looks the connector's class up in the plugin catalog.
// Status and info answers need it for every connector they list, and the
// catalog reads every manifest in plugin.path on each lookup: the types
// found are kept until a plugin.path directory changes (an install or a
// removal renames or deletes a file in it).
func (h *Herder) connectorType(cfg map[string]string) api.ConnectorType {
	return h.connectorTypeIn(context.Background(), cfg)
}

// connectorTypeIn is connectorType for a request: under a read scope
// (WithReadScope) the plugin directories are looked at once per request,
// not once per connector listed.
func (h *Herder) connectorTypeIn(ctx context.Context, cfg map[string]string) api.ConnectorType {
	if h.cfg.Plugins == nil {
		return api.TypeUnknown
	}
	class := strings.TrimSpace(cfg["connector.class"])
	stamp, cacheable := h.catalogStampIn(ctx)
	if cacheable {
		if t, ok := h.types.get(stamp, class); ok {
			return t
		}
	}
	t := api.TypeUnknown
	if m, err := h.cfg.Plugins.Lookup(class); err == nil {
		switch api.ConnectorType(m.Type) {
		case api.TypeSource, api.TypeSink:
			t = api.ConnectorType(m.Type)
		}
	}
	// An unknown class is looked up again: it may be installed any time.
	if cacheable && t != api.TypeUnknown {
		h.types.put(stamp, class, t)
	}
	return t
}

// catalogStampIn is catalogStamp, taken once per read scope.
func (h *Herder) catalogStampIn(ctx context.Context) (string, bool) {
	sc, ok := ctx.Value(readScopeKey{}).(*readScope)
	if !ok {
		return h.catalogStamp()
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if !sc.stamped {
		sc.stamp, sc.cacheable = h.catalogStamp()
		sc.stamped = true
	}
	return sc.stamp, sc.cacheable
}

// catalogStamp identifies the state of the plugin.path directories by
// their modification times; false when the catalog does not say where it
// lives.
func (h *Herder) catalogStamp() (string, bool) {
	c, ok := h.cfg.Plugins.(interface{ Dirs() []string })
	if !ok {
		return "", false
	}
	var b strings.Builder
	for _, dir := range c.Dirs() {
		fi, err := os.Stat(dir)
		if err != nil {
			fmt.Fprintf(&b, "%s:-;", dir)
			continue
		}
		fmt.Fprintf(&b, "%s:%d;", dir, fi.ModTime().UnixNano())
	}
	return b.String(), true
}

// pluginTypes caches connector classes' types for one catalog stamp.
type pluginTypes struct {
	mu    sync.Mutex
	stamp string
	types map[string]api.ConnectorType
}

func (p *pluginTypes) get(stamp, class string) (api.ConnectorType, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stamp != stamp {
		return "", false
	}
	t, ok := p.types[class]
	return t, ok
}

func (p *pluginTypes) put(stamp, class string, t api.ConnectorType) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stamp != stamp || p.types == nil {
		p.stamp, p.types = stamp, map[string]api.ConnectorType{}
	}
	p.types[class] = t
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
// running it). version (?version=, KIP-891) chooses one of the installed
// versions as connector.plugin.version does; empty is the highest.
func (h *Herder) PluginConfig(ctx context.Context, class, version string) ([]configdef.KeyInfo, error) {
	r, err := host.ParseVersionRange(version)
	if err != nil {
		return nil, &BadRequestError{Msg: fmt.Sprintf("Invalid version range for %s: %v", class, err)}
	}
	if h.cfg.Plugins != nil {
		m, err := h.cfg.Plugins.LookupVersion(class, r)
		if errors.Is(err, host.ErrNoMatchingVersion) {
			return nil, &BadRequestError{Msg: err.Error()}
		}
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
	if !r.Contains(h.cfg.Version) {
		if _, ok := h.builtinPlugin(class); ok {
			return nil, &BadRequestError{Msg: fmt.Sprintf("Plugin %s not found that matches the version range %s, available versions: %s", class, r, h.cfg.Version)}
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

// builtinPlugin reports whether class is a built-in transformation,
// predicate or converter (their version is the worker's).
func (h *Herder) builtinPlugin(class string) (string, bool) {
	if _, ok := transform.LookupTransformation(class); ok {
		return pluginTransformation, true
	}
	if _, ok := transform.LookupPredicate(class); ok {
		return pluginPredicate, true
	}
	if _, ok := h.cfg.Converters.Lookup(class); ok {
		return pluginConverter, true
	}
	return "", false
}
