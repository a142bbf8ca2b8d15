package kafkaadmin_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/internal/kafkaadmin"
	"github.com/connectd/connectd/internal/kafkatest"
)

// refusingAddress is a loopback port nothing listens on: connections to it
// are refused, as to a broker that is down.
func refusingAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func admin(t *testing.T, bootstrap string) *kafka.AdminClient {
	t.Helper()
	a, err := kafka.NewAdminClient(&kafka.ConfigMap{"bootstrap.servers": bootstrap, "log_level": 0})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

func TestReachable(t *testing.T) {
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	t.Cleanup(cancel)
	for _, tc := range []struct {
		name      string
		bootstrap func(t *testing.T) string
		ctx       context.Context
		// wantClientErr: the error is the client's own (a timeout or
		// transport error the caller's retry rules know), not a bare
		// context error.
		wantErr, wantClientErr bool
	}{
		{name: "running cluster", bootstrap: func(t *testing.T) string { return kafkatest.Bootstrap(t) }, ctx: t.Context()},
		{name: "refused connections", bootstrap: refusingAddress, ctx: t.Context(), wantErr: true, wantClientErr: true},
		{name: "context already over", bootstrap: func(t *testing.T) string { return kafkatest.Bootstrap(t) }, ctx: expired, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(tc.ctx, 3*time.Second)
			defer cancel()
			err := kafkaadmin.Reachable(ctx, admin(t, tc.bootstrap(t)))
			if (err != nil) != tc.wantErr {
				t.Fatalf("Reachable: %v, want error %v", err, tc.wantErr)
			}
			if !tc.wantErr {
				return
			}
			var ke kafka.Error
			if got := errors.As(err, &ke); got != tc.wantClientErr {
				t.Errorf("Reachable: %v; a kafka.Error inside: %v, want %v", err, got, tc.wantClientErr)
			}
		})
	}
}
