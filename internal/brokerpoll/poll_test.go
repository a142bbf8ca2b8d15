//go:build linux && cgo

package brokerpoll

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
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

func TestZeroTimeoutPolls(t *testing.T) {
	if v := os.Getenv(EnvVar); v != "" {
		t.Fatalf("%s=%s in the test's environment; these cases expect the default", EnvVar, v)
	}
	if !Active() || NapMillis() != DefaultNapMillis {
		t.Fatalf("Active() = %v, NapMillis() = %d; want true, %d", Active(), NapMillis(), DefaultNapMillis)
	}
	// Steps: "empty" polls the empty pipe with a zero timeout, "ready"
	// polls it with input waiting (zero timeout), "timeout" polls the
	// empty pipe with a 1 ms timeout.
	for _, tc := range []struct {
		name     string
		steps    []string
		wantNaps uint64
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
			var naps uint64
			results := make([]int, len(tc.steps))
			elapsed := make([]time.Duration, len(tc.steps))
			onOneThread(func() {
				pollIn(fd, 1) // whatever this thread did before does not count
				before := threadNaps()
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
				naps = threadNaps() - before
			})
			if naps != tc.wantNaps {
				t.Errorf("naps = %d, want %d", naps, tc.wantNaps)
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
				// An empty poll that waited took at least the nap.
				if step == "empty" {
					nth++
				} else {
					nth = 0
				}
				if step == "empty" && nth > 2 && elapsed[i] < time.Duration(DefaultNapMillis)*time.Millisecond {
					t.Errorf("step %d: the nap took %v, want at least %d ms", i, elapsed[i], DefaultNapMillis)
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

// The environment variable sets the nap, read when the process loads: each
// case runs this test binary again with the variable set.
func TestNapFromEnvironment(t *testing.T) {
	if os.Getenv("BROKERPOLL_PRINT_NAP") == "1" {
		fmt.Printf("nap=%d\n", NapMillis())
		return
	}
	for _, tc := range []struct {
		value string
		want  int
	}{
		{"", DefaultNapMillis},
		{"0", 0},
		{"3", 3},
		{"25", 10},
		{"-1", DefaultNapMillis},
		{"soon", DefaultNapMillis},
	} {
		t.Run(strconv.Quote(tc.value), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^TestNapFromEnvironment$")
			cmd.Env = append(os.Environ(), "BROKERPOLL_PRINT_NAP=1", EnvVar+"="+tc.value)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if want := fmt.Sprintf("nap=%d\n", tc.want); !strings.Contains(string(out), want) {
				t.Fatalf("%s=%q: output %q, want it to contain %q", EnvVar, tc.value, out, want)
			}
		})
	}
}
