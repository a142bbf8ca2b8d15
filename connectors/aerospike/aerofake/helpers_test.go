package aerofake_test

import (
	"context"
	"testing"
	"time"

	as "github.com/aerospike/aerospike-client-go/v7"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
)

// startServer starts a server for one test and closes it at cleanup.
func startServer(t testing.TB, cfg aerofake.Config) *aerofake.Server {
	t.Helper()
	srv, err := aerofake.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("start aerofake: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("close aerofake: %v", err)
		}
		if p := srv.Stats().Panics; p != 0 {
			t.Errorf("server recorded %d panics", p)
		}
	})
	return srv
}

// newClient connects the real client to srv and closes it at cleanup.
func newClient(t testing.TB, srv *aerofake.Server) *as.Client {
	t.Helper()
	host, port := srv.Host()
	policy := as.NewClientPolicy()
	policy.Timeout = 5 * time.Second
	c, err := as.NewClientWithPolicyAndHost(policy, as.NewHost(host, port))
	if err != nil {
		t.Fatalf("connect client to %s: %v", srv.Addr(), err)
	}
	t.Cleanup(c.Close)
	return c
}

// testServer starts a server with namespaces "test" (stock TTL rules) and
// "ttl" (TTL allowed) and returns it with a connected client.
func testServer(t testing.TB) (*aerofake.Server, *as.Client) {
	t.Helper()
	srv := startServer(t, aerofake.Config{Namespaces: []aerofake.NamespaceConfig{
		{Name: "test"},
		{Name: "ttl", AllowTTL: true},
	}})
	return srv, newClient(t, srv)
}

func mustKey(t testing.TB, ns, set string, key any) *as.Key {
	t.Helper()
	k, err := as.NewKey(ns, set, key)
	if err != nil {
		t.Fatalf("NewKey: %v", err)
	}
	return k
}
