package host

import "github.com/connectd/connectd/plugins/internal/wire"

// ProtocolVersions lists the plugin protocol versions this host speaks, in
// order of preference (go-plugin negotiates the highest one both sides
// know). `connectd version` prints them.
func ProtocolVersions() []int { return []int{wire.ProtocolV1} }
