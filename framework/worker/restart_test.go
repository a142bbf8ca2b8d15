package worker

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// A plugin crash whose abort leaves the transactional producer fatally
// broken without fencing (the chaos soak saw INVALID_TXN_STATE from the
// abort right after a broker restart) must be classified as a fatal
// producer error that the worker may restart when it still owns the task —
// not as a failure that stops the task for good. The producer is a real
// librdkafka one; TestFatalError raises the fatal error inside it, as the
// broker's answer did.
func TestClassifyFatalProducerError(t *testing.T) {
	tests := []struct {
		name          string
		code          kafka.ErrorCode
		fenced, fatal bool
	}{
		{"invalid transaction state", kafka.ErrInvalidTxnState, false, true},
		{"fenced by a newer instance", kafka.ErrProducerFenced, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := kafka.NewProducer(&kafka.ConfigMap{
				"bootstrap.servers": "127.0.0.1:1", // never contacted
				"transactional.id":  "restart-test",
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.Close)
			if code := p.TestFatalError(tc.code, "raised by the test"); code != kafka.ErrNoError {
				t.Fatalf("TestFatalError: %v", code)
			}
			e := &eosTask{r: &sourceRunner{id: TaskID{Connector: "c", Task: 0}}, p: p, txID: "restart-test"}
			got := e.classify(errors.New("plugin exited unexpectedly: signal: killed"))
			var nr *noRestartError
			if !errors.As(got, &nr) {
				t.Fatalf("classify = %v (%T), want a noRestartError", got, got)
			}
			if nr.fenced != tc.fenced || nr.fatal != tc.fatal {
				t.Fatalf("fenced=%v fatal=%v, want fenced=%v fatal=%v (%v)", nr.fenced, nr.fatal, tc.fenced, tc.fatal, got)
			}
		})
	}
}

// autoRestart restarts a fenced or fatally failed exactly-once task only
// while the cluster's latest assignment still gives it to this worker;
// other failures restart as usual, and DisableAutoRestart wins.
func TestAutoRestartAsksOwner(t *testing.T) {
	errOwner := errors.New("config topic unreadable")
	plain := errors.New("plugin exited")
	fenced := &noRestartError{err: errors.New("fenced"), fenced: true}
	fatal := &noRestartError{err: errors.New("fatal"), fatal: true}
	other := &noRestartError{err: errors.New("must not restart")}
	tests := []struct {
		name    string
		err     error
		owns    func(context.Context, TaskID) (bool, error)
		disable bool
		want    bool
	}{
		{"plain failure", plain, nil, false, true},
		{"plain failure, restarts disabled", plain, nil, true, false},
		{"fatal, still owned", fatal, ownsReply(true, nil), false, true},
		{"fatal, owned elsewhere", fatal, ownsReply(false, nil), false, false},
		{"fatal, ownership unknown", fatal, ownsReply(false, errOwner), false, false},
		{"fatal, no owner check", fatal, nil, false, false},
		{"fatal, still owned, restarts disabled", fatal, ownsReply(true, nil), true, false},
		{"fenced, still owned", fenced, ownsReply(true, nil), false, true},
		{"fenced, owned elsewhere", fenced, ownsReply(false, nil), false, false},
		{"other no-restart failure, still owned", other, ownsReply(true, nil), false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := &taskRuntime{
				w:   &Worker{cfg: Config{OwnsTask: tc.owns, DisableAutoRestart: tc.disable}},
				id:  TaskID{Connector: "c", Task: 1},
				log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			}
			if got, _ := rt.autoRestart(context.Background(), tc.err); got != tc.want {
				t.Fatalf("autoRestart = %v, want %v", got, tc.want)
			}
		})
	}
}

func ownsReply(owns bool, err error) func(context.Context, TaskID) (bool, error) {
	return func(context.Context, TaskID) (bool, error) { return owns, err }
}
