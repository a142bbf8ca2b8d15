package host_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/internal/citest"
	"github.com/connectd/connectd/internal/syncbuf"
	"github.com/connectd/connectd/plugins/host"
	"github.com/connectd/connectd/plugins/internal/testconnectors"
	"github.com/connectd/connectd/plugins/plugintest"
)

func sinkConfig(out string) map[string]string {
	return map[string]string{"name": "s", "connector.class": "TestSink", "out.file": out, "topics": "t"}
}

func TestSinkSuite(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sink.bin")
	plugintest.SinkSuite{
		Binary: build(t, "sink"),
		Config: sinkConfig(out),
		Invalid: []plugintest.Invalid{
			{Name: "missing out.file", Props: map[string]string{"out.file": ""}, Key: "out.file"},
			{Name: "bad sleep", Props: map[string]string{"sleep.ms": "-3"}, Key: "sleep.ms"},
		},
		Verify: func(t *testing.T, put []chain.Raw) { verifySinkFile(t, out, put) },
	}.Run(t)
}

// verifySinkFile checks that the sink received exactly these records, byte for byte.
func verifySinkFile(t *testing.T, path string, want []chain.Raw) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := testconnectors.DecodeRecords(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("sink received %d records, want %d", len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		var ts int64
		if !w.Timestamp.IsZero() {
			ts = w.Timestamp.UnixNano()
		}
		if g.Topic != w.Topic || g.Partition != w.Partition || g.Offset != w.Offset || g.Timestamp != ts ||
			!sameBytes(g.Key, w.Key) || !sameBytes(g.Value, w.Value) || !sameHeaders(g.Headers, w.Headers) {
			t.Fatalf("record %d differs: got %s/%d@%d key %q (%d value bytes), want %s/%d@%d key %q (%d value bytes)",
				i, g.Topic, g.Partition, g.Offset, g.Key, len(g.Value), w.Topic, w.Partition, w.Offset, w.Key, len(w.Value))
		}
	}
}

// sameBytes distinguishes null from empty.
func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func sameHeaders(a, b []sdk.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || !sameBytes(a[i].Value, b[i].Value) {
			return false
		}
	}
	return true
}

func launch(t *testing.T, mode string, opts host.LaunchOptions) (*plugintest.Env, *host.Process) {
	env := plugintest.Install(t, build(t, mode), opts)
	return env, env.Launch(t)
}

// testRecords are records with nulls, empty values, headers and
// timestamps; big adds a 16 MiB value.
func testRecords(n int, big bool) []chain.Raw {
	out := make([]chain.Raw, n)
	for i := range out {
		key, value, hs, ts := testconnectors.SourceRecordAt(7, 1024, 0, i)
		if big && i == n/2 {
			_, value, _, _ = testconnectors.SourceRecordAt(7, 1024, 1, i)
		}
		if i%11 == 5 {
			value = []byte{} // empty, not null
		}
		if i%13 == 6 {
			value = nil // tombstone
		}
		out[i] = chain.Raw{Topic: "t", Partition: int32(i % 4), Offset: int64(i), Key: key, Value: value, Headers: hs, Timestamp: ts}
	}
	return out
}

func TestPutBytesCrossIntact(t *testing.T) {
	for _, big := range []bool{false, true} {
		t.Run(fmt.Sprintf("16MiB=%v", big), func(t *testing.T) { testPutBytesCrossIntact(t, big) })
	}
}

