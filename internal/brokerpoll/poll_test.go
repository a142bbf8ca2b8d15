//go:build linux && cgo

package brokerpoll

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// emptyPipe returns the read end of a pipe with nothing in it and
// functions that make it readable and empty again.
func emptyPipe(t *testing.T) (fd int, fill, drain func()) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	fill = func() {
		if _, err := w.Write([]byte{1}); err != nil {
			t.Error(err)
		}
	}
	drain = func() {
		if _, err := r.Read(make([]byte, 1)); err != nil {
			t.Error(err)
		}
	}
	return int(r.Fd()), fill, drain
}

// onOneThread runs fn on a goroutine locked to its thread: the count of
// empty polls is per thread.
func onOneThread(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		fn()
	}()
	<-done
}

// setWait sets the wait for one test and turns it off after.
func setWait(t *testing.T, ms int) {
	t.Helper()
	if err := SetWaitMillis(ms); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = SetWaitMillis(0) })
}

func TestZeroTimeoutPolls(t *testing.T) {
	const wait = 1
	setWait(t, wait)
	if !Active() || WaitMillis() != wait {
		t.Fatalf("Active() = %v, WaitMillis() = %d; want true, %d", Active(), WaitMillis(), wait)
	}
	// Steps: "empty" polls the empty pipe with a zero timeout, "ready"
	// polls it with input waiting (zero timeout), "timeout" polls the
	// empty pipe with a 1 ms timeout.
	for _, tc := range []struct {
		name      string
		steps     []string
		wantWaits uint64
	}{
		{"two empty polls return at once", []string{"empty", "empty"}, 0},
		{"the third empty poll in a row waits", []string{"empty", "empty", "empty"}, 1},
		{"and every one after it", []string{"empty", "empty", "empty", "empty", "empty"}, 3},
		{"an event resets the count", []string{"empty", "ready", "empty", "empty"}, 0},
		{"a call with a timeout resets the count", []string{"empty", "empty", "timeout", "empty", "empty"}, 0},
		{"a call given the wait still returns an event at once", []string{"empty", "empty", "ready", "empty", "empty"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fd, fill, drain := emptyPipe(t)
			var waits uint64
			results := make([]int, len(tc.steps))
			elapsed := make([]time.Duration, len(tc.steps))
			onOneThread(func() {
				pollIn(fd, 1) // whatever this thread did before does not count
				before := threadWaits()
				for i, step := range tc.steps {
					timeout := 0
					switch step {
					case "ready":
						fill()
					case "timeout":
						timeout = 1
					}
					start := time.Now()
					results[i] = pollIn(fd, timeout)
					elapsed[i] = time.Since(start)
					if step == "ready" {
						drain()
					}
				}
				waits = threadWaits() - before
			})
			if waits != tc.wantWaits {
				t.Errorf("waits = %d, want %d", waits, tc.wantWaits)
			}
			nth := 0
			for i, step := range tc.steps {
				want := 0
				if step == "ready" {
					want = 1
				}
				if results[i] != want {
					t.Errorf("step %d (%s): poll returned %d, want %d", i, step, results[i], want)
				}
				// An empty poll that waited took at least the wait.
				if step == "empty" {
					nth++
				} else {
					nth = 0
				}
				if step == "empty" && nth > 2 && elapsed[i] < wait*time.Millisecond {
					t.Errorf("step %d: the wait took %v, want at least %d ms", i, elapsed[i], wait)
				}
			}
		})
	}
}

