package plugintest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/plugins/host"
)

// Invalid is a configuration that must fail validation on Key.
type Invalid struct {
	Name  string
	Props map[string]string // merged over the suite's Config; an empty value deletes the key
	Key   string
}

// Env is an installed plugin ready to launch.
type Env struct {
	Catalog  *host.Catalog
	Manifest host.Manifest
	Options  host.LaunchOptions
}

// Install installs binary into a fresh catalog in t.TempDir().
func Install(t testing.TB, binary string, opts host.LaunchOptions) *Env {
	t.Helper()
	cat, err := host.OpenCatalog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m, err := cat.Install(ctx, binary)
	if err != nil {
		t.Fatalf("install %s: %v", binary, err)
	}
	if opts.Logger == nil {
		opts.Logger = TestLogger(t)
	}
	return &Env{Catalog: cat, Manifest: m, Options: opts}
}

// InstallAll builds the main packages pkgs and installs them into the
// catalog in dir. Every binary is built before the first install starts
// and each install has a deadline of its own: on a loaded machine the
// builds alone can outlast a deadline that also covered them.
func (b *Builder) InstallAll(t testing.TB, dir string, pkgs ...string) error {
	t.Helper()
	cat, err := host.OpenCatalog(dir)
	if err != nil {
		return err
	}
	bins := make([]string, len(pkgs))
	for i, pkg := range pkgs {
		bins[i] = b.Build(t, pkg)
	}
	for i, bin := range bins {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err := cat.Install(ctx, bin)
		cancel()
		if err != nil {
			return fmt.Errorf("install %s: %w", pkgs[i], err)
		}
	}
	return nil
}

