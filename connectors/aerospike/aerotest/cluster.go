package aerotest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	as "github.com/aerospike/aerospike-client-go/v7"
	"github.com/aerospike/aerospike-client-go/v7/types"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
)

// defaultMaxRecordSize is CE 8.1's default max-record-size (1 MiB), used
// when the namespace does not report one.
const defaultMaxRecordSize = 1 << 20

// Cluster is what one test runs against.
type Cluster struct {
	// Hosts is the aerospike.hosts property for the sink.
	Hosts string
	// Namespace is the namespace to write to.
	Namespace string
	// User and Password are the credentials, empty when none are needed.
	User, Password string
	client         *as.Client
	hosts          []Host
	owner          testing.TB // the test that started the cluster: the client lives as long

	fake      *aerofake.Server
	fakeCfg   aerofake.Config
	setPrefix string

	mu   sync.Mutex
	sets map[string]bool
}

// Start returns the cluster for t: the external one when EnvHosts is set,
// else an in-process test server started with cfg. It fails t when the
// environment is malformed or the cluster cannot be reached, and cleans up
// (closes the server, or truncates the test's sets) when t ends. An
// external cluster is used as it is configured, cfg is for the test server
// only: tests ask the cluster for what they depend on (MaxRecordSize,
// AllowsTTL).
func Start(t testing.TB, cfg aerofake.Config) *Cluster {
	t.Helper()
	ext, ok, err := FromEnv(os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{sets: map[string]bool{}, fakeCfg: cfg, owner: t}
	if !ok {
		srv, err := aerofake.Start(context.Background(), cfg)
		if err != nil {
			t.Fatalf("start the Aerospike test server: %v", err)
		}
		t.Cleanup(func() { _ = srv.Close() })
		c.fake, c.Hosts, c.Namespace = srv, srv.Addr(), "test"
		if len(cfg.Namespaces) > 0 {
			c.Namespace = cfg.Namespaces[0].Name
		}
		c.hosts = []Host{hostOf(srv)}
		return c
	}
	c.Hosts, c.Namespace, c.User, c.Password = ext.HostList(), ext.Namespace, ext.User, ext.Password
	c.setPrefix = setPrefix(t)
	c.hosts = ext.Hosts
	// Connect now: a cluster that cannot be reached fails the test here,
	// not in the middle of it.
	c.Client(t)
	t.Cleanup(c.truncateSets)
	return c
}

func hostOf(srv *aerofake.Server) Host {
	name, port := srv.Host()
	return Host{Name: name, Port: port}
}

func connect(t testing.TB, hosts []Host, user, password string) *as.Client {
	t.Helper()
	policy := as.NewClientPolicy()
	policy.Timeout = 10 * time.Second
	policy.User, policy.Password = user, password
	ah := make([]*as.Host, len(hosts))
	for i, h := range hosts {
		ah[i] = as.NewHost(h.Name, h.Port)
	}
	client, err := as.NewClientWithPolicyAndHost(policy, ah...)
	if err != nil {
		t.Fatalf("connect to Aerospike at %v: %v", hosts, err)
	}
	return client
}

// setPrefix makes the test's sets its own on a shared cluster: a short
// form of the test name (readable in asadm) and a random part (unique
// across runs and parallel tests).
func setPrefix(t testing.TB) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, strings.TrimPrefix(t.Name(), "Test"))
	if len(name) > 24 {
		name = name[:24]
	}
	return name + "_" + hex.EncodeToString(b[:]) + "_"
}

// Client is a plain client for reading results, connected on first use
// (on the test server, a client connected from the start would count in
// its connection statistics).
func (c *Cluster) Client(t testing.TB) *as.Client {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.client == nil {
		c.client = connect(t, c.hosts, c.User, c.Password)
		c.owner.Cleanup(c.client.Close)
	}
	return c.client
}

// External reports whether the cluster is an external one.
func (c *Cluster) External() bool { return c.fake == nil }

// Fake is the test server, nil in external mode.
func (c *Cluster) Fake() *aerofake.Server { return c.fake }

// NeedFake returns the test server, or skips t with why logged in external
// mode: for tests whose point is the server's internals (fault injection).
func (c *Cluster) NeedFake(t testing.TB, why string) *aerofake.Server {
	t.Helper()
	if c.fake == nil {
		t.Skipf("needs the test server (%s); skipped against the external cluster", why)
	}
	return c.fake
}

// Set maps a test's set name to the one it uses on this cluster: unchanged
// on the test server, prefixed with the test's own prefix on an external
// cluster. Placeholders such as ${topic} survive, so Set("p_${topic}")
// configures the sink and Set("p_orders") reads what it wrote.
func (c *Cluster) Set(name string) string {
	if c.fake != nil {
		return name
	}
	// The prefix is at most 32 bytes, so names up to 31 bytes stay valid;
	// a longer name stays too long, as tests of the validation need.
	full := c.setPrefix + name
	c.mu.Lock()
	c.sets[full] = true
	c.mu.Unlock()
	return full
}