func testPutBytesCrossIntact(t *testing.T, big bool) {
	out := filepath.Join(t.TempDir(), "sink.bin")
	// A 1 MiB budget makes the small batch travel in several parts too.
	_, p := launch(t, "sink", host.LaunchOptions{BatchBytes: 1 << 20})
	task, err := p.StartSinkTask(ctxT(t), host.SinkTaskStart{Connector: "s", Defaults: chain.ByteArrayDefaults(), Props: sinkConfig(out)})
	if err != nil {
		t.Fatal(err)
	}
	recs := testRecords(2000, big)
	res, err := task.Put(ctxT(t), recs)
	if err != nil || len(res.Failures) > 0 {
		t.Fatalf("put: %v %+v", err, res)
	}
	if err := task.Stop(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	verifySinkFile(t, out, recs)
}

func TestPollBytesCrossIntact(t *testing.T) {
	for _, big := range []bool{false, true} {
		t.Run(fmt.Sprintf("16MiB=%v", big), func(t *testing.T) { testPollBytesCrossIntact(t, big) })
	}
}

func testPollBytesCrossIntact(t *testing.T, big bool) {
	_, p := launch(t, "source", host.LaunchOptions{BatchBytes: 256 << 10})
	props := map[string]string{"topic": "t", "records": "300", "batch": "100", "record.bytes": "1024", "transaction.boundary": "connector"}
	bigEvery := 0
	if big {
		props["big.every"], bigEvery = "150", 150
	}
	task, err := p.StartSourceTask(ctxT(t), host.SourceTaskStart{Connector: "src", Defaults: chain.ByteArrayDefaults(), Props: props})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300; {
		b, err := task.Next(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		if b.Polled != 100 || len(b.Records) != 100 || len(b.Failures) != 0 {
			t.Fatalf("batch: polled %d, %d records, %d failures", b.Polled, len(b.Records), len(b.Failures))
		}
		for j, r := range b.Records {
			key, value, hs, ts := testconnectors.SourceRecordAt(1, 1024, bigEvery, i)
			if r.Topic != "t" || r.Partition != int32(i%3) || !sameBytes(r.Key, key) || !sameBytes(r.Value, value) ||
				!sameHeaders(r.Headers, hs) || !r.Timestamp.Equal(ts) ||
				string(r.SourcePartition) != `{"p":"0"}` || string(r.SourceOffset) != fmt.Sprintf(`{"i":%d}`, i) {
				t.Fatalf("record %d differs (%d value bytes, want %d)", i, len(r.Value), len(value))
			}
			// TestSource asks to commit after the middle record and at the end.
			want := host.BoundaryNone
			if j == 50 || j == 99 {
				want = host.BoundaryCommitAfter
			}
			if r.Boundary != want {
				t.Fatalf("record %d: boundary %v, want %v", i, r.Boundary, want)
			}
			i++
		}
		if len(b.Offsets) != 1 || string(b.Offsets[0].Offset) != fmt.Sprintf(`{"i":%d}`, i-1) {
			t.Fatalf("batch offsets %q", b.Offsets)
		}
	}
	if err := task.Stop(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

func TestSinkRecordFailuresAndBatchErrors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sink.bin")
	_, p := launch(t, "sink", host.LaunchOptions{})
	start := func(extra map[string]string) *host.SinkTask {
		props := sinkConfig(out)
		for k, v := range extra {
			props[k] = v
		}
		task, err := p.StartSinkTask(ctxT(t), host.SinkTaskStart{Connector: "s", Defaults: chain.ByteArrayDefaults(), Props: props})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = task.Stop(context.Background()) })
		return task
	}
	recs := []chain.Raw{{Topic: "t", Value: []byte("ok")}, {Topic: "t", Value: []byte("poison")}, {Topic: "t", Value: []byte("ok too")}, {Topic: "t", Value: []byte("more poison")}}
	res, err := start(map[string]string{"reject": "poison"}).Put(ctxT(t), recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 2 || res.Failures[0].Index != 1 || res.Failures[1].Index != 3 ||
		res.Failures[0].Stage != sdk.StageTaskPut || !strings.Contains(res.Failures[0].Message, "poison") {
		t.Fatalf("failures %+v", res.Failures)
	}
	_, err = start(map[string]string{"fail.put": "retriable"}).Put(ctxT(t), recs)
	if err == nil || !sdk.IsRetriable(err) || !strings.Contains(err.Error(), "target busy") {
		t.Fatalf("retriable put error: %v", err)
	}
	_, err = start(map[string]string{"fail.put": "fatal"}).Put(ctxT(t), recs)
	if err == nil || sdk.IsRetriable(err) || !strings.Contains(err.Error(), "rejected the batch") {
		t.Fatalf("fatal put error: %v", err)
	}
}

func gauge(t *testing.T, fams []*dto.MetricFamily, name string) (float64, map[string]string) {
	t.Helper()
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue(), labels
			}
			return m.GetCounter().GetValue(), labels
		}
	}
	t.Fatalf("metric %s not gathered", name)
	return 0, nil
}

