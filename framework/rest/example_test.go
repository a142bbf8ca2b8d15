package rest_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/logging"
	"github.com/connectd/connectd/framework/rest"
	"github.com/connectd/connectd/framework/rest/resttest"
)

// How the worker daemon wires the server: worker properties → Config, the
// herder, the daemon's logger, registry and log levels; Listen first to
// learn the URL to advertise, then Serve until shutdown.
func ExampleNewServer() {
	props := map[string]string{"listeners": "http://127.0.0.1:0", "rest.request.max.bytes": "65536"}
	cfg, _, err := rest.ParseConfig(props) // the second result lists the keys used, for unknown-key warnings
	if err != nil {
		fmt.Println(err)
		return
	}
	levels := logging.New(slog.LevelInfo)
	base := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logging.LevelTrace}))
	srv, err := rest.NewServer(cfg, resttest.New(), // the daemon passes its *herder.Herder
		rest.WithLogger(levels.Logger(base, "connectd.rest")),
		rest.WithRegisterer(prometheus.NewRegistry()),
		rest.WithLogLevels(levels))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := srv.Listen(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(srv.Listeners()), "listener")
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the daemon cancels on SIGTERM
	fmt.Println(srv.Serve(ctx))
	// Output:
	// 1 listener
	// <nil>
}