// Launch starts a process and closes it when the test ends.
func (e *Env) Launch(t testing.TB) *host.Process {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := host.Launch(ctx, e.Manifest, e.Options)
	if err != nil {
		t.Fatalf("launch %s: %v", e.Manifest.Name, err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// Kill SIGKILLs the plugin process and waits until the host noticed.
func Kill(t testing.TB, p *host.Process) {
	t.Helper()
	if err := syscall.Kill(p.Pid(), syscall.SIGKILL); err != nil {
		t.Fatalf("kill plugin %d: %v", p.Pid(), err)
	}
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("host did not notice the death of plugin %d within 10s", p.Pid())
	}
}

func merged(base, over map[string]string) map[string]string {
	out := maps.Clone(base)
	for k, v := range over {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// checkSpec compares `<binary> spec` with the protocol's Spec.
func checkSpec(t *testing.T, e *Env, p *host.Process, want sdk.Type) {
	out, err := exec.Command(e.Manifest.Path(), "spec").Output()
	if err != nil {
		t.Fatalf("%s spec: %v", e.Manifest.Path(), err)
	}
	var doc struct {
		Name, Version, Type string
		Config              []struct{ Name string }
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%s spec printed invalid JSON: %v\n%s", e.Manifest.Path(), err, out)
	}
	spec, err := p.Spec(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if spec.Type != want || doc.Type != string(want) {
		t.Fatalf("type: protocol %q, CLI %q, want %q", spec.Type, doc.Type, want)
	}
	if doc.Name != spec.Class || doc.Version != spec.Version || spec.Class != e.Manifest.Name {
		t.Fatalf("CLI spec %s %s, protocol %s %s, manifest %s", doc.Name, doc.Version, spec.Class, spec.Version, e.Manifest.Name)
	}
	if len(doc.Config) != len(spec.Config) {
		t.Fatalf("CLI spec has %d keys, protocol %d", len(doc.Config), len(spec.Config))
	}
}

func checkValidate(t *testing.T, p *host.Process, good map[string]string, bad []Invalid, defaults chain.Defaults) {
	res, err := p.Validate(ctxT(t), good, defaults)
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCount != 0 {
		t.Fatalf("valid config reported %d errors: %+v", res.ErrorCount, res.Configs)
	}
	for _, inv := range bad {
		res, err := p.Validate(ctxT(t), merged(good, inv.Props), defaults)
		if err != nil {
			t.Fatalf("%s: %v", inv.Name, err)
		}
		if res.ErrorCount == 0 {
			t.Errorf("%s: no validation error", inv.Name)
			continue
		}
		found := false
		for _, c := range res.Configs {
			if c.Value.Name == inv.Key && len(c.Value.Errors) > 0 {
				found = true
				t.Logf("%s: %s: %v", inv.Name, inv.Key, c.Value.Errors)
			}
		}
		if !found {
			t.Errorf("%s: no error on key %q: %+v", inv.Name, inv.Key, res.Configs)
		}
	}
}

func taskConfigs(t *testing.T, p *host.Process, name string, props map[string]string, maxTasks int) []map[string]string {
	c, err := p.StartConnector(ctxT(t), name, props)
	if err != nil {
		t.Fatal(err)
	}
	cfgs, err := c.TaskConfigs(ctxT(t), maxTasks)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) == 0 || len(cfgs) > maxTasks {
		t.Fatalf("%d task configs for tasks.max=%d", len(cfgs), maxTasks)
	}
	if err := c.Stop(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	return cfgs
}

// SourceSuite runs a source connector's plugin through its lifecycle.
type SourceSuite struct {
	Binary   string
	Config   map[string]string // a valid connector config
	Invalid  []Invalid
	Defaults chain.Defaults // worker converter defaults (default: ByteArray for all)
	MaxTasks int            // default 2
	Records  int            // records to read before committing (default 100)
}

// Run runs the suite.
func (s SourceSuite) Run(t *testing.T) {
	if s.Defaults == nil {
		s.Defaults = chain.ByteArrayDefaults()
	}
	if s.MaxTasks == 0 {
		s.MaxTasks = 2
	}
	if s.Records == 0 {
		s.Records = 100
	}
	e := Install(t, s.Binary, host.LaunchOptions{CallTimeout: 20 * time.Second})
	if e.Manifest.Type != sdk.Source {
		t.Fatalf("manifest type %q, want source", e.Manifest.Type)
	}
	p := e.Launch(t)
	t.Run("spec", func(t *testing.T) { checkSpec(t, e, p, sdk.Source) })
	t.Run("validate", func(t *testing.T) { checkValidate(t, p, s.Config, s.Invalid, s.Defaults) })
	var cfg map[string]string
	t.Run("task-configs", func(t *testing.T) {
		cfg = taskConfigs(t, p, "suite", s.Config, s.MaxTasks)[0]
	})
	if cfg == nil {
		t.FailNow()
	}
	var committed []host.Offset
	t.Run("poll-commit-resume", func(t *testing.T) {
		seen := s.pollAndCommit(t, p, cfg, nil, &committed)
		// A restarted task continues after the committed offsets.
		s.checkResume(t, p, cfg, committed, seen)
	})
	t.Run("crash-restart", func(t *testing.T) {
		p := e.Launch(t)
		task := s.start(t, p, cfg, committed)
		if _, err := task.Next(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		Kill(t, p)
		// Batches received before the kill are handed out first; the
		// failure follows within the task's credits.
		var err error
		for i := 0; err == nil && i < 100; i++ {
			_, err = task.Next(ctxT(t))
		}
		var exit *host.ExitError
		if !errors.Is(err, host.ErrPluginExited) || !errors.As(err, &exit) {
			t.Fatalf("Next after SIGKILL: %v; want an *ExitError wrapping ErrPluginExited", err)
		}
		if !errors.As(p.Err(), &exit) || exit.State != "signal: killed" {
			t.Fatalf("process error %v", p.Err())
		}
		// Relaunch: the task resumes from the committed offsets.
		p2 := e.Launch(t)
		seen := map[string]map[string]bool{}
		s.checkResume(t, p2, cfg, committed, seen)
	})
}

func (s SourceSuite) start(t *testing.T, p *host.Process, cfg map[string]string, offs []host.Offset) *host.SourceTask {
	props := merged(s.Config, cfg)
	task, err := p.StartSourceTask(ctxT(t), host.SourceTaskStart{Connector: "suite", Task: 0, Props: props, Defaults: s.Defaults, Offsets: offs})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// pollAndCommit reads at least s.Records records, checks their shape,
// commits them and stops the task. It returns the offsets seen per partition.
func (s SourceSuite) pollAndCommit(t *testing.T, p *host.Process, cfg map[string]string, offs []host.Offset, committed *[]host.Offset) map[string]map[string]bool {
	task := s.start(t, p, cfg, offs)
	seen := map[string]map[string]bool{}
	last := map[string][]byte{}
	n := 0
	for n < s.Records {
		b, err := task.Next(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range b.Records {
			if r.Topic == "" {
				t.Fatal("record without topic")
			}
			var part, off map[string]any
			if json.Unmarshal(r.SourcePartition, &part) != nil || json.Unmarshal(r.SourceOffset, &off) != nil {
				t.Fatalf("source partition %q / offset %q are not JSON objects", r.SourcePartition, r.SourceOffset)
			}
			if seen[string(r.SourcePartition)] == nil {
				seen[string(r.SourcePartition)] = map[string]bool{}
			}
			if seen[string(r.SourcePartition)][string(r.SourceOffset)] {
				t.Fatalf("offset %s of partition %s delivered twice", r.SourceOffset, r.SourcePartition)
			}
			seen[string(r.SourcePartition)][string(r.SourceOffset)] = true
			last[string(r.SourcePartition)] = r.SourceOffset
			n++
		}
		if len(b.Failures) > 0 {
			t.Fatalf("records failed in the plugin: %+v", b.Failures[0])
		}
	}
	var offsets []host.Offset
	for _, k := range slices.Sorted(maps.Keys(last)) {
		offsets = append(offsets, host.Offset{Partition: []byte(k), Offset: last[k]})
	}
	if err := task.Commit(ctxT(t), offsets); err != nil {
		t.Fatal(err)
	}
	if err := task.Stop(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	*committed = offsets
	return seen
}

func (s SourceSuite) checkResume(t *testing.T, p *host.Process, cfg map[string]string, committed []host.Offset, seen map[string]map[string]bool) {
	task := s.start(t, p, cfg, committed)
	defer func() { _ = task.Stop(ctxT(t)) }()
	b, err := task.Next(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range b.Records {
		for _, c := range committed {
			if string(c.Partition) == string(r.SourcePartition) && string(c.Offset) == string(r.SourceOffset) {
				t.Fatalf("restarted task replayed committed offset %s of %s", r.SourceOffset, r.SourcePartition)
			}
		}
		if seen[string(r.SourcePartition)][string(r.SourceOffset)] {
			t.Fatalf("restarted task replayed offset %s of %s", r.SourceOffset, r.SourcePartition)
		}
	}
}

// SinkSuite runs a sink connector's plugin through its lifecycle.
type SinkSuite struct {
	Binary   string
	Config   map[string]string
	Invalid  []Invalid
	Defaults chain.Defaults // worker converter defaults (default: ByteArray for all)
	MaxTasks int
	// Record returns the i-th record to put (default: 1 KiB values on
	// topic "suite", partition i%3).
	Record func(i int) chain.Raw
	// Verify, when set, checks what the target holds after the records
	// were put and flushed.
	Verify func(t *testing.T, put []chain.Raw)
}

// Run runs the suite.
func (s SinkSuite) Run(t *testing.T) {
	if s.Defaults == nil {
		s.Defaults = chain.ByteArrayDefaults()
	}
	if s.MaxTasks == 0 {
		s.MaxTasks = 2
	}
	if s.Record == nil {
		s.Record = func(i int) chain.Raw {
			v := make([]byte, 1024)
			for j := range v {
				v[j] = byte(i + j)
			}
			return chain.Raw{Topic: "suite", Partition: int32(i % 3), Offset: int64(i / 3), Key: []byte{byte(i)}, Value: v}
		}
	}
	e := Install(t, s.Binary, host.LaunchOptions{CallTimeout: 20 * time.Second})
	if e.Manifest.Type != sdk.Sink {
		t.Fatalf("manifest type %q, want sink", e.Manifest.Type)
	}
	p := e.Launch(t)
	t.Run("spec", func(t *testing.T) { checkSpec(t, e, p, sdk.Sink) })
	t.Run("validate", func(t *testing.T) { checkValidate(t, p, s.Config, s.Invalid, s.Defaults) })
	var cfg map[string]string
	t.Run("task-configs", func(t *testing.T) { cfg = taskConfigs(t, p, "suite", s.Config, s.MaxTasks)[0] })
	if t.Failed() {
		t.FailNow()
	}
	var all []chain.Raw
	t.Run("put-flush", func(t *testing.T) {
		task := s.start(t, p, cfg)
		tps := []sdk.TopicPartition{{Topic: "suite", Partition: 0}, {Topic: "suite", Partition: 1}, {Topic: "suite", Partition: 2}}
		if err := task.Open(ctxT(t), tps); err != nil {
			t.Fatal(err)
		}
		next := map[sdk.TopicPartition]int64{}
		for b := range 3 {
			batch := make([]chain.Raw, 100)
			for i := range batch {
				batch[i] = s.Record(b*100 + i)
				tp := sdk.TopicPartition{Topic: batch[i].Topic, Partition: batch[i].Partition}
				next[tp] = batch[i].Offset + 1
			}
			res, err := task.Put(ctxT(t), batch)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Failures) > 0 {
				t.Fatalf("put failures: %+v", res.Failures[0])
			}
			all = append(all, batch...)
		}
		got, err := task.Flush(ctxT(t), next)
		if err != nil {
			t.Fatal(err)
		}
		for tp, o := range got {
			if o > next[tp] {
				t.Fatalf("flush returned %s@%d beyond the offsets put (%d)", tp, o, next[tp])
			}
		}
		if err := task.Close(ctxT(t), tps); err != nil {
			t.Fatal(err)
		}
		if err := task.Stop(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		if s.Verify != nil {
			s.Verify(t, all)
		}
	})
	t.Run("crash-restart", func(t *testing.T) {
		p := e.Launch(t)
		task := s.start(t, p, cfg)
		Kill(t, p)
		_, err := task.Put(ctxT(t), []chain.Raw{s.Record(0)})
		if !errors.Is(err, host.ErrPluginExited) {
			t.Fatalf("Put after SIGKILL: %v; want ErrPluginExited", err)
		}
		p2 := e.Launch(t)
		task2 := s.start(t, p2, cfg)
		if _, err := task2.Put(ctxT(t), []chain.Raw{s.Record(0)}); err != nil {
			t.Fatalf("Put after restart: %v", err)
		}
		if err := task2.Stop(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	})
}

func (s SinkSuite) start(t *testing.T, p *host.Process, cfg map[string]string) *host.SinkTask {
	task, err := p.StartSinkTask(ctxT(t), host.SinkTaskStart{Connector: "suite", Task: 0, Props: merged(s.Config, cfg), Defaults: s.Defaults})
	if err != nil {
		t.Fatal(err)
	}
	return task
}