// TestSinkFlowControl: a slow sink throttles the host. Eight goroutines
// push batches as fast as they can; the plugin never holds more than its
// credits (2 batches) and the task sees one Put at a time.
func TestSinkFlowControl(t *testing.T) {
	_, p := launch(t, "sink", host.LaunchOptions{})
	props := sinkConfig("discard")
	props["sleep.ms"] = "20"
	task, err := p.StartSinkTask(ctxT(t), host.SinkTaskStart{Connector: "slow", Task: 3, Defaults: chain.ByteArrayDefaults(), Props: props})
	if err != nil {
		t.Fatal(err)
	}
	batch := make([]chain.Raw, 64)
	for i := range batch {
		batch[i] = chain.Raw{Topic: "t", Value: make([]byte, 16<<10)} // 1 MiB per batch
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				if _, err := task.Put(ctxT(t), batch); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	fams, err := p.Gather(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	held, labels := gauge(t, fams, "connectd_plugin_sink_held_batches_max")
	heldBytes, _ := gauge(t, fams, "connectd_plugin_sink_held_bytes_max")
	puts, _ := gauge(t, fams, "testsink_puts_total")
	concurrent, _ := gauge(t, fams, "testsink_max_concurrent_puts")
	t.Logf("held batches max %v, held bytes max %v, puts %v, concurrent %v", held, heldBytes, puts, concurrent)
	if held != 2 || heldBytes > 2*64*(16<<10+64) || puts != 40 || concurrent != 1 {
		t.Fatalf("held batches max %v (want 2 = credits), held bytes max %v, puts %v, concurrent puts %v", held, heldBytes, puts, concurrent)
	}
	if labels["connector"] != "slow" || labels["task"] != "3" {
		t.Fatalf("labels %v", labels)
	}
	if err := task.Stop(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

// TestSourceFlowControl: a host that does not take batches stops the
// plugin's polling once its credits are used.
func TestSourceFlowControl(t *testing.T) {
	_, p := launch(t, "source", host.LaunchOptions{})
	props := map[string]string{"topic": "t", "records": "1000000", "batch": "10", "record.bytes": "100"}
	task, err := p.StartSourceTask(ctxT(t), host.SourceTaskStart{Connector: "src", Defaults: chain.ByteArrayDefaults(), Props: props, Credits: 3})
	if err != nil {
		t.Fatal(err)
	}
	polls := func() float64 {
		fams, err := p.Gather(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		v, _ := gauge(t, fams, "connectd_plugin_source_polls_total")
		return v
	}
	waitFor(t, func() bool { return polls() == 3 })
	// Nothing more may happen while the host holds all batches; there is no
	// event to await for "nothing", so give the plugin time to misbehave.
	time.Sleep(300 * time.Millisecond)
	if n := polls(); n != 3 {
		t.Fatalf("plugin polled %v times with 3 credits and no batch taken", n)
	}
	if _, err := task.Next(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return polls() == 4 })
	time.Sleep(200 * time.Millisecond)
	if n := polls(); n != 4 {
		t.Fatalf("plugin polled %v times after one credit came back", n)
	}
	if err := task.Stop(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 20s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCrashedPluginFailsTaskWithStderrTail(t *testing.T) {
	t.Run("SIGKILL", func(t *testing.T) {
		_, p := launch(t, "source", host.LaunchOptions{})
		task, err := p.StartSourceTask(ctxT(t), host.SourceTaskStart{Connector: "src", Defaults: chain.ByteArrayDefaults(), Props: map[string]string{"topic": "t", "records": "0"}})
		if err != nil {
			t.Fatal(err)
		}
		plugintest.Kill(t, p)
		// Batches received before the kill are still handed out first.
		for err == nil {
			_, err = task.Next(ctxT(t))
		}
		var exit *host.ExitError
		if !errors.As(err, &exit) || !errors.Is(err, host.ErrPluginExited) {
			t.Fatalf("Next: %v", err)
		}
		if exit.State != "signal: killed" || !strings.Contains(exit.StderrTail, "test source started") {
			t.Fatalf("exit %q, tail %q", exit.State, exit.StderrTail)
		}
		// Every later call says the process is gone.
		if _, err := p.Spec(ctxT(t)); !errors.Is(err, host.ErrPluginExited) {
			t.Fatalf("Spec after death: %v", err)
		}
	})
	t.Run("panic", func(t *testing.T) {
		_, p := launch(t, "source", host.LaunchOptions{})
		// The plugin may die before or after its start reply gets out:
		// either way the task's error carries the panic.
		task, nerr := p.StartSourceTask(ctxT(t), host.SourceTaskStart{Connector: "src", Defaults: chain.ByteArrayDefaults(), Props: map[string]string{"topic": "t", "mode": "crash-poll", "batch": "5"}})
		for nerr == nil {
			_, nerr = task.Next(ctxT(t))
		}
		var exit *host.ExitError
		if !errors.As(nerr, &exit) || exit.Code != 2 ||
			!strings.Contains(exit.StderrTail, "panic: test source: deliberate crash in Poll") {
			t.Fatalf("Next: %v", nerr)
		}
		t.Logf("task trace:\n%v", nerr)
	})
}

func TestTamperedBinaryRefused(t *testing.T) {
	env := plugintest.Install(t, build(t, "source"), host.LaunchOptions{})
	f, err := os.OpenFile(env.Manifest.Path(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0})
	f.Close()
	_, err = host.Launch(ctxT(t), env.Manifest, env.Options)
	if !errors.Is(err, host.ErrChecksumMismatch) || !strings.Contains(err.Error(), "reinstall") || !strings.Contains(err.Error(), env.Manifest.SHA256) {
		t.Fatalf("launch of a tampered binary: %v", err)
	}
	t.Log(err)
}

func TestNoOrphanAfterHostSIGKILL(t *testing.T) {
	env := plugintest.Install(t, build(t, "source"), host.LaunchOptions{})
	mj, _ := json.Marshal(env.Manifest)
	t.Run("launched by the host", func(t *testing.T) {
		// Pdeathsig and the data channel's end both apply.
		killHostAndAwaitPlugin(t, envHostHelper+"=1", "CONNECTD_TEST_MANIFEST="+string(mj), "CONNECTD_TEST_MANIFEST_DIR="+env.Manifest.Dir)
	})
	t.Run("data channel alone", func(t *testing.T) {
		// Started without Pdeathsig: only the plugin's exit when the
		// host's end of the data channel closes can end it.
		killHostAndAwaitPlugin(t, envHostHelper+"=1", "CONNECTD_TEST_RAW_PLUGIN="+env.Manifest.Path())
	})
}

// killHostAndAwaitPlugin runs this test binary as a small host with extra
// env, reads the plugin pid it prints, SIGKILLs the host and waits for the
// plugin to disappear.
func killHostAndAwaitPlugin(t *testing.T, extraEnv ...string) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), extraEnv...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line := make([]byte, 32)
	n, err := out.Read(line)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(line[:n])))
	if err != nil || !plugintest.PidAlive(pid) {
		t.Fatalf("helper printed %q (%v); plugin alive: %v", line[:n], err, plugintest.PidAlive(pid))
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitFor(t, func() bool { return !plugintest.PidAlive(pid) })
}

func TestGarbageOnStdoutFailsLaunch(t *testing.T) {
	bin := build(t, "stdout-garbage")
	cat, err := host.OpenCatalog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = cat.Install(ctxT(t), bin)
	if !errors.Is(err, host.ErrProtocol) || !strings.Contains(err.Error(), "stdout") {
		t.Fatalf("install of a plugin printing to stdout: %v", err)
	}
	t.Logf("after %v: %v", time.Since(start), err)
}

// TestSourceHangCheckSparesIdleTasks: a source task fails for hanging
// only when one Poll call runs past the call timeout. An empty source
// (whose polls return nothing, and which sends the host nothing) and a
// source whose batches the host does not take (no credit left, so no Poll
// runs) both outlive several call timeouts, and the latter polls again
// once the host takes a batch.
func TestSourceHangCheckSparesIdleTasks(t *testing.T) {
	opts := host.LaunchOptions{CallTimeout: time.Second}
	cases := []struct {
		name  string
		props map[string]string
	}{
		{"empty source", map[string]string{"topic": "t", "records": "0"}},
		{"batches not taken", map[string]string{"topic": "t", "records": "1000000", "batch": "10", "record.bytes": "10"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, p := launch(t, "source", opts)
			task, err := p.StartSourceTask(ctxT(t), host.SourceTaskStart{Connector: "src", Defaults: chain.ByteArrayDefaults(), Props: c.props, Credits: 1})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { task.Stop(ctxT(t)) })
			// Nothing to await here: the assertion is that no failure
			// comes within several call timeouts.
			time.Sleep(4 * opts.CallTimeout)
			if err := task.Err(); err != nil {
				t.Fatalf("task failed while idle: %v", err)
			}
			if c.props["records"] == "0" {
				return
			}
			for range 3 {
				b, err := task.Next(ctxT(t))
				if err != nil {
					t.Fatalf("Next after idling: %v", err)
				}
				task.Release(b)
			}
		})
	}
}

func TestHangsFailWithinCallTimeout(t *testing.T) {
	opts := host.LaunchOptions{CallTimeout: 3 * time.Second} // short, yet safe on a loaded machine
	t.Run("validate", func(t *testing.T) {
		_, p := launch(t, "source", opts)
		_, err := p.Validate(ctxT(t), map[string]string{"topic": "t", "mode": "hang-validate"}, nil)
		if !errors.Is(err, host.ErrTimeout) {
			t.Fatalf("Validate of a hanging plugin: %v", err)
		}
		// The same process still answers other calls, and so do others.
		if _, err := p.Spec(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		_, other := launch(t, "sink", opts)
		if err := other.Ping(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("poll", func(t *testing.T) {
		_, p := launch(t, "source", opts)
		task, err := p.StartSourceTask(ctxT(t), host.SourceTaskStart{Connector: "src", Defaults: chain.ByteArrayDefaults(), Props: map[string]string{"topic": "t", "mode": "hang-poll"}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = task.Next(ctxT(t))
		if !errors.Is(err, host.ErrTimeout) || !strings.Contains(err.Error(), "Poll hangs") {
			t.Fatalf("Next of a hanging Poll: %v", err)
		}
	})
	t.Run("put", func(t *testing.T) {
		_, p := launch(t, "sink", opts)
		props := sinkConfig("discard")
		props["hang.put"] = "true"
		task, err := p.StartSinkTask(ctxT(t), host.SinkTaskStart{Connector: "s", Defaults: chain.ByteArrayDefaults(), Props: props})
		if err != nil {
			t.Fatal(err)
		}
		_, err = task.Put(ctxT(t), []chain.Raw{{Topic: "t"}})
		if !errors.Is(err, host.ErrTimeout) {
			t.Fatalf("Put of a hanging task: %v", err)
		}
		if _, err := task.Put(ctxT(t), []chain.Raw{{Topic: "t"}}); !errors.Is(err, host.ErrTimeout) {
			t.Fatalf("the failed task must stay failed: %v", err)
		}
	})
}

// A plugin process that stops answering as a whole (here: SIGSTOP) is
// noticed although its idle tasks send nothing: the health check kills it
// and its tasks fail with the reason.
func TestStoppedProcessIsKilledAndItsTasksFail(t *testing.T) {
	opts := host.LaunchOptions{CallTimeout: time.Second}
	_, p := launch(t, "source", opts)
	task, err := p.StartSourceTask(ctxT(t), host.SourceTaskStart{Connector: "src", Defaults: chain.ByteArrayDefaults(), Props: map[string]string{"topic": "t", "records": "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(p.Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(p.Pid(), syscall.SIGKILL) })
	_, err = task.Next(ctxT(t))
	var exit *host.ExitError
	if !errors.As(err, &exit) || !strings.Contains(exit.Killed, "did not answer a health check") {
		t.Fatalf("Next of a task in a stopped process: %v; want the process's exit, killed for not answering", err)
	}
	select {
	case <-p.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the stopped process was not killed")
	}
}

func TestLogsMergedWithAttributes(t *testing.T) {
	var buf syncbuf.Buffer
	opts := host.LaunchOptions{Logger: slog.New(slog.NewJSONHandler(&buf, nil)), Connector: "logs"}
	_, p := launch(t, "source", opts)
	task, err := p.StartSourceTask(ctxT(t), host.SourceTaskStart{Connector: "logs", Task: 4, Defaults: chain.ByteArrayDefaults(), Props: map[string]string{"topic": "t", "records": "0"}})
	if err != nil {
		t.Fatal(err)
	}
	defer task.Stop(ctxT(t))
	waitFor(t, func() bool { return strings.Contains(buf.String(), "test source started") })
	for _, line := range strings.Split(buf.String(), "\n") {
		if !strings.Contains(line, "test source started") {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		if m["level"] != "INFO" || m["connector"] != "logs" || m["task"] != float64(4) || m["plugin"] != "TestSource" || m["next"] != float64(0) {
			t.Fatalf("merged line %s", line)
		}
		// The connector attribute appears once, not once from the host and
		// once from the plugin's own line.
		if n := strings.Count(line, `"connector":`); n != 1 {
			t.Fatalf("connector appears %d times in %s", n, line)
		}
		return
	}
	t.Fatalf("no merged line in %s", buf.String())
}

func TestConnectorEvents(t *testing.T) {
	_, p := launch(t, "source", host.LaunchOptions{})
	c, err := p.StartConnector(ctxT(t), "ev", map[string]string{"topic": "t", "events": "error"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-c.Events():
		if ev.Type != host.Failed || !strings.Contains(ev.Err.Error(), "deliberate connector error") {
			t.Fatalf("event %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
	if err := c.Stop(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	// Many connectors per process, each with its own events, task
	// configs and stop; a name that runs there already is refused.
	a, err := p.StartConnector(ctxT(t), "a", map[string]string{"events": "reconfigure"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.StartConnector(ctxT(t), "b", map[string]string{"events": "error"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		c    *host.Connector
		want host.EventType
	}{{a, host.ReconfigurationRequested}, {b, host.Failed}} {
		select {
		case ev := <-tc.c.Events():
			if ev.Type != tc.want {
				t.Fatalf("event %+v, want type %v", ev, tc.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no event")
		}
	}
	if _, err := p.StartConnector(ctxT(t), "b", nil); err == nil || !strings.Contains(err.Error(), `connector "b" already runs`) {
		t.Fatalf("second instance of b: %v", err)
	}
	if err := a.Stop(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.TaskConfigs(ctxT(t), 1); err == nil || !strings.Contains(err.Error(), `connector "a" is not running`) {
		t.Fatalf("task configs of stopped a: %v", err)
	}
	if cfgs, err := b.TaskConfigs(ctxT(t), 2); err != nil || len(cfgs) != 2 {
		t.Fatalf("task configs of b after a stopped: %v %v", cfgs, err)
	}
}

func TestCatalog(t *testing.T) {
	dir := t.TempDir()
	cat, err := host.OpenCatalog(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.Lookup("TestSource"); !errors.Is(err, host.ErrUnknownPlugin) {
		t.Fatalf("lookup before install: %v", err)
	}
	m, err := cat.Install(ctxT(t), build(t, "source"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "TestSource" || m.Type != sdk.Source || len(m.SHA256) != 64 || !slices.Equal(m.ProtocolVersions, host.ProtocolVersions()) || len(m.Config) != 3 {
		t.Fatalf("manifest %+v", m)
	}
	if _, err := cat.Install(ctxT(t), build(t, "sink")); err != nil {
		t.Fatal(err)
	}
	list, err := cat.List()
	if err != nil || len(list) != 2 || list[0].Name != "TestSink" || list[1].Name != "TestSource" {
		t.Fatalf("list %v %v", list, err)
	}
	got, err := cat.Lookup("TestSource")
	if err != nil || got.SHA256 != m.SHA256 || got.Path() != filepath.Join(dir, filepath.Base(m.Binary)) {
		t.Fatalf("lookup %+v %v", got, err)
	}
	if err := cat.Remove("TestSource"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(got.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("binary left after remove: %v", err)
	}
	if err := cat.Remove("TestSource"); !errors.Is(err, host.ErrUnknownPlugin) {
		t.Fatalf("second remove: %v", err)
	}
	if _, err := cat.Install(ctxT(t), "/nonexistent/plugin"); err == nil {
		t.Fatal("installed a missing file")
	}
}

func TestPollErrorFailsTask(t *testing.T) {
	_, p := launch(t, "source", host.LaunchOptions{})
	task, err := p.StartSourceTask(ctxT(t), host.SourceTaskStart{Connector: "src", Defaults: chain.ByteArrayDefaults(), Props: map[string]string{"topic": "t", "mode": "fail-poll"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = task.Next(ctxT(t))
	if err == nil || !strings.Contains(err.Error(), "deliberate Poll failure") || errors.Is(err, host.ErrPluginExited) {
		t.Fatalf("Next: %v", err)
	}
	if err := task.Stop(ctxT(t)); err == nil {
		t.Fatal("Stop of a failed task reported success")
	}
	// The process is fine: a new task starts.
	if err := p.Ping(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

// TestPluginGCSettings: GOGC, GOMEMLIMIT and MALLOC_ARENA_MAX reach the
// plugin process's environment when set, and nothing of the kind when not
// (the Go runtime's defaults apply then).
func TestPluginGCSettings(t *testing.T) {
	if runtime.GOOS != "linux" {
		citest.Unavailable(t, "reads the plugin's environment from /proc, which %s does not have (CI runs on Linux)", runtime.GOOS)
	}
	for _, tc := range []struct {
		opts host.LaunchOptions
		want []string
	}{
		{host.LaunchOptions{GOGC: "300", GOMemLimit: "512MiB", MallocArenaMax: "2"}, []string{"GOGC=300", "GOMEMLIMIT=512MiB", "MALLOC_ARENA_MAX=2"}},
		{host.LaunchOptions{}, nil},
	} {
		_, p := launch(t, "source", tc.opts)
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.Pid()))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, kv := range strings.Split(string(environ), "\x00") {
			if strings.HasPrefix(kv, "GOGC=") || strings.HasPrefix(kv, "GOMEMLIMIT=") || strings.HasPrefix(kv, "MALLOC_ARENA_MAX=") {
				got = append(got, kv)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("plugin environment has %q, want %q", got, tc.want)
		}
	}
}

// TestCatalogVersionsSideBySide: installing a second version of a class
// keeps the first (KIP-891); lookups choose by version range, a range no
// installed version satisfies names the installed ones, and versions are
// removed one at a time or all together.
func TestCatalogVersionsSideBySide(t *testing.T) {
	cat, err := host.OpenCatalog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const versionVar = "github.com/connectd/connectd/plugins/internal/testconnectors.Version="
	for _, v := range []string{"2.0.0", "1.0.0", "1.5.0-rc1"} {
		m, err := cat.Install(ctxT(t), builder.Build(t, testPlugin, "main.mode=source", versionVar+v))
		if err != nil {
			t.Fatal(err)
		}
		if m.Version != v {
			t.Fatalf("installed version %q, want %q", m.Version, v)
		}
	}
	// Reinstalling a version replaces it rather than adding one.
	if _, err := cat.Install(ctxT(t), builder.Build(t, testPlugin, "main.mode=source", versionVar+"1.0.0")); err != nil {
		t.Fatal(err)
	}
	list, err := cat.List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range list {
		got = append(got, m.Version)
	}
	if !slices.Equal(got, []string{"1.0.0", "1.5.0-rc1", "2.0.0"}) {
		t.Fatalf("listed versions %v, want 1.0.0 1.5.0-rc1 2.0.0 (Maven order)", got)
	}
	for _, c := range []struct{ spec, want string }{
		{"", "2.0.0"}, {"latest", "2.0.0"}, {"1.0.0", "1.0.0"}, {"1.0", "1.0.0"},
		{"[1.0,2.0)", "1.5.0-rc1"}, {"(,1.5]", "1.5.0-rc1"}, {"[1.0,1.5.0-rc1)", "1.0.0"},
	} {
		r, err := host.ParseVersionRange(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		m, err := cat.LookupVersion("TestSource", r)
		if err != nil || m.Version != c.want {
			t.Errorf("LookupVersion(%q) = %q, %v; want %s", c.spec, m.Version, err, c.want)
			continue
		}
		if sum, _ := sha256File(m.Path()); sum != m.SHA256 {
			t.Errorf("version %s: binary %s does not match its manifest", m.Version, m.Path())
		}
	}
	r, _ := host.ParseVersionRange("[3.0,)")
	_, err = cat.LookupVersion("TestSource", r)
	var ve *host.VersionError
	if !errors.As(err, &ve) || !errors.Is(err, host.ErrNoMatchingVersion) ||
		!strings.Contains(err.Error(), "available versions: 1.0.0, 1.5.0-rc1, 2.0.0") {
		t.Fatalf("unsatisfiable range: %v", err)
	}
	if err := cat.RemoveVersion("TestSource", "2.0.0"); err != nil {
		t.Fatal(err)
	}
	if m, err := cat.Lookup("TestSource"); err != nil || m.Version != "1.5.0-rc1" {
		t.Fatalf("latest after removing 2.0.0: %q %v", m.Version, err)
	}
	if err := cat.RemoveVersion("TestSource", "2.0.0"); !errors.Is(err, host.ErrNoMatchingVersion) {
		t.Fatalf("removing a version twice: %v", err)
	}
	if err := cat.Remove("TestSource"); err != nil {
		t.Fatal(err)
	}
	if _, err := cat.Lookup("TestSource"); !errors.Is(err, host.ErrUnknownPlugin) {
		t.Fatalf("lookup after removing every version: %v", err)
	}
}

func sha256File(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
