package aerofake_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	as "github.com/aerospike/aerospike-client-go/v7"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
	"github.com/connectd/connectd/connectors/aerospike/aerotest"
)

// startServer starts a server for one test and closes it at cleanup.
func startServer(t testing.TB, cfg aerofake.Config) *aerofake.Server {
	t.Helper()
	if _, ok := externalCluster(t); ok {
		t.Skip("needs the test server (its internals, its configuration or raw-protocol access); skipped against the external cluster")
	}
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
	k, err := as.NewKey(nsName(t, ns), setName(t, set), key)
	if err != nil {
		t.Fatalf("NewKey: %v", err)
	}
	return k
}

// externalCluster is the cluster named by AEROSPIKE_HOSTS (package
// aerotest), if any: the client-level conformance tests then check the
// real server's answers instead of this server's.
func externalCluster(t testing.TB) (aerotest.External, bool) {
	t.Helper()
	ext, ok, err := aerotest.FromEnv(os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	return ext, ok
}

// testClient is a client for a test that talks to the server through the
// client only: to the external cluster when one is named (a Community
// Edition one: these tests hold CE 8.1's answers), else to a new test
// server with namespaces "test" and "ttl". Keys and sets go through
// mustKey, keys, nsName and setName, so that the test's sets are its own.
func testClient(t testing.TB) *as.Client {
	t.Helper()
	ext, ok := externalCluster(t)
	if !ok {
		_, c := testServer(t)
		return c
	}
	policy := as.NewClientPolicy()
	policy.Timeout = 10 * time.Second
	policy.User, policy.Password = ext.User, ext.Password
	hosts := make([]*as.Host, len(ext.Hosts))
	for i, h := range ext.Hosts {
		hosts[i] = as.NewHost(h.Name, h.Port)
	}
	c, err := as.NewClientWithPolicyAndHost(policy, hosts...)
	if err != nil {
		t.Fatalf("connect to the external cluster %s: %v", ext.HostList(), err)
	}
	t.Cleanup(c.Close)
	node := c.GetNodes()[0]
	info, err := node.RequestInfo(as.NewInfoPolicy(), "edition", "sets/"+ext.Namespace)
	if err != nil {
		t.Fatalf("info: %v", err)
	}
	if ed := info["edition"]; !strings.Contains(ed, "Community") {
		t.Skipf("these tests hold Community Edition 8.1's answers; the external cluster is %q", ed)
	}
	prefix := setPrefix(t)
	t.Cleanup(func() {
		// The sets this test wrote to, found by their prefix.
		info, err := node.RequestInfo(as.NewInfoPolicy(), "sets/"+ext.Namespace)
		if err != nil {
			return
		}
		for _, entry := range strings.Split(info["sets/"+ext.Namespace], ";") {
			for _, kv := range strings.Split(entry, ":") {
				if set, ok := strings.CutPrefix(kv, "set="); ok && strings.HasPrefix(set, prefix) {
					_ = c.Truncate(nil, ext.Namespace, set, nil)
				}
			}
		}
	})
	return c
}

// setPrefix names the sets of one top-level test on an external cluster:
// the test's name and the process id keep runs and tests apart.
func setPrefix(t testing.TB) string {
	name, _, _ := strings.Cut(t.Name(), "/")
	name = strings.TrimPrefix(name, "Test")
	if len(name) > 24 {
		name = name[:24]
	}
	return name + "_" + strconv.FormatInt(int64(os.Getpid()), 36) + "_"
}

// nsName maps a test's namespace: unchanged on the test server; "test" is
// the external cluster's namespace, and a test that needs another one
// (such as "ttl", which allows TTLs) is skipped there.
func nsName(t testing.TB, ns string) string {
	t.Helper()
	ext, ok := externalCluster(t)
	switch {
	case !ok:
		return ns
	case ns == "test":
		return ext.Namespace
	}
	t.Skipf("needs the test server's namespace %q; the external cluster has one namespace", ns)
	return ""
}

// setName maps a test's set: unchanged on the test server, prefixed with
// the test's own prefix on an external cluster.
func setName(t testing.TB, set string) string {
	t.Helper()
	if _, ok := externalCluster(t); !ok {
		return set
	}
	return setPrefix(t) + set
}
