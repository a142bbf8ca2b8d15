package herder

import (
	"context"
	"testing"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/convert"
	"github.com/connectd/connectd/framework/convert/schemaregistry"
)

// TestPluginsListConverterSet: GET /connector-plugins and
// /connector-plugins/{class}/config know the converter classes of the
// worker's set (the Schema Registry converters the shipped plugins carry),
// and only the built-ins without one.
func TestPluginsListConverterSet(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		set  *convert.Set
		want bool
	}{
		{"built-ins only", nil, false},
		{"with the Schema Registry converters", convert.NewSet(schemaregistry.Infos()...), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &Herder{cfg: Config{Converters: tc.set, Version: "test"}}
			list, err := h.Plugins(ctx, false)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{} // class → type as a converter (header-only entries aside)
			for _, p := range list {
				if p.Type != pluginHeaderConverter {
					got[p.Class] = p.Type
				}
			}
			for _, class := range []string{schemaregistry.AvroClass, schemaregistry.ProtobufClass, schemaregistry.JSONSchemaClass} {
				if typ, ok := got[class]; ok != tc.want || (ok && typ != pluginConverter) {
					t.Errorf("%s listed=%v type=%q, want listed=%v as %s", class, ok, typ, tc.want, pluginConverter)
				}
				keys, err := h.PluginConfig(ctx, class)
				if (err == nil) != tc.want {
					t.Errorf("PluginConfig(%s): %d keys, err %v", class, len(keys), err)
				}
				if tc.want && !hasKey(keys, schemaregistry.URLConfig) {
					t.Errorf("PluginConfig(%s) lacks %s", class, schemaregistry.URLConfig)
				}
			}
			if got[convert.JSONClass] != pluginConverter {
				t.Errorf("built-in JsonConverter missing: %v", got)
			}
		})
	}
}

func hasKey(keys []configdef.KeyInfo, name string) bool {
	for _, k := range keys {
		if k.Name == name {
			return true
		}
	}
	return false
}