// The point of the package: librdkafka, linked statically into this test
// binary as into connectd, polls through the replacement.
func TestLibrdkafkaPollsThroughTheReplacement(t *testing.T) {
	before := Calls()
	// Nothing listens on the port: the broker thread keeps trying to
	// connect, polling its socket as it does so.
	p, err := kafka.NewProducer(&kafka.ConfigMap{
		"bootstrap.servers":                  "127.0.0.1:1",
		"reconnect.backoff.ms":               10,
		"reconnect.backoff.max.ms":           50,
		"log_level":                          0,
		"go.logs.channel.enable":             false,
		"go.delivery.reports":                false,
		"socket.connection.setup.timeout.ms": 1000,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	deadline := time.Now().Add(30 * time.Second)
	for Calls() == before {
		if time.Now().After(deadline) {
			t.Fatal("librdkafka made no poll call through the replacement in 30 s: it binds to the C library's poll")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Off (the default until set), poll is the C library's: empty
// zero-timeout polls in a row return at once, every one.
func TestWaitOffByDefault(t *testing.T) {
	if WaitMillis() != 0 {
		t.Fatalf("WaitMillis() = %d before any SetWaitMillis, want 0", WaitMillis())
	}
	fd, _, _ := emptyPipe(t)
	var waits uint64
	onOneThread(func() {
		before := threadWaits()
		for range 10 {
			pollIn(fd, 0)
		}
		waits = threadWaits() - before
	})
	if waits != 0 {
		t.Fatalf("%d of 10 empty polls waited with the wait off", waits)
	}
}

func TestSetWaitMillisRange(t *testing.T) {
	t.Cleanup(func() { _ = SetWaitMillis(0) })
	for _, tc := range []struct {
		ms int
		ok bool
	}{{0, true}, {1, true}, {MaxWaitMillis, true}, {-1, false}, {MaxWaitMillis + 1, false}} {
		err := SetWaitMillis(tc.ms)
		if (err == nil) != tc.ok {
			t.Errorf("SetWaitMillis(%d) = %v, want ok %v", tc.ms, err, tc.ok)
		}
		if err == nil && WaitMillis() != tc.ms {
			t.Errorf("after SetWaitMillis(%d), WaitMillis() = %d", tc.ms, WaitMillis())
		}
	}
}

// The effect the wait is for: an idempotent producer whose broker answers
// slowly (librdkafka's mock cluster, 50 ms per request) makes far fewer
// poll calls with the wait than without, while it sends the same
// messages. Without it, each partition's broker thread spins with
// zero-timeout polls while its one produce request is in flight
// (docs/librdkafka-notes.md).
func TestWaitStopsBusyPolls(t *testing.T) {
	mc, err := kafka.NewMockCluster(1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mc.Close)
	const topic, partitions = "busy", 4
	if err := mc.CreateTopic(topic, partitions, 1); err != nil {
		t.Fatal(err)
	}
	if err := mc.SetRoundtripDuration(1, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	p, err := kafka.NewProducer(&kafka.ConfigMap{
		"bootstrap.servers":      mc.BootstrapServers(),
		"enable.idempotence":     true,
		"linger.ms":              2,
		"go.delivery.reports":    false,
		"go.logs.channel.enable": false,
		"log_level":              0,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	value := make([]byte, 100)
	// pollsPerSecond produces steadily for a second and counts the
	// process's poll calls meanwhile.
	pollsPerSecond := func(waitMillis int) float64 {
		if err := SetWaitMillis(waitMillis); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = SetWaitMillis(0) })
		start, calls := time.Now(), Calls()
		for i := 0; time.Since(start) < time.Second; i++ {
			part := int32(i % partitions)
			err := p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &[]string{topic}[0], Partition: part}, Value: value}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if i%partitions == partitions-1 {
				time.Sleep(time.Millisecond)
			}
		}
		return float64(Calls()-calls) / time.Since(start).Seconds()
	}
	// Warm up (connection, producer id), then alternate so that both
	// settings see the same machine load.
	pollsPerSecond(0)
	var off, on []float64
	for range 2 {
		off = append(off, pollsPerSecond(0))
		on = append(on, pollsPerSecond(1))
	}
	if n := p.Flush(30_000); n != 0 {
		t.Fatalf("%d messages not delivered", n)
	}
	t.Logf("poll calls per second: wait off %.0f, wait 1 ms %.0f", off, on)
	for i := range off {
		if on[i]*5 > off[i] {
			t.Errorf("round %d: %.0f polls/s with the wait, %.0f without: want at most a fifth", i, on[i], off[i])
		}
	}
}
