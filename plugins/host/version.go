package host

import "github.com/connectd/connectd/plugins/internal/wire"

// ProtocolVersions lists the plugin protocol versions this host speaks;
// go-plugin negotiates the highest one both sides know. Every version
// carries the task streams on the data channel, a socketpair, which every
// Unix has (elsewhere Launch fails). `connectd version` prints them.
func ProtocolVersions() []int { return []int{wire.ProtocolV2} }
