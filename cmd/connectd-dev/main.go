// Command connectd-dev holds the development tools that must not ship in
// the connectd binary operators deploy: the in-memory Aerospike test
// double (connectors/aerospike/aerofake) run as a process, and the Go half
// of `make quickstart` (topic preparation, the live progress display, the
// final check and the clean-up).
//
//	connectd-dev aerospike [--listen host:port] [--namespaces ns1,ns2] [--control host:port]
//	connectd-dev quickstart prepare|watch|cleanup --source FILE ...
//
// scripts/quickstart.sh builds it beside connectd (make build-dev). Like
// cmd/connectd, this package only parses flags and wires; a repository
// test (internal/repo) keeps every package linked here out of connectd.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
)

// Exit codes scripts can rely on (the same as connectd's).
const (
	exitOK      = 0
	exitFailure = 1 // the operation failed
	exitUsage   = 2 // the command line was wrong
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// exitError carries a specific exit code up to run.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, msg: fmt.Sprintf(format, args...)}
}

// cliEnv is what every command may use; tests swap the streams.
type cliEnv struct {
	stdout io.Writer
	stderr io.Writer
}

// command is one command of connectd-dev. The tool has a handful, so they
// are a flat list keyed by their words rather than a tree.
type command struct {
	path    string // the words that select it: "aerospike", "quickstart watch"
	usage   string // argument synopsis shown after the path
	summary string
	flags   func(fs *flag.FlagSet)
	run     func(ctx context.Context, env *cliEnv) error
}

func commands() []*command {
	return append([]*command{devAerospikeCommand()}, devQuickstartCommands()...)
}

// run executes one command line and returns the process exit code, so tests
// can drive the CLI without a subprocess.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	env := &cliEnv{stdout: stdout, stderr: stderr}
	err := dispatch(ctx, env, commands(), args)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "connectd-dev:", ee.msg)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "connectd-dev:", err)
	return exitFailure
}

func dispatch(ctx context.Context, env *cliEnv, cmds []*command, args []string) error {
	for _, c := range cmds {
		words := strings.Fields(c.path)
		if len(args) >= len(words) && slices.Equal(args[:len(words)], words) {
			return c.execute(ctx, env, args[len(words):])
		}
	}
	// The first words of some commands, alone or followed by a request for
	// help, list those commands.
	prefix, help := args, false
	if n := len(prefix); n > 0 && (prefix[n-1] == "-h" || prefix[n-1] == "--help" || prefix[n-1] == "help") {
		prefix, help = prefix[:n-1], true
	}
	var group []*command
	for _, c := range cmds {
		if words := strings.Fields(c.path); len(words) > len(prefix) && slices.Equal(words[:len(prefix)], prefix) {
			group = append(group, c)
		}
	}
	name := strings.Join(append([]string{"connectd-dev"}, prefix...), " ")
	if len(group) == 0 {
		return usageError("unknown command %q; run 'connectd-dev --help' for the list", strings.Join(args, " "))
	}
	fmt.Fprintf(env.stdout, "usage: %s <command> [flags]\n\ndevelopment tools (not part of the connectd binary)\n\ncommands:\n", name)
	for _, c := range group {
		rest := strings.Join(strings.Fields(c.path)[len(prefix):], " ")
		fmt.Fprintf(env.stdout, "  %-20s %s\n", rest, c.summary)
	}
	fmt.Fprintf(env.stdout, "\nRun '%s <command> --help' for details.\n", name)
	if !help {
		return &exitError{code: exitUsage}
	}
	return nil
}

func (c *command) execute(ctx context.Context, env *cliEnv, args []string) error {
	name := "connectd-dev " + c.path
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.stderr, "usage: %s %s\n\n%s\n\nflags:\n", name, c.usage, c.summary)
		fs.PrintDefaults()
	}
	c.flags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &exitError{code: exitUsage}
	}
	if fs.NArg() > 0 {
		return usageError("%s takes no arguments, got %q", c.path, fs.Args())
	}
	return c.run(ctx, env)
}