func (c *Cluster) truncateSets() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for set := range c.sets {
		if strings.Contains(set, "${") {
			continue
		}
		// Truncate is asynchronous on the server; nothing reads these sets
		// again, so there is nothing to wait for.
		_ = c.client.Truncate(nil, c.Namespace, set, nil)
	}
}

// Record is a record read through the client, with values normalised to
// the types the test server's inspection API uses: integers as int64,
// maps as map[any]any (key-ordered maps included).
type Record struct {
	// Key is the user key the server stored, nil unless the writer sent
	// it. Set by Scan only: a get answers with the key it was asked for,
	// which proves nothing about what is stored.
	Key        any
	Digest     [20]byte
	Bins       map[string]any
	Generation uint32
	// TTL is the remaining time to live in seconds; NeverExpires when the
	// record does not expire.
	TTL uint32
}

// NeverExpires is Record.TTL of a record without expiry.
const NeverExpires = ^uint32(0)

// Get reads set/key in the cluster's namespace through the client; nil
// when the record does not exist. set is passed through Set.
func (c *Cluster) Get(t testing.TB, set string, key any) *Record {
	t.Helper()
	k, err := as.NewKey(c.Namespace, c.Set(set), key)
	if err != nil {
		t.Fatalf("key %v: %v", key, err)
	}
	r, err := c.Client(t).Get(nil, k)
	if err != nil {
		if err.Matches(types.KEY_NOT_FOUND_ERROR) {
			return nil
		}
		t.Fatalf("get %s/%s/%v: %v", c.Namespace, c.Set(set), key, err)
	}
	out := toRecord(r)
	out.Key = nil
	return out
}

// Scan reads every record of set through the client. set is passed
// through Set.
func (c *Cluster) Scan(t testing.TB, set string) []Record {
	t.Helper()
	rs, err := c.Client(t).ScanAll(nil, c.Namespace, c.Set(set))
	if err != nil {
		t.Fatalf("scan %s/%s: %v", c.Namespace, c.Set(set), err)
	}
	var out []Record
	for res := range rs.Results() {
		if res.Err != nil {
			t.Fatalf("scan %s/%s: %v", c.Namespace, c.Set(set), res.Err)
		}
		out = append(out, *toRecord(res.Record))
	}
	return out
}

func toRecord(r *as.Record) *Record {
	out := &Record{Bins: make(map[string]any, len(r.Bins)), Generation: r.Generation, TTL: r.Expiration}
	if r.Key != nil {
		copy(out.Digest[:], r.Key.Digest())
		if v := r.Key.Value(); v != nil {
			out.Key = normalise(v.GetObject())
		}
	}
	for k, v := range r.Bins {
		out.Bins[k] = normalise(v)
	}
	return out
}

func normalise(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalise(e)
		}
		return out
	case map[any]any:
		out := make(map[any]any, len(x))
		for k, e := range x {
			out[normalise(k)] = normalise(e)
		}
		return out
	case []as.MapPair:
		out := make(map[any]any, len(x))
		for _, p := range x {
			out[normalise(p.Key)] = normalise(p.Value)
		}
		return out
	}
	return v
}

// namespaceInfo is the namespace's info answer as name → value.
func (c *Cluster) namespaceInfo(t testing.TB) map[string]string {
	t.Helper()
	nodes := c.Client(t).GetNodes()
	if len(nodes) == 0 {
		t.Fatal("the Aerospike client knows no node")
	}
	cmd := "namespace/" + c.Namespace
	res, err := nodes[0].RequestInfo(as.NewInfoPolicy(), cmd)
	if err != nil {
		t.Fatalf("info %s: %v", cmd, err)
	}
	out := map[string]string{}
	for _, kv := range strings.Split(res[cmd], ";") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}

// MaxRecordSize is the largest record the namespace stores, in bytes, as
// the server reports it (CE 8.1's default of 1 MiB when it reports none).
func (c *Cluster) MaxRecordSize(t testing.TB) int {
	t.Helper()
	if c.fake != nil {
		if c.fakeCfg.MaxRecordSize > 0 {
			return c.fakeCfg.MaxRecordSize
		}
		return defaultMaxRecordSize
	}
	if n, err := strconv.Atoi(c.namespaceInfo(t)["max-record-size"]); err == nil && n > 0 {
		return n
	}
	return defaultMaxRecordSize
}

// AllowsTTL reports whether the namespace accepts writes with a TTL: it
// refuses them with FAIL_FORBIDDEN (22) while nsup is off unless
// allow-ttl-without-nsup is set.
func (c *Cluster) AllowsTTL(t testing.TB) bool {
	t.Helper()
	info := c.namespaceInfo(t)
	if p, err := strconv.Atoi(info["nsup-period"]); err == nil && p > 0 {
		return true
	}
	return info["allow-ttl-without-nsup"] == "true"
}
