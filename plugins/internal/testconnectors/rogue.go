package testconnectors

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/protobuf/proto"

	"github.com/connectd/connectd/plugins/internal/datachan"
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
			wire.ProtocolV1: {wire.PluginName: &wire.GRPCPlugin{Impl: &malformed{class: "MalformedSource"}}},
		},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, grpc.ForceServerCodec(rawCodec{}))...)
		},
	})
}

type malformed struct {
	pluginpb.UnimplementedPluginServer
	class string
}

func (m malformed) Spec(context.Context, *pluginpb.SpecRequest) (*pluginpb.SpecResponse, error) {
	return &pluginpb.SpecResponse{Class: m.class, Version: "1", Type: "source"}, nil
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

// ServeRogueData serves a source plugin that negotiates protocol version 3
// and then breaks the data channel's rules, as a buggy or hostile plugin
// would: mode data-nohello writes text instead of the hello; the others
// answer the host's first task stream with an oversized frame
// (data-oversized), a frame of an unknown type (data-badtype) or a message
// that is not protobuf (data-badmsg).
func ServeRogueData(mode string) {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: wire.Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{
			wire.ProtocolV3: {wire.PluginName: &wire.GRPCPlugin{
				Impl:    malformed{class: "RogueDataSource"},
				Serving: func() error { return rogueData(mode) },
			}},
		},
		GRPCServer: plugin.DefaultGRPCServer,
	})
}

func rogueData(mode string) error {
	fd, err := strconv.Atoi(os.Getenv(wire.EnvDataFD))
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), "data")
	if mode == "data-nohello" {
		_, err := f.Write([]byte("this is not the connectd data channel\n"))
		return err
	}
	if _, err := f.Write(frame(datachan.TypeHello, 0, datachan.Hello, nil)); err != nil {
		return err
	}
	go func() {
		buf := make([]byte, 64<<10)
		if _, err := f.Read(buf); err != nil { // the host opened a stream
			return
		}
		switch mode {
		case "data-oversized":
			f.Write(datachan.AppendHeader(nil, datachan.TypeMsg, 1, 0, 1<<30))
		case "data-badtype":
			f.Write(frame(0xee, 1, nil, nil))
		case "data-badmsg":
			f.Write(frame(datachan.TypeMsg, 1, []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, nil))
		}
		for { // keep the channel open and drain it
			if _, err := f.Read(buf); err != nil {
				return
			}
		}
	}()
	return nil
}

func frame(typ byte, stream uint32, meta, bulk []byte) []byte {
	b := datachan.AppendHeader(nil, typ, stream, len(meta), len(bulk))
	return append(append(b, meta...), bulk...)
}
