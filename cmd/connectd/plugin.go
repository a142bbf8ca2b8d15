package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/connectd/connectd/plugins/host"
)

// pluginPathEnv names the plugin path when --plugin-path is not given.
const pluginPathEnv = "CONNECTD_PLUGIN_PATH"

// pluginCommand groups plugin management: install, list, remove.
func pluginCommand() *command {
	var path string
	var handshake time.Duration
	pathFlag := func(fs *flag.FlagSet) {
		fs.StringVar(&path, "plugin-path", "", "plugin directories, separated by ':' (default $"+pluginPathEnv+", else ./plugins); install writes to the first")
	}
	installFlags := func(fs *flag.FlagSet) {
		pathFlag(fs)
		fs.DurationVar(&handshake, "handshake-timeout", host.DefaultHandshakeTimeout,
			"how long a binary may take to complete the plugin handshake before it is killed with its process group")
	}
	open := func() (*host.Catalog, error) {
		p := path
		if p == "" {
			p = os.Getenv(pluginPathEnv)
		}
		if p == "" {
			p = "plugins"
		}
		return host.OpenCatalog(filepath.SplitList(p)...)
	}
	return &command{
		name:    "plugin",
		summary: "install, list and remove connector plugins in plugin.path",
		children: []*command{
			{
				name: "install", usage: "[--plugin-path DIR] [--handshake-timeout D] <binary-or-dir>...",
				summary: "verify plugin binaries (spec handshake) and install them with a sha256 manifest",
				flags:   installFlags,
				run: func(ctx context.Context, env *cliEnv, _ *flag.FlagSet, args []string) error {
					if len(args) == 0 {
						return usageError("plugin install needs a plugin binary or a directory of them")
					}
					cat, err := open()
					if err != nil {
						return err
					}
					if handshake <= 0 {
						return usageError("plugin install: --handshake-timeout must be positive")
					}
					bins, err := pluginBinaries(args)
					if err != nil {
						return err
					}
					for _, b := range bins {
						m, err := cat.InstallWith(ctx, b, host.InstallOptions{HandshakeTimeout: handshake})
						if err != nil {
							return err
						}
						fmt.Fprintf(env.stdout, "installed %s %s (%s) from %s into %s\n", m.Name, m.Version, m.Type, b, m.Dir)
					}
					return nil
				},
			},
			{
				name: "list", usage: "[--plugin-path DIR]",
				summary: "list installed plugins",
				flags:   pathFlag,
				run: func(_ context.Context, env *cliEnv, _ *flag.FlagSet, args []string) error {
					if len(args) > 0 {
						return usageError("plugin list takes no arguments")
					}
					cat, err := open()
					if err != nil {
						return err
					}
					ms, err := cat.List()
					if err != nil {
						return err
					}
					w := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
					fmt.Fprintln(w, "CLASS\tTYPE\tVERSION\tSHA256\tBINARY")
					for _, m := range ms {
						fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", m.Name, m.Type, m.Version, m.SHA256[:12], m.Path())
					}
					return w.Flush()
				},
			},
			{
				name: "remove", usage: "[--plugin-path DIR] <class> [version]",
				summary: "remove an installed plugin (manifest and binary): one version, or every version of the class",
				flags:   pathFlag,
				run: func(_ context.Context, env *cliEnv, _ *flag.FlagSet, args []string) error {
					if len(args) != 1 && len(args) != 2 {
						return usageError("plugin remove needs a connector class and optionally one of its versions")
					}
					cat, err := open()
					if err != nil {
						return err
					}
					if len(args) == 2 {
						err = cat.RemoveVersion(args[0], args[1])
					} else {
						err = cat.Remove(args[0])
					}
					if err != nil {
						if errors.Is(err, host.ErrUnknownPlugin) || errors.Is(err, host.ErrNoMatchingVersion) {
							return &exitError{code: exitNotFound, msg: err.Error()}
						}
						return err
					}
					if len(args) == 2 {
						fmt.Fprintf(env.stdout, "removed %s %s\n", args[0], args[1])
						return nil
					}
					fmt.Fprintf(env.stdout, "removed %s\n", args[0])
					return nil
				},
			},
		},
	}
}

// pluginBinaries expands directories into the executable regular files
// they hold (not recursing; manifests and hidden files are skipped).
func pluginBinaries(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, a)
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, err
		}
		n := 0
		for _, e := range entries {
			info, err := e.Info()
			if err != nil || !info.Mode().IsRegular() || info.Mode()&0o111 == 0 || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			out = append(out, filepath.Join(a, e.Name()))
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("no executable files in %s", a)
		}
	}
	return out, nil
}
