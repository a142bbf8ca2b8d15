package host

import "github.com/connectd/connectd/plugins/internal/wire"

// ProtocolVersions lists the plugin protocol versions this host speaks;
// go-plugin negotiates the highest one both sides know. Version 2 (the
// task streams on a socketpair data channel) needs socketpair, which every
// Unix has. `connectd version` prints them.
func ProtocolVersions() []int { return []int{wire.ProtocolV1, wire.ProtocolV2} }
