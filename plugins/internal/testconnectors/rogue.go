package testconnectors

import (
	"context"
	"os"
	"strconv"

	"github.com/hashicorp/go-plugin"

	"github.com/connectd/connectd/plugins/internal/datachan"
	"github.com/connectd/connectd/plugins/internal/wire"
	"github.com/connectd/connectd/plugins/pluginpb"
)

// malformed answers Spec; a rogue plugin's task streams are its data
// channel's business.
type malformed struct {
	pluginpb.UnimplementedPluginServer
	class string
}

func (m malformed) Spec(context.Context, *pluginpb.SpecRequest) (*pluginpb.SpecResponse, error) {
	return &pluginpb.SpecResponse{Class: m.class, Version: "1", Type: "source"}, nil
}

// ServeRogueData serves a source plugin that negotiates protocol version 4
// and then breaks the data channel's rules, as a buggy or hostile plugin
// would: mode data-nohello writes text instead of the hello; the others
// answer the host's first task stream with an oversized frame
// (data-oversized), a frame of an unknown type (data-badtype) or a message
// that is not protobuf (data-badmsg).
func ServeRogueData(mode string) {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: wire.Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{
			wire.ProtocolV4: {wire.PluginName: &wire.GRPCPlugin{
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
