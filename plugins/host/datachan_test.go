package host_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/plugins/host"
	"github.com/connectd/connectd/plugins/internal/testconnectors"
	"github.com/connectd/connectd/plugins/plugintest"
)

// The tests in this file are about the data channel: the
// task streams of one plugin process multiplexed on one inherited
// socketpair.

// TestManySourceTasksOneProcess: source tasks of one process poll
// concurrently over the one channel; each receives exactly its own
// records, byte for byte, and a task that fails does not disturb the
// others. Half the tasks release their batches, so later frames of every
// task are read into reused buffers.
func TestManySourceTasksOneProcess(t *testing.T) {
	_, p := launch(t, "source", host.LaunchOptions{BatchBytes: 64 << 10})
	failing, err := p.StartSourceTask(ctxT(t), host.SourceTaskStart{Connector: "src", Task: 99, Defaults: chain.ByteArrayDefaults(),
		Props: map[string]string{"topic": "t", "mode": "fail-poll"}})
	if err != nil {
		t.Fatal(err)
	}
	const tasks, records = 4, 600
	var wg sync.WaitGroup
	errs := make(chan error, tasks+1)
	for n := range tasks {
		seed, size := 10+n, 100+700*n // records from 100 bytes to 2.2 KiB
		task, err := p.StartSourceTask(ctxT(t), host.SourceTaskStart{Connector: "src", Task: n, Defaults: chain.ByteArrayDefaults(), Credits: 1 + n,
			Props: map[string]string{"topic": "t" + strconv.Itoa(n), "records": strconv.Itoa(records), "batch": strconv.Itoa(7 + 20*n),
				"record.bytes": strconv.Itoa(size), "seed": strconv.Itoa(seed)}})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < records; {
				b, err := task.Next(ctxT(t))
				if err != nil {
					errs <- fmt.Errorf("task %d: %w", n, err)
					return
				}
				for _, r := range b.Records {
					key, value, hs, ts := testconnectors.SourceRecordAt(int64(seed), size, 0, i)
					if r.Topic != "t"+strconv.Itoa(n) || r.Partition != int32(i%3) || !sameBytes(r.Key, key) || !sameBytes(r.Value, value) ||
						!sameHeaders(r.Headers, hs) || !r.Timestamp.Equal(ts) || string(r.SourceOffset) != fmt.Sprintf(`{"i":%d}`, i) {
						errs <- fmt.Errorf("task %d: record %d differs (topic %s, offset %s)", n, i, r.Topic, r.SourceOffset)
						return
					}
					i++
				}
				if n%2 == 0 {
					task.Release(b)
				}
			}
			errs <- task.Stop(ctxT(t))
		}()
	}
	if _, err := failing.Next(ctxT(t)); err == nil || !strings.Contains(err.Error(), "deliberate Poll failure") {
		t.Fatalf("failing task: %v", err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Ping(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

// TestManySinkTasksOneProcess: sink tasks of one process receive
// concurrent puts over the one channel, each exactly its own records.
// Half the tasks borrow their records (their put buffers are reused), half
// keep the default lifetime.
func TestManySinkTasksOneProcess(t *testing.T) {
	_, p := launch(t, "sink", host.LaunchOptions{BatchBytes: 128 << 10})
	const tasks = 4
	var wg sync.WaitGroup
	errs := make(chan error, tasks)
	outs := make([]string, tasks)
	puts := make([][]chain.Raw, tasks)
	for n := range tasks {
		outs[n] = filepath.Join(t.TempDir(), fmt.Sprintf("sink-%d.bin", n))
		props := sinkConfig(outs[n])
		props[testconnectors.SinkBorrow] = strconv.FormatBool(n%2 == 0)
		task, err := p.StartSinkTask(ctxT(t), host.SinkTaskStart{Connector: "s", Task: n, Defaults: chain.ByteArrayDefaults(), Props: props})
		if err != nil {
			t.Fatal(err)
		}
		all := testRecords(1200, false)
		for i := range all {
			all[i].Topic = fmt.Sprintf("t%d", n)
		}
		puts[n] = all
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < len(all); i += 100 + 50*n {
				if _, err := task.Put(ctxT(t), all[i:min(len(all), i+100+50*n)]); err != nil {
					errs <- fmt.Errorf("task %d: %w", n, err)
					return
				}
			}
			errs <- task.Stop(ctxT(t))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for n := range tasks {
		verifySinkFile(t, outs[n], puts[n])
	}
}

// TestDataChannelViolations: a plugin that breaks the data channel's
// framing fails the task with ErrProtocol and a message saying what it
// did; the process still answers control calls and later tasks fail
// clearly instead of hanging.
func TestDataChannelViolations(t *testing.T) {
	cases := map[string]string{
		"data-nohello":   "does not start with the connectd hello",
		"data-oversized": "frame of 1073741824 bytes exceeds the limit",
		"data-badtype":   "unknown frame type 238",
		"data-badmsg":    "malformed source response",
	}
	for mode, want := range cases {
		t.Run(mode, func(t *testing.T) {
			_, p := launch(t, mode, host.LaunchOptions{CallTimeout: 20 * 1e9})
			_, err := p.StartSourceTask(ctxT(t), host.SourceTaskStart{Connector: "r", Defaults: chain.ByteArrayDefaults(), Props: map[string]string{}})
			if !errors.Is(err, host.ErrProtocol) || !strings.Contains(err.Error(), want) {
				t.Fatalf("start against %s: %v", mode, err)
			}
			t.Log(err)
			if _, err := p.Spec(ctxT(t)); err != nil {
				t.Fatalf("control calls after a data channel violation: %v", err)
			}
			if mode != "data-badmsg" { // the channel itself is broken
				_, err := p.StartSourceTask(ctxT(t), host.SourceTaskStart{Connector: "r", Defaults: chain.ByteArrayDefaults(), Props: map[string]string{}})
				if !errors.Is(err, host.ErrProtocol) {
					t.Fatalf("a second task on the broken channel: %v", err)
				}
			}
		})
	}
}

// TestPluginDeathFailsPutPromptly: a Put waiting for a plugin that is then
// killed fails with the exit (and its stderr tail), not after the reply
// timeout.
func TestPluginDeathFailsPutPromptly(t *testing.T) {
	_, p := launch(t, "sink", host.LaunchOptions{CallTimeout: 10 * 60 * 1e9})
	props := sinkConfig("discard")
	props["hang.put"] = "true"
	task, err := p.StartSinkTask(ctxT(t), host.SinkTaskStart{Connector: "s", Defaults: chain.ByteArrayDefaults(), Props: props})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := task.Put(ctxT(t), testRecords(100, false))
		done <- err
	}()
	waitFor(t, func() bool { // the put reached the task
		fams, err := p.Gather(ctxT(t))
		if err != nil {
			return false
		}
		for _, f := range fams {
			if f.GetName() == "testsink_puts_total" {
				return len(f.GetMetric()) > 0 && f.GetMetric()[0].GetCounter().GetValue() == 1
			}
		}
		return false
	})
	plugintest.Kill(t, p)
	err = <-done
	var exit *host.ExitError
	if !errors.As(err, &exit) || errors.Is(err, host.ErrTimeout) || exit.State != "signal: killed" {
		t.Fatalf("Put when the plugin died: %v", err)
	}
}

// TestRecordsAboveMessageLimit: with a small message limit, a 16 MiB
// record is refused clearly in both directions and the task goes on.
func TestRecordsAboveMessageLimit(t *testing.T) {
	opts := host.LaunchOptions{MaxMessageBytes: 4 << 20}
	t.Run("put", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "sink.bin")
		_, p := launch(t, "sink", opts)
		task, err := p.StartSinkTask(ctxT(t), host.SinkTaskStart{Connector: "s", Defaults: chain.ByteArrayDefaults(), Props: sinkConfig(out)})
		if err != nil {
			t.Fatal(err)
		}
		recs := testRecords(20, true) // record 10 has 16 MiB
		if _, err := task.Put(ctxT(t), recs); err == nil || !strings.Contains(err.Error(), "raise MaxMessageBytes") {
			t.Fatalf("put of a 16 MiB record with a 4 MiB limit: %v", err)
		}
		small := testRecords(10, false)
		if _, err := task.Put(ctxT(t), small); err != nil {
			t.Fatal(err)
		}
		if err := task.Stop(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		verifySinkFile(t, out, small)
	})
	t.Run("poll", func(t *testing.T) {
		_, p := launch(t, "source", opts)
		task, err := p.StartSourceTask(ctxT(t), host.SourceTaskStart{Connector: "src", Defaults: chain.ByteArrayDefaults(),
			Props: map[string]string{"topic": "t", "records": "4", "batch": "4", "big.every": "2"}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := task.Next(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		if b.Polled != 4 || len(b.Records) != 2 || len(b.Failures) != 2 || !strings.Contains(b.Failures[0].Message, "exceeds the plugin message limit") ||
			string(b.Failures[1].SourceOffset) != `{"i":3}` {
			t.Fatalf("batch: polled %d, %d records, failures %+v", b.Polled, len(b.Records), b.Failures)
		}
		if err := task.Stop(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	})
}
