package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/connectd/connectd/framework/properties"
	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/framework/rest/client"
)

// restFlags are the connection and output flags of every REST command.
type restFlags struct {
	url, user, password, token string
	cacert, cert, key          string
	output                     string
	retries                    int
}

func (f *restFlags) register(fs *flag.FlagSet) {
	def := os.Getenv("CONNECTD_URL")
	if def == "" {
		def = client.DefaultURL
	}
	fs.StringVar(&f.url, "url", def, "worker REST URL (env CONNECTD_URL)")
	fs.StringVar(&f.user, "user", os.Getenv("CONNECTD_USER"), "HTTP Basic user (env CONNECTD_USER)")
	fs.StringVar(&f.password, "password", "", "HTTP Basic password (prefer env CONNECTD_PASSWORD: flags are visible to other local users)")
	fs.StringVar(&f.token, "token", "", "bearer token (prefer env CONNECTD_TOKEN)")
	fs.StringVar(&f.cacert, "cacert", "", "PEM CA certificates to trust for https")
	fs.StringVar(&f.cert, "cert", "", "PEM client certificate (mTLS)")
	fs.StringVar(&f.key, "key", "", "PEM client key (mTLS)")
	fs.StringVar(&f.output, "output", "table", "output format: table or json")
	fs.IntVar(&f.retries, "retries", 5, "retries of a request refused because the cluster is rebalancing (409 with Retry-After)")
}

func (f *restFlags) client() (*client.Client, error) {
	if f.output != "table" && f.output != "json" {
		return nil, usageError("--output must be table or json, not %q", f.output)
	}
	pass := f.password
	if pass == "" {
		pass = os.Getenv("CONNECTD_PASSWORD")
	}
	tok := f.token
	if tok == "" {
		tok = os.Getenv("CONNECTD_TOKEN")
	}
	if f.retries < 0 {
		return nil, usageError("--retries must not be negative")
	}
	opts := []client.Option{client.WithRebalanceRetries(f.retries, 250*time.Millisecond, 5*time.Second)}
	if f.user != "" {
		opts = append(opts, client.WithBasicAuth(f.user, pass))
	}
	if tok != "" {
		opts = append(opts, client.WithBearerToken(tok))
	}
	if f.cacert != "" || f.cert != "" || f.key != "" {
		opts = append(opts, client.WithTLSFiles(f.cacert, f.cert, f.key))
	}
	c, err := client.New(f.url, opts...)
	if err != nil {
		return nil, usageError("%v", err)
	}
	return c, nil
}

// restCmd builds a leaf that talks to a worker. nargs is the exact number
// of positional arguments; extra declares more flags.
func restCmd(name, usage, summary string, nargs int, extra func(fs *flag.FlagSet),
	run func(ctx context.Context, env *cliEnv, c *client.Client, f *restFlags, args []string) error) *command {
	rf := &restFlags{}
	return &command{
		name: name, usage: usage, summary: summary,
		flags: func(fs *flag.FlagSet) {
			rf.register(fs)
			if extra != nil {
				extra(fs)
			}
		},
		run: func(ctx context.Context, env *cliEnv, fs *flag.FlagSet, args []string) error {
			pos, err := interspersed(fs, args)
			if err != nil {
				return err
			}
			if len(pos) != nargs {
				return usageError("%s takes %d argument(s): %s %s", name, nargs, name, usage)
			}
			c, err := rf.client()
			if err != nil {
				return err
			}
			return apiError(run(ctx, env, c, rf, pos))
		},
	}
}

// interspersed lets flags follow positional arguments
// ("connectd connectors get orders --output json").
func interspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return nil, &exitError{code: exitUsage}
		}
		args = fs.Args()
		if len(args) > 0 {
			pos = append(pos, args[0])
			args = args[1:]
		}
	}
	return pos, nil
}

