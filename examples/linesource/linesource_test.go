package linesource_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/examples/linesource"
	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/plugins/host"
	"github.com/connectd/connectd/plugins/plugintest"
)

const pluginPkg = "github.com/connectd/connectd/examples/linesource/cmd/connectd-lines"

// Keys and values as plain strings.
var stringDefaults = chain.Defaults{
	"key.converter":   "org.apache.kafka.connect.storage.StringConverter",
	"value.converter": "org.apache.kafka.connect.storage.StringConverter",
}

// writeLines writes lines "<prefix>-1" … "<prefix>-n", each with its newline.
func writeLines(t *testing.T, path, prefix string, from, to int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := from; i <= to; i++ {
		fmt.Fprintf(f, "%s-%d\n", prefix, i)
	}
}

// The test kit runs the real plugin binary over the real protocol: spec,
// validation (good and bad configs), task configs, poll/commit/resume, and
// a SIGKILL of the plugin followed by a resume from the committed offsets.
func TestSuite(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.log"), filepath.Join(dir, "b.log")
	writeLines(t, a, "a", 1, 1000)
	writeLines(t, b, "b", 1, 1000)
	plugintest.SourceSuite{
		Binary: plugintest.NewBuilder(t.TempDir()).Build(t, pluginPkg),
		Config: map[string]string{
			"name": "lines", "connector.class": linesource.Class, "tasks.max": "2",
			linesource.KeyFiles: a + "," + b, linesource.KeyTopic: "lines", linesource.KeyBatch: "50",
		},
		Defaults: stringDefaults,
		Invalid: []plugintest.Invalid{
			{Name: "no files", Props: map[string]string{linesource.KeyFiles: ""}, Key: linesource.KeyFiles},
			{Name: "relative path", Props: map[string]string{linesource.KeyFiles: "a.log"}, Key: linesource.KeyFiles},
			{Name: "file twice", Props: map[string]string{linesource.KeyFiles: a + "," + a}, Key: linesource.KeyFiles},
			{Name: "no topic", Props: map[string]string{linesource.KeyTopic: ""}, Key: linesource.KeyTopic},
			{Name: "batch zero", Props: map[string]string{linesource.KeyBatch: "0"}, Key: linesource.KeyBatch},
			{Name: "poll wait zero", Props: map[string]string{linesource.KeyPollWait: "0"}, Key: linesource.KeyPollWait},
		},
		Records: 300,
	}.Run(t)
}

