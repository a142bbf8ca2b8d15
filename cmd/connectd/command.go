package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Exit codes scripts can rely on.
const (
	exitOK       = 0
	exitFailure  = 1 // the operation failed
	exitUsage    = 2 // the command line was wrong
	exitNotFound = 3 // the named connector, task or plugin does not exist
	exitConflict = 4 // the request conflicts with current state (exists, rebalancing)
)

// exitError carries a specific exit code up to run.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, msg: fmt.Sprintf(format, args...)}
}

// cliEnv is what every command may use: output streams for now; tests swap them.
type cliEnv struct {
	stdout io.Writer
	stderr io.Writer
	// reexec replaces the process with the same command line in environ
	// (syscall.Exec; it returns only on failure). nil where the CLI runs
	// inside another program (tests): the worker then applies what it
	// would have restarted for from where it is.
	reexec func(environ []string) error
}

// command is one node of the CLI tree: either a group with children or a leaf
// with run.
type command struct {
	name     string
	usage    string // argument synopsis shown after the command path
	summary  string
	flags    func(fs *flag.FlagSet) // declares the leaf's flags, if any
	run      func(ctx context.Context, env *cliEnv, fs *flag.FlagSet, args []string) error
	children []*command
}

func (c *command) execute(ctx context.Context, env *cliEnv, args []string) error {
	return c.executePath(ctx, env, args, c.name)
}

func (c *command) executePath(ctx context.Context, env *cliEnv, args []string, path string) error {
	if len(c.children) > 0 {
		if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
			c.printGroupHelp(env.stdout, path)
			if len(args) == 0 {
				return &exitError{code: exitUsage}
			}
			return nil
		}
		for _, child := range c.children {
			if child.name == args[0] {
				return child.executePath(ctx, env, args[1:], path+" "+child.name)
			}
		}
		return usageError("unknown command %q for %q; run '%s --help' for the list", args[0], path, path)
	}
	fs := flag.NewFlagSet(path, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.stderr, "usage: %s %s\n\n%s\n", path, c.usage, c.summary)
		if hasFlags(fs) {
			fmt.Fprintln(env.stderr, "\nflags:")
			fs.PrintDefaults()
		}
	}
	if c.flags != nil {
		c.flags(fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &exitError{code: exitUsage}
	}
	return c.run(ctx, env, fs, fs.Args())
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

func (c *command) printGroupHelp(w io.Writer, path string) {
	fmt.Fprintf(w, "usage: %s <command> [flags] [args]\n\n%s\n\ncommands:\n", path, c.summary)
	children := append([]*command(nil), c.children...)
	sort.Slice(children, func(i, j int) bool { return children[i].name < children[j].name })
	width := 0
	for _, ch := range children {
		width = max(width, len(ch.name))
	}
	for _, ch := range children {
		fmt.Fprintf(w, "  %-*s  %s\n", width, ch.name, ch.summary)
	}
	fmt.Fprintf(w, "\nRun '%s <command> --help' for details.\n", strings.TrimSpace(path))
}
