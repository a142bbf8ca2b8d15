// Package wire is what both ends of the plugin boundary must agree on beyond
// the .proto: the go-plugin handshake and plugin set, the environment the
// host passes, default limits, and the conversions between the Go types of
// the SDK/host API and the protocol messages.
//
// It must not hold behaviour of either side (flow control, timeouts,
// supervision): that lives in plugins and plugins/host.
package wire

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/connectd/connectd/plugins/pluginpb"
)

// Handshake is go-plugin's handshake. The cookie only keeps people from
// running a plugin by hand by mistake; it is not a security feature.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "CONNECTD_PLUGIN_MAGIC_COOKIE",
	MagicCookieValue: "9c1d7b0e5a0f4e1e8f3f2a6b7c4d5e6f-connectd-plugin",
}

// PluginName is the name of the single plugin in every protocol version's
// plugin set.
const PluginName = "connector"

// Protocol versions. The control calls (spec, validate, connectors,
// metrics, health) use the gRPC service of plugins/pluginpb.
const (
	// ProtocolV4 carries the task streams on the data channel: a
	// socketpair the host creates and only the plugin process inherits
	// (plugins/internal/datachan); one process runs any number of
	// connector instances, by name; and a source task's plugin watches
	// its own Poll calls, so an idle task sends nothing. (Versions 1 and
	// 2, gRPC task streams and one connector instance per process, and 3,
	// whose idle source tasks sent heartbeats, are gone; hosts refuse
	// them.)
	ProtocolV4 = 4
)

// Environment variables the host sets for the plugin.
const (
	// EnvMaxMessageBytes is the message limit the plugin must accept, on
	// its gRPC server (which keeps grpc-go's 4 MiB default otherwise) and
	// for data channel frames.
	EnvMaxMessageBytes = "CONNECTD_PLUGIN_MAX_MESSAGE_BYTES"
	// EnvLogLevel is the plugin's log level (debug, info, warn, error).
	EnvLogLevel = "CONNECTD_PLUGIN_LOG_LEVEL"
	// EnvDataFD is the file descriptor number of the plugin's end of the
	// data channel.
	EnvDataFD = "CONNECTD_PLUGIN_DATA_FD"
)

// Limits and defaults shared by both sides.
const (
	DefaultMaxMessageBytes = 64 << 20
	DefaultBatchBytes      = 4 << 20
	// MessageOverhead is kept free in every message for framing and the
	// fields around the records.
	MessageOverhead = 64 << 10
)

// PluginWriteTimeout bounds a write of the plugin's end of the data
// channel: a host that reads nothing for this long is gone or hung, and the
// plugin's tasks stop. (The host's writes are bounded by its CallTimeout.)
const PluginWriteTimeout = 2 * time.Minute

// Transport tuning shared by both sides. A batch is one large message;
// with HTTP/2's default 64 KiB windows every batch would stall on
// WINDOW_UPDATE round trips between the two processes, and 32 KiB socket
// buffers would mean a syscall per 32 KiB. Credits bound how much is in
// flight, so large windows do not make memory unbounded.
const (
	StreamWindowBytes = 32 << 20
	ConnWindowBytes   = 64 << 20
	SocketBufferBytes = 1 << 20
)

// MaxMessageBytesFromEnv parses EnvMaxMessageBytes, falling back to the
// default when it is unset or invalid.
func MaxMessageBytesFromEnv(get func(string) string) int {
	if n, err := strconv.Atoi(get(EnvMaxMessageBytes)); err == nil && n > 0 {
		return n
	}
	return DefaultMaxMessageBytes
}

// GRPCPlugin adapts the generated service to go-plugin. The plugin side sets
// Impl; the host side only uses GRPCClient.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl pluginpb.PluginServer
	// Serving, if set (plugin side), runs when go-plugin sets up the server
	// of this protocol version, that is once the version was negotiated; an
	// error stops the plugin before its handshake.
	Serving func() error
}

var _ plugin.GRPCPlugin = (*GRPCPlugin)(nil)

func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Impl == nil {
		return errors.New("wire: GRPCPlugin has no server")
	}
	if p.Serving != nil {
		if err := p.Serving(); err != nil {
			return err
		}
	}
	pluginpb.RegisterPluginServer(s, p.Impl)
	return nil
}

func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return pluginpb.NewPluginClient(c), nil
}
