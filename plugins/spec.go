package plugins

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/plugins/internal/wire"
	"github.com/connectd/connectd/plugins/pluginpb"
)

// protocolVersions are the plugin protocol versions this package serves.
var protocolVersions = []int{wire.ProtocolV1}

func specToPB(s sdk.Spec) *pluginpb.SpecResponse {
	out := &pluginpb.SpecResponse{
		Class: s.Class, Version: s.Version, Type: string(s.Type), Summary: s.Summary,
		DefinesTransactionBoundaries: s.DefinesTransactionBoundaries, ExactlyOnce: s.ExactlyOnce,
	}
	for _, k := range keyInfos(s.Config) {
		out.Config = append(out.Config, wire.KeyInfoToPB(k))
	}
	return out
}

func specDoc(s sdk.Spec) wire.SpecDoc {
	return wire.SpecDocFromPB(specToPB(s), protocolVersions)
}

// keyInfos renders a connector's key definitions as the REST API shows them.
func keyInfos(d *configdef.Def) []configdef.KeyInfo {
	if d == nil {
		return nil
	}
	keys := d.Keys()
	out := make([]configdef.KeyInfo, 0, len(keys))
	for _, k := range keys {
		ki := configdef.KeyInfo{
			Name: k.Name, Type: k.Type, Required: k.Required, Importance: k.Importance,
			Documentation: k.Documentation, Order: k.OrderInGroup, Width: k.Width,
			DisplayName: k.DisplayName, Dependents: k.Dependents,
		}
		if ki.Width == "" {
			ki.Width = configdef.WidthNone
		}
		if ki.DisplayName == "" {
			ki.DisplayName = k.Name
		}
		if ki.Dependents == nil {
			ki.Dependents = []string{}
		}
		if k.Group != "" {
			g := k.Group
			ki.Group = &g
		}
		if !k.Required && k.Default != nil {
			v := renderDefault(k.Type, k.Default)
			ki.DefaultValue = &v
		}
		if k.Validator != nil {
			ki.ValidValues = k.Validator.String()
		}
		out = append(out, ki)
	}
	return out
}

func renderDefault(t configdef.Type, v any) string {
	if t == configdef.Password {
		return "[hidden]"
	}
	switch x := v.(type) {
	case string:
		return x
	case []string:
		return strings.Join(x, ",")
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	default:
		return fmt.Sprint(x)
	}
}
