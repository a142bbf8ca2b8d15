package plugins

import (
	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/plugins/internal/wire"
	"github.com/connectd/connectd/plugins/pluginpb"
)

// protocolVersions are the plugin protocol versions this package serves.
func protocolVersions() []int {
	return []int{wire.ProtocolV4}
}

func specToPB(s sdk.Spec) *pluginpb.SpecResponse {
	out := &pluginpb.SpecResponse{
		Class: s.Class, Version: s.Version, Type: string(s.Type), Summary: s.Summary,
		DefinesTransactionBoundaries: s.DefinesTransactionBoundaries, ExactlyOnce: s.ExactlyOnce,
	}
	for _, v := range protocolVersions() {
		out.ProtocolVersions = append(out.ProtocolVersions, int32(v))
	}
	for _, k := range keyInfos(s.Config) {
		out.Config = append(out.Config, wire.KeyInfoToPB(k))
	}
	return out
}

func specDoc(s sdk.Spec) wire.SpecDoc {
	return wire.SpecDocFromPB(specToPB(s), protocolVersions())
}

// keyInfos renders a connector's key definitions as the REST API shows them.
func keyInfos(d *configdef.Def) []configdef.KeyInfo {
	if d == nil {
		return nil
	}
	return d.Infos()
}
