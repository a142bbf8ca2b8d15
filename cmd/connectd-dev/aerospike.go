package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
)

// devAerospikeCommand runs the in-memory Aerospike test double as a process,
// for the quickstart and for tests that want a separate server process.
func devAerospikeCommand() *command {
	var (
		listen      string
		namespaces  string
		clusterName string
		allowTTL    bool
		stats       bool
		control     string
	)
	return &command{
		path:    "aerospike",
		usage:   "[--listen host:port] [--namespaces ns1,ns2] [--allow-ttl] [--stats] [--control host:port]",
		summary: "run the in-memory Aerospike wire-protocol TEST DOUBLE (tests and quickstart only; deploy against a real Aerospike cluster)",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&listen, "listen", "127.0.0.1:3000", "TCP address to serve on (port 0 picks a free port)")
			fs.StringVar(&namespaces, "namespaces", "test", "comma-separated namespaces to serve")
			fs.StringVar(&clusterName, "cluster-name", "", "cluster name answered to clients (empty answers \"null\", like an unnamed cluster)")
			fs.BoolVar(&allowTTL, "allow-ttl", false, "let writes set positive TTLs (a stock namespace refuses them with FAIL_FORBIDDEN)")
			fs.BoolVar(&stats, "stats", false, "answer the \"stats\" info command with operation counters and print them on exit")
			fs.StringVar(&control, "control", "", "also serve the fault-injection control API (HTTP, no auth: loopback only) on this address; port 0 picks a free port")
		},
		run: func(ctx context.Context, env *cliEnv) error {
			var nss []aerofake.NamespaceConfig
			for _, n := range strings.Split(namespaces, ",") {
				if n = strings.TrimSpace(n); n != "" {
					nss = append(nss, aerofake.NamespaceConfig{Name: n, AllowTTL: allowTTL})
				}
			}
			if len(nss) == 0 {
				return usageError("--namespaces needs at least one namespace")
			}
			logger := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
			srv, err := aerofake.Start(ctx, aerofake.Config{
				Addr:        listen,
				Namespaces:  nss,
				ClusterName: clusterName,
				StatsInfo:   stats,
				Logger:      logger,
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(env.stdout, "AEROSPIKE_ADDR=%s\n", srv.Addr())
			if control != "" {
				ln, err := net.Listen("tcp", control)
				if err != nil {
					_ = srv.Close()
					return fmt.Errorf("--control: %w", err)
				}
				hs := &http.Server{Handler: srv.ControlHandler(), ReadHeaderTimeout: 5 * time.Second}
				go func() { _ = hs.Serve(ln) }()
				defer hs.Close()
				fmt.Fprintf(env.stdout, "AEROSPIKE_CONTROL=http://%s\n", ln.Addr())
			}
			<-ctx.Done()
			err = srv.Close()
			if stats {
				fmt.Fprintf(env.stderr, "aerofake stats: %s\n", srv.Stats())
			}
			return err
		},
	}
}
