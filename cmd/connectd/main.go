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
	reexec := func(environ []string) error {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		return syscall.Exec(self, os.Args, environ)
	}
	os.Exit(runWith(ctx, os.Args[1:], &cliEnv{stdout: os.Stdout, stderr: os.Stderr, reexec: reexec}))
}

// run executes one command line and returns the process exit code, so tests
// can drive the CLI without a subprocess.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runWith(ctx, args, &cliEnv{stdout: stdout, stderr: stderr})
}

func runWith(ctx context.Context, args []string, env *cliEnv) int {
	stderr := env.stderr
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
			replicationCommand(),
		},
	}
}
