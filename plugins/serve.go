package plugins

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/connectd/connectd/framework/convert"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/plugins/internal/wire"
)

// Serve runs the connector newConnector makes as a connectd plugin and
// does not return: it exits the process when the host stops it, when the
// host dies, or after answering a command run by hand (`<binary> spec`).
//
// One plugin process serves every connector of its class on a worker (or
// one connector, with plugin.isolation=connector), so Serve makes an
// instance per connector started, one per task and one per validation,
// and one to read the Spec from. Instances share nothing unless the
// constructor makes them.
//
// Nothing may write to stdout before Serve: go-plugin's handshake line must
// be the first line there.
func Serve[C sdk.Connector](newConnector func() C, opts ...ServeOption) {
	os.Exit(serve(func() sdk.Connector { return newConnector() }, os.Args[1:], os.Stdout, os.Stderr, os.Getenv, opts...))
}

// ServeOption adjusts how Serve runs a plugin.
type ServeOption func(*serveOptions)

type serveOptions struct {
	converters *convert.Set
}

// WithConverters makes the converter classes of set usable by the
// plugin's tasks, besides the built-ins (for example the Schema Registry
// converters of framework/convert/schemaregistry, which need cgo and so
// are not built into the SDK).
func WithConverters(set *convert.Set) ServeOption {
	return func(o *serveOptions) { o.converters = set }
}

func serve(newConn func() sdk.Connector, args []string, stdout, stderr *os.File, getenv func(string) string, opts ...ServeOption) int {
	var o serveOptions
	for _, opt := range opts {
		opt(&o)
	}
	c := newConn()
	spec := c.Spec()
	if err := checkConnector(c, spec); err != nil {
		fmt.Fprintln(stderr, "connectd plugin:", err)
		return 1
	}
	if getenv(wire.Handshake.MagicCookieKey) != wire.Handshake.MagicCookieValue {
		return serveCLI(spec, args, stdout, stderr)
	}

	// go-plugin replaces os.Stderr with a pipe to its stdio stream once it
	// serves; logs go to the real stderr, which the host reads line by line.
	log := newLogger(stderr, getenv(wire.EnvLogLevel))
	maxMsg := wire.MaxMessageBytesFromEnv(getenv)
	srv := newServer(newConn, spec, log, maxMsg)
	srv.converters = o.converters

	versions := map[int]plugin.PluginSet{}
	for _, v := range protocolVersions() {
		gp := &wire.GRPCPlugin{Impl: srv}
		if v == wire.ProtocolV4 {
			gp.Serving = func() error { return srv.startData(getenv) }
		}
		versions[v] = plugin.PluginSet{wire.PluginName: gp}
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  wire.Handshake,
		VersionedPlugins: versions,
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			// grpc-go's server accepts 4 MiB by default; records up to the
			// host's message limit must fit.
			opts = append(opts, grpc.MaxRecvMsgSize(maxMsg), grpc.MaxSendMsgSize(maxMsg),
				grpc.InitialWindowSize(wire.StreamWindowBytes), grpc.InitialConnWindowSize(wire.ConnWindowBytes),
				grpc.WriteBufferSize(wire.SocketBufferBytes), grpc.ReadBufferSize(wire.SocketBufferBytes))
			return grpc.NewServer(opts...)
		},
		Logger: hclog.New(&hclog.LoggerOptions{
			Name: "go-plugin", Output: stderr, JSONFormat: true, Level: hclog.Warn,
		}),
	})
	// The host asked us to shut down (or the connection is gone): stop the
	// tasks still running so they release what they hold.
	srv.shutdown(10 * time.Second)
	return 0
}

func checkConnector(c sdk.Connector, spec sdk.Spec) error {
	switch spec.Type {
	case sdk.Source:
		if _, ok := c.(sdk.SourceConnector); !ok {
			return fmt.Errorf("%s: Spec says source but %T does not implement sdk.SourceConnector", spec.Class, c)
		}
	case sdk.Sink:
		if _, ok := c.(sdk.SinkConnector); !ok {
			return fmt.Errorf("%s: Spec says sink but %T does not implement sdk.SinkConnector", spec.Class, c)
		}
	default:
		return fmt.Errorf("%s: Spec.Type %q is neither source nor sink", spec.Class, spec.Type)
	}
	if spec.Class == "" {
		return fmt.Errorf("%T: Spec.Class is empty", c)
	}
	return nil
}

func serveCLI(spec sdk.Spec, args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && args[0] == "spec" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(specDoc(spec)); err != nil {
			fmt.Fprintln(stderr, "connectd plugin:", err)
			return 1
		}
		return 0
	}
	if len(args) == 1 && args[0] == "version" {
		fmt.Fprintf(stdout, "%s %s\n", spec.Class, spec.Version)
		return 0
	}
	fmt.Fprintf(stderr, "%s %s is a connectd connector plugin (%s).\n\n"+
		"It runs inside a connectd worker: install it with\n"+
		"  connectd plugin install <path-to-this-binary>\n\n"+
		"Commands:\n  spec     print the connector's spec as JSON\n  version  print class and version\n",
		spec.Class, spec.Version, spec.Type)
	return 2
}
