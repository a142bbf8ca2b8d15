package wire

import (
	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/plugins/pluginpb"
)

// SpecDoc is a connector's spec as JSON: what `<plugin> spec` prints and
// what a plugin manifest repeats.
type SpecDoc struct {
	Class                        string              `json:"name"`
	Version                      string              `json:"version"`
	Type                         string              `json:"type"`
	Summary                      string              `json:"summary"`
	Config                       []configdef.KeyInfo `json:"config"`
	DefinesTransactionBoundaries bool                `json:"defines_transaction_boundaries,omitempty"`
	ExactlyOnce                  bool                `json:"exactly_once,omitempty"`
	ProtocolVersions             []int               `json:"protocol_versions"`
}

// SpecDocFromPB converts a Spec answer.
func SpecDocFromPB(r *pluginpb.SpecResponse, protocols []int) SpecDoc {
	d := SpecDoc{
		Class: r.GetClass(), Version: r.GetVersion(), Type: r.GetType(), Summary: r.GetSummary(),
		DefinesTransactionBoundaries: r.GetDefinesTransactionBoundaries(), ExactlyOnce: r.GetExactlyOnce(),
		ProtocolVersions: protocols,
	}
	for _, k := range r.GetConfig() {
		d.Config = append(d.Config, KeyInfoFromPB(k))
	}
	return d
}
