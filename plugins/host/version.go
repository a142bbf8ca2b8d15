package host

import (
	"fmt"

	"github.com/connectd/connectd/plugins/internal/wire"
)

// ProtocolVersions lists the plugin protocol versions this host speaks;
// go-plugin negotiates the highest one both sides know. There is one:
// version 4, the task streams on a socketpair data channel (which every
// Unix has; elsewhere Launch fails) and any number of connector instances
// per process. `connectd version` prints them.
func ProtocolVersions() []int { return []int{wire.ProtocolV4} }

// SharedProtocol is the protocol version a plugin process must speak to
// host several connector instances: the one version this host speaks.
const SharedProtocol = wire.ProtocolV4

// ProtocolVersionError: a plugin does not speak SharedProtocol. It wraps
// ErrProtocol.
type ProtocolVersionError struct {
	Plugin   string
	Versions []int // the versions it speaks or negotiated
}

func (e *ProtocolVersionError) Error() string {
	return fmt.Sprintf("plugin %s speaks plugin protocol version(s) %v, not %d (task streams on the data channel, many connectors per process): rebuild it against this connectd SDK (plugins.Serve) and install it again",
		e.Plugin, e.Versions, SharedProtocol)
}

func (e *ProtocolVersionError) Unwrap() error { return ErrProtocol }
