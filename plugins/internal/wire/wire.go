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

// ProtocolV1 is the first protocol version (plugins/pluginpb).
const ProtocolV1 = 1

// Environment variables the host sets for the plugin.
const (
	// EnvMaxMessageBytes is the gRPC message limit the plugin's server must
	// accept (go-plugin's plugin-side server keeps grpc-go's 4 MiB default
	// otherwise).
	EnvMaxMessageBytes = "CONNECTD_PLUGIN_MAX_MESSAGE_BYTES"
	// EnvLogLevel is the plugin's log level (debug, info, warn, error).
	EnvLogLevel = "CONNECTD_PLUGIN_LOG_LEVEL"
)

// Limits and defaults shared by both sides.
const (
	DefaultMaxMessageBytes = 64 << 20
	DefaultBatchBytes      = 4 << 20
	// MessageOverhead is kept free in every message for framing and the
	// fields around the records.
	MessageOverhead = 64 << 10
)

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
// Server; the host side only uses GRPCClient.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl pluginpb.PluginServer
}

var _ plugin.GRPCPlugin = (*GRPCPlugin)(nil)

func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Impl == nil {
		return errors.New("wire: GRPCPlugin has no server")
	}
	pluginpb.RegisterPluginServer(s, p.Impl)
	return nil
}

func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return pluginpb.NewPluginClient(c), nil
}
