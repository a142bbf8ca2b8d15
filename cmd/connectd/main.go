// Command connectd is the connectd worker daemon and its command-line tools.
//
// This package only wires: it parses flags, builds the domain packages'
// values from them and runs them. Behaviour lives in framework/, offsets/,
// plugins/ and connectors/.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns the process exit code, so tests
// can drive the CLI without a subprocess.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	env := &cliEnv{stdout: stdout, stderr: stderr}
	err := rootCommand().execute(ctx, env, args)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "connectd:", ee.msg)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "connectd:", err)
	return exitFailure
}

// rootCommand lists every subcommand. Each subcommand lives in its own file.
func rootCommand() *command {
	return &command{
		name:    "connectd",
		summary: "Kafka Connect–style connector framework with exactly-once Kafka and effectively-once Aerospike outputs",
		children: []*command{
			versionCommand(),
			pluginCommand(),
			connectorsCommand(),
			pluginsCommand(),
			workerCommand(),
			verifyCommand(),
		},
	}
}