// Every line is delivered once, in order, with its file as key; a line
// counts only once its newline is written; a task restarted from the
// committed offsets continues with the next line, including lines appended
// meanwhile.
func TestLinesOnceInOrderAcrossRestartAndGrowth(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	writeLines(t, path, "x", 1, 120)
	env := plugintest.Install(t, plugintest.NewBuilder(t.TempDir()).Build(t, pluginPkg), host.LaunchOptions{})
	p := env.Launch(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	props := map[string]string{"name": "lines", "connector.class": linesource.Class, "tasks.max": "1",
		linesource.KeyFiles: path, linesource.KeyTopic: "lines", linesource.KeyBatch: "40"}
	c, err := p.StartConnector(ctx, "lines", props)
	if err != nil {
		t.Fatal(err)
	}
	cfgs, err := c.TaskConfigs(ctx, 4)
	if err != nil || len(cfgs) != 1 {
		t.Fatalf("task configs %v, %v; want one task for one file", cfgs, err)
	}

	var got []string
	var committed []host.Offset
	read := func(task *host.SourceTask, until int) {
		for len(got) < until {
			b, err := task.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range b.Records {
				if string(r.Key) != path || r.Topic != "lines" {
					t.Fatalf("record key %q topic %q", r.Key, r.Topic)
				}
				got = append(got, string(r.Value))
				committed = []host.Offset{{Partition: r.SourcePartition, Offset: r.SourceOffset}}
			}
		}
	}
	task, err := p.StartSourceTask(ctx, host.SourceTaskStart{Connector: "lines", Props: cfgs[0], Defaults: stringDefaults})
	if err != nil {
		t.Fatal(err)
	}
	read(task, 80)
	if err := task.Commit(ctx, committed); err != nil {
		t.Fatal(err)
	}
	if err := task.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	var off struct{ Line int }
	if err := json.Unmarshal(committed[0].Offset, &off); err != nil || off.Line != len(got) {
		t.Fatalf("committed offset %s after %d lines", committed[0].Offset, len(got))
	}

	// Meanwhile the file grows, the last line first without its newline.
	writeLines(t, path, "x", 121, 150)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(f, "x-15")
	task, err = p.StartSourceTask(ctx, host.SourceTaskStart{Connector: "lines", Props: cfgs[0], Defaults: stringDefaults, Offsets: committed})
	if err != nil {
		t.Fatal(err)
	}
	read(task, 150)
	fmt.Fprint(f, "1\n")
	f.Close()
	read(task, 151)
	if err := task.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	want := make([]string, 151)
	for i := range want {
		want[i] = fmt.Sprintf("x-%d", i+1)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("lines:\n%s\nwant x-1 … x-151 once each", strings.Join(got, " "))
	}
}

func TestTaskConfigsSplitFiles(t *testing.T) {
	for _, tc := range []struct {
		files    string
		maxTasks int
		want     []string
	}{
		{"/a", 3, []string{"/a"}},
		{"/a,/b,/c", 2, []string{"/a,/c", "/b"}},
		{"/a, /b", 1, []string{"/a,/b"}},
	} {
		c := linesource.New()
		props := map[string]string{linesource.KeyFiles: tc.files, linesource.KeyTopic: "t"}
		if errs := c.Validate(context.Background(), props); errs != nil {
			t.Fatalf("%s: %v", tc.files, errs)
		}
		if err := c.Start(context.Background(), nil, props); err != nil {
			t.Fatal(err)
		}
		cfgs, err := c.TaskConfigs(context.Background(), tc.maxTasks)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, cfg := range cfgs {
			got = append(got, cfg["task.files"])
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s over %d tasks: %q, want %q", tc.files, tc.maxTasks, got, tc.want)
		}
	}
}

// An empty poll waits poll.wait.ms before it returns (the cost of an idle
// task), and no longer than its context allows.
func TestPollWait(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.log")
	writeLines(t, path, "x", 1, 0)
	for _, tc := range []struct {
		name    string
		wait    string
		timeout time.Duration
		atLeast time.Duration
	}{
		{name: "default", wait: "", timeout: time.Minute, atLeast: 200 * time.Millisecond},
		{name: "set", wait: "700", timeout: time.Minute, atLeast: 700 * time.Millisecond},
		{name: "cancelled", wait: "60000", timeout: 50 * time.Millisecond, atLeast: 50 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			props := map[string]string{linesource.KeyTopic: "lines", linesource.KeyFiles: path}
			if tc.wait != "" {
				props[linesource.KeyPollWait] = tc.wait
			}
			c := linesource.New()
			if err := c.Start(context.Background(), nil, props); err != nil {
				t.Fatal(err)
			}
			cfgs, err := c.TaskConfigs(context.Background(), 1)
			if err != nil || len(cfgs) != 1 {
				t.Fatalf("task configs %v, %v", cfgs, err)
			}
			task := c.NewTask()
			if err := task.Start(context.Background(), plugintest.SourceTaskContext{ConnectorName: "lines"}, cfgs[0]); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = task.Stop(context.Background()) })
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			start := time.Now()
			recs, err := task.Poll(ctx)
			took := time.Since(start)
			if err != nil || len(recs) != 0 {
				t.Fatalf("poll of an empty file: %d records, %v", len(recs), err)
			}
			if took < tc.atLeast || took >= tc.timeout+10*time.Second {
				t.Errorf("an empty poll returned after %v; want at least %v and about its context's %v at most", took, tc.atLeast, tc.timeout)
			}
		})
	}
}