// apiError maps API answers to the exit codes scripts rely on.
func apiError(err error) error {
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	var ae *client.Error
	if errors.As(err, &ae) {
		code := exitFailure
		switch {
		case ae.StatusCode == http.StatusNotFound:
			code = exitNotFound
		case ae.StatusCode == http.StatusConflict:
			code = exitConflict
		}
		return &exitError{code: code, msg: fmt.Sprintf("%s (HTTP %d)", ae.Message, ae.StatusCode)}
	}
	return &exitError{code: exitFailure, msg: err.Error()}
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func table(w io.Writer, header []string, rows [][]string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func connectorsCommand() *command {
	var fileFlag, initial string
	var includeTasks, onlyFailed bool
	var task int
	fileOpt := func(fs *flag.FlagSet) {
		fs.StringVar(&fileFlag, "f", "", "connector file: JSON (Kafka's {\"name\",\"config\"} or a flat config map) or .properties")
	}
	return &command{
		name:    "connectors",
		summary: "manage connectors through a worker's REST API (Kafka Connect compatible)",
		children: []*command{
			restCmd("list", "", "list connectors with their state", 0, nil, func(ctx context.Context, env *cliEnv, c *client.Client, f *restFlags, _ []string) error {
				exp, err := c.ConnectorsExpanded(ctx, true, false)
				if err != nil {
					return err
				}
				if f.output == "json" {
					return printJSON(env.stdout, exp)
				}
				names := make([]string, 0, len(exp))
				for n := range exp {
					names = append(names, n)
				}
				sort.Strings(names)
				var rows [][]string
				for _, n := range names {
					st := exp[n].Status
					if st == nil {
						continue
					}
					running := 0
					for _, t := range st.Tasks {
						if t.State == "RUNNING" {
							running++
						}
					}
					rows = append(rows, []string{n, string(st.Type), st.Connector.State, fmt.Sprintf("%d/%d", running, len(st.Tasks)), st.Connector.WorkerID})
				}
				table(env.stdout, []string{"NAME", "TYPE", "STATE", "TASKS RUNNING", "WORKER"}, rows)
				return nil
			}),
			restCmd("get", "NAME", "show a connector's configuration and tasks", 1, nil, func(ctx context.Context, env *cliEnv, c *client.Client, f *restFlags, a []string) error {
				info, err := c.Connector(ctx, a[0])
				if err != nil {
					return err
				}
				if f.output == "json" {
					return printJSON(env.stdout, info)
				}
				fmt.Fprintf(env.stdout, "name: %s\ntype: %s\ntasks: %d\n\n", info.Name, info.Type, len(info.Tasks))
				keys := make([]string, 0, len(info.Config))
				for k := range info.Config {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				rows := make([][]string, len(keys))
				for i, k := range keys {
					rows[i] = []string{k, info.Config[k]}
				}
				table(env.stdout, []string{"KEY", "VALUE"}, rows)
				return nil
			}),
			restCmd("create", "-f FILE", "create a connector (fails with exit code 4 if it exists)", 0, func(fs *flag.FlagSet) {
				fileOpt(fs)
				fs.StringVar(&initial, "initial-state", "", "RUNNING, PAUSED or STOPPED")
			}, func(ctx context.Context, env *cliEnv, c *client.Client, f *restFlags, _ []string) error {
				name, cfg, fileInitial, err := readConnectorFile(fileFlag)
				if err != nil {
					return err
				}
				st := api.InitialState(strings.ToUpper(initial))
				if st == "" {
					st = fileInitial
				}
				info, err := c.Create(ctx, name, cfg, st)
				if err != nil {
					return err
				}
				if f.output == "json" {
					return printJSON(env.stdout, info)
				}
				fmt.Fprintf(env.stdout, "connector %s created\n", info.Name)
				return nil
			}),
			restCmd("apply", "-f FILE", "create or update a connector from a file", 0, fileOpt, func(ctx context.Context, env *cliEnv, c *client.Client, f *restFlags, _ []string) error {
				name, cfg, _, err := readConnectorFile(fileFlag)
				if err != nil {
					return err
				}
				info, created, err := c.PutConfig(ctx, name, cfg)
				if err != nil {
					return err
				}
				if f.output == "json" {
					return printJSON(env.stdout, info)
				}
				verb := "updated"
				if created {
					verb = "created"
				}
				fmt.Fprintf(env.stdout, "connector %s %s\n", info.Name, verb)
				return nil
			}),
			restCmd("delete", "NAME", "delete a connector", 1, nil, simple("deleted", (*client.Client).Delete)),
			restCmd("status", "NAME", "show connector and task states", 1, nil, func(ctx context.Context, env *cliEnv, c *client.Client, f *restFlags, a []string) error {
				st, err := c.Status(ctx, a[0])
				if err != nil {
					return err
				}
				if f.output == "json" {
					return printJSON(env.stdout, st)
				}
				printStatus(env.stdout, st)
				return nil
			}),
			restCmd("pause", "NAME", "pause a connector and its tasks", 1, nil, simple("paused", (*client.Client).Pause)),
			restCmd("resume", "NAME", "resume a paused or stopped connector", 1, nil, simple("resumed", (*client.Client).Resume)),
			restCmd("stop", "NAME", "stop a connector and shut its tasks down", 1, nil, simple("stopped", (*client.Client).Stop)),
			restCmd("restart", "NAME", "restart a connector (optionally its tasks) or one task", 1, func(fs *flag.FlagSet) {
				fs.BoolVar(&includeTasks, "include-tasks", false, "also restart the connector's tasks")
				fs.BoolVar(&onlyFailed, "only-failed", false, "restart only FAILED instances")
				fs.IntVar(&task, "task", -1, "restart only this task number")
			}, func(ctx context.Context, env *cliEnv, c *client.Client, f *restFlags, a []string) error {
				if task >= 0 {
					if includeTasks || onlyFailed {
						return usageError("--task cannot be combined with --include-tasks or --only-failed")
					}
					if err := c.RestartTask(ctx, a[0], task); err != nil {
						return err
					}
					return done(env, f, fmt.Sprintf("task %s-%d restarted", a[0], task))
				}
				plan, err := c.Restart(ctx, a[0], includeTasks, onlyFailed)
				if err != nil {
					return err
				}
				if plan == nil {
					return done(env, f, "connector "+a[0]+" restarted")
				}
				if f.output == "json" {
					return printJSON(env.stdout, plan)
				}
				printStatus(env.stdout, *plan)
				return nil
			}),
			offsetsCommand(),
		},
	}
}

func done(env *cliEnv, f *restFlags, msg string) error {
	if f.output == "json" {
		return printJSON(env.stdout, map[string]string{"message": msg})
	}
	fmt.Fprintln(env.stdout, msg)
	return nil
}

func simple(verb string, call func(*client.Client, context.Context, string) error) func(context.Context, *cliEnv, *client.Client, *restFlags, []string) error {
	return func(ctx context.Context, env *cliEnv, c *client.Client, f *restFlags, a []string) error {
		if err := call(c, ctx, a[0]); err != nil {
			return err
		}
		return done(env, f, "connector "+a[0]+" "+verb)
	}
}

func printStatus(w io.Writer, st api.ConnectorStateInfo) {
	table(w, []string{"CONNECTOR", "TYPE", "STATE", "WORKER", "TRACE"},
		[][]string{{st.Name, string(st.Type), st.Connector.State, st.Connector.WorkerID, firstLine(st.Connector.Trace)}})
	fmt.Fprintln(w)
	rows := make([][]string, len(st.Tasks))
	for i, t := range st.Tasks {
		rows[i] = []string{strconv.Itoa(t.ID), t.State, t.WorkerID, firstLine(t.Trace)}
	}
	table(w, []string{"TASK", "STATE", "WORKER", "TRACE"}, rows)
}

func offsetsCommand() *command {
	var file string
	return &command{
		name:    "offsets",
		summary: "read, alter or reset a connector's offsets (changes need the connector STOPPED)",
		children: []*command{
			restCmd("get", "NAME", "show committed offsets", 1, nil, func(ctx context.Context, env *cliEnv, c *client.Client, f *restFlags, a []string) error {
				offs, err := c.Offsets(ctx, a[0])
				if err != nil {
					return err
				}
				if f.output == "json" {
					return printJSON(env.stdout, offs)
				}
				rows := make([][]string, len(offs.Offsets))
				for i, o := range offs.Offsets {
					p, _ := json.Marshal(o.Partition)
					v, _ := json.Marshal(o.Offset)
					rows[i] = []string{string(p), string(v)}
				}
				table(env.stdout, []string{"PARTITION", "OFFSET"}, rows)
				return nil
			}),
			restCmd("reset", "NAME", "delete all committed offsets", 1, nil, func(ctx context.Context, env *cliEnv, c *client.Client, f *restFlags, a []string) error {
				msg, err := c.ResetOffsets(ctx, a[0])
				if err != nil {
					return err
				}
				return done(env, f, msg)
			}),
			restCmd("alter", "NAME -f FILE", `alter offsets from a JSON file {"offsets":[{"partition":{...},"offset":{...}|null}]}`, 1,
				func(fs *flag.FlagSet) { fs.StringVar(&file, "f", "", "offsets JSON file") },
				func(ctx context.Context, env *cliEnv, c *client.Client, f *restFlags, a []string) error {
					if file == "" {
						return usageError("offsets alter needs -f FILE")
					}
					b, err := os.ReadFile(file)
					if err != nil {
						return usageError("%v", err)
					}
					var offs api.ConnectorOffsets
					dec := json.NewDecoder(strings.NewReader(string(b)))
					dec.UseNumber()
					if err := dec.Decode(&offs); err != nil {
						return usageError("%s: %v", file, err)
					}
					msg, err := c.AlterOffsets(ctx, a[0], offs)
					if err != nil {
						return err
					}
					return done(env, f, msg)
				}),
		},
	}
}

func pluginsCommand() *command {
	var all bool
	return &command{
		name:    "plugins",
		summary: "list the connector plugins a worker offers (REST; see 'connectd plugin' to install)",
		children: []*command{
			restCmd("list", "", "list installed connector plugins", 0, func(fs *flag.FlagSet) {
				fs.BoolVar(&all, "all", false, "include converters, transformations and predicates")
			}, func(ctx context.Context, env *cliEnv, c *client.Client, f *restFlags, _ []string) error {
				ps, err := c.Plugins(ctx, !all)
				if err != nil {
					return err
				}
				if f.output == "json" {
					return printJSON(env.stdout, ps)
				}
				rows := make([][]string, len(ps))
				for i, p := range ps {
					rows[i] = []string{p.Class, p.Type, p.Version}
				}
				table(env.stdout, []string{"CLASS", "TYPE", "VERSION"}, rows)
				return nil
			}),
		},
	}
}

// readConnectorFile reads a connector definition: Kafka's create request
// {"name","config","initial_state"}, a flat JSON config map with a "name"
// key, or a .properties file with a name key.
func readConnectorFile(path string) (string, map[string]string, api.InitialState, error) {
	if path == "" {
		return "", nil, "", usageError("-f FILE is required")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", nil, "", usageError("%v", err)
	}
	var cfg map[string]string
	var initial api.InitialState
	name := ""
	if strings.EqualFold(filepath.Ext(path), ".properties") {
		cfg, err = properties.Parse(strings.NewReader(string(b)))
		if err != nil {
			return "", nil, "", usageError("%s: %v", path, err)
		}
	} else {
		var top map[string]json.RawMessage
		if err := json.Unmarshal(b, &top); err != nil {
			return "", nil, "", usageError("%s: not a JSON object: %v", path, err)
		}
		if rawCfg, ok := top["config"]; ok && len(rawCfg) > 0 && rawCfg[0] == '{' {
			if err := json.Unmarshal(top["name"], &name); top["name"] != nil && err != nil {
				return "", nil, "", usageError("%s: \"name\" must be a string", path)
			}
			if cfg, err = stringMap(rawCfg); err != nil {
				return "", nil, "", usageError("%s: config: %v", path, err)
			}
			if raw, ok := top["initial_state"]; ok {
				var s string
				if err := json.Unmarshal(raw, &s); err != nil {
					return "", nil, "", usageError("%s: \"initial_state\" must be a string", path)
				}
				initial = api.InitialState(strings.ToUpper(s))
			}
		} else if cfg, err = stringMap(b); err != nil {
			return "", nil, "", usageError("%s: %v", path, err)
		}
	}
	if name == "" {
		name = cfg["name"]
	}
	if name == "" {
		return "", nil, "", usageError("%s: no connector name (a \"name\" field or config key)", path)
	}
	return name, cfg, initial, nil
}

func stringMap(b []byte) (map[string]string, error) {
	var raw map[string]any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		switch x := v.(type) {
		case string:
			out[k] = x
		case json.Number:
			out[k] = x.String()
		case bool:
			out[k] = strconv.FormatBool(x)
		default:
			return nil, fmt.Errorf("value of %q must be a string", k)
		}
	}
	return out, nil
}
