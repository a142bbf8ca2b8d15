package testconnectors

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/protobuf/proto"

	"github.com/connectd/connectd/plugins/internal/wire"
	"github.com/connectd/connectd/plugins/pluginpb"
)

// ServeMalformed serves a plugin that completes the handshake and answers
// Spec, then answers a source task's start with bytes that are not a
// protobuf message: a stand-in for a buggy or hostile non-Go plugin.
func ServeMalformed() {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: wire.Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{
			wire.ProtocolV1: {wire.PluginName: &wire.GRPCPlugin{Impl: &malformed{}}},
		},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, grpc.ForceServerCodec(rawCodec{}))...)
		},
	})
}

type malformed struct {
	pluginpb.UnimplementedPluginServer
}

func (malformed) Spec(context.Context, *pluginpb.SpecRequest) (*pluginpb.SpecResponse, error) {
	return &pluginpb.SpecResponse{Class: "MalformedSource", Version: "1", Type: "source"}, nil
}

func (malformed) SourceTask(s pluginpb.Plugin_SourceTaskServer) error {
	if _, err := s.Recv(); err != nil {
		return err
	}
	if err := s.SendMsg(rawFrame{0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}); err != nil {
		return err
	}
	time.Sleep(time.Minute)
	return nil
}

// rawFrame is sent as is by rawCodec.
type rawFrame []byte

type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	if f, ok := v.(rawFrame); ok {
		return f, nil
	}
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("rawCodec: %T", v)
	}
	return proto.Marshal(m)
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("rawCodec: %T", v)
	}
	return proto.Unmarshal(data, m)
}

func (rawCodec) Name() string { return "proto" }

var _ encoding.Codec = rawCodec{}
