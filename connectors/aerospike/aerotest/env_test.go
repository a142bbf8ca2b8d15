package aerotest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	as "github.com/aerospike/aerospike-client-go/v7"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
)

func TestFromEnv(t *testing.T) {
	for _, tt := range []struct {
		name    string
		env     map[string]string
		want    External
		ok      bool
		wantErr string
	}{
		{name: "unset", env: map[string]string{}},
		{name: "blank hosts", env: map[string]string{EnvHosts: "  "}},
		{name: "one host, default namespace", env: map[string]string{EnvHosts: "db1:3000"}, ok: true,
			want: External{Hosts: []Host{{"db1", 3000}}, Namespace: "test"}},
		{name: "hosts, namespace, credentials", ok: true,
			env:  map[string]string{EnvHosts: "db1:3000, [fd00::1]:3100", EnvNamespace: "scratch", EnvUser: "app", EnvPassword: "pw"},
			want: External{Hosts: []Host{{"db1", 3000}, {"fd00::1", 3100}}, Namespace: "scratch", User: "app", Password: "pw"}},
		{name: "no port", env: map[string]string{EnvHosts: "db1"}, wantErr: "not host:port"},
		{name: "port not a number", env: map[string]string{EnvHosts: "db1:x"}, wantErr: "not in 1..65535"},
		{name: "port zero", env: map[string]string{EnvHosts: "db1:0"}, wantErr: "not in 1..65535"},
		{name: "port too large", env: map[string]string{EnvHosts: "db1:65536"}, wantErr: "not in 1..65535"},
		{name: "empty entry", env: map[string]string{EnvHosts: "db1:3000,"}, wantErr: "empty host"},
		{name: "no host name", env: map[string]string{EnvHosts: ":3000"}, wantErr: "no host name"},
		{name: "bare IPv6", env: map[string]string{EnvHosts: "fd00::1"}, wantErr: "IPv6 in brackets"},
		{name: "namespace too long", env: map[string]string{EnvHosts: "db1:3000", EnvNamespace: strings.Repeat("n", 32)}, wantErr: "not a namespace name"},
		{name: "user without password", env: map[string]string{EnvHosts: "db1:3000", EnvUser: "app"}, wantErr: "together"},
		{name: "password without user", env: map[string]string{EnvHosts: "db1:3000", EnvPassword: "pw"}, wantErr: "together"},
		{name: "namespace without hosts", env: map[string]string{EnvNamespace: "scratch"}, wantErr: "AEROSPIKE_HOSTS is not"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := FromEnv(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, ErrBadEnv) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want ErrBadEnv with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ok != tt.ok || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("FromEnv = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestHostList(t *testing.T) {
	e := External{Hosts: []Host{{"db1", 3000}, {"fd00::1", 3100}}}
	if got, want := e.HostList(), "db1:3000,[fd00::1]:3100"; got != want {
		t.Fatalf("HostList = %q, want %q", got, want)
	}
}

// Without the variable a test gets an in-process test server and its sets
// unchanged.
func TestStartTestServer(t *testing.T) {
	clearEnv(t)
	c := Start(t, aerofake.Config{MaxRecordSize: 4096})
	if c.External() || c.Fake() == nil || c.Hosts != c.Fake().Addr() || c.Namespace != "test" {
		t.Fatalf("cluster = %+v, want the test server", c)
	}
	if c.Set("s") != "s" {
		t.Fatalf("Set(s) = %q on the test server", c.Set("s"))
	}
	if got := c.MaxRecordSize(t); got != 4096 {
		t.Fatalf("MaxRecordSize = %d, want 4096", got)
	}
}

// With the variable set, the same calls go to the named cluster (here a
// test server standing in for it): sets prefixed per test, reads through
// the client with values normalised, the namespace's limits from info, and
// the sets truncated at the end.
func TestStartExternal(t *testing.T) {
	srv, err := aerofake.Start(context.Background(), aerofake.Config{
		MaxRecordSize: 8192, Namespaces: []aerofake.NamespaceConfig{{Name: "scratch", AllowTTL: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	clearEnv(t)
	t.Setenv(EnvHosts, srv.Addr())
	t.Setenv(EnvNamespace, "scratch")

	var set string
	t.Run("inner", func(t *testing.T) {
		c := Start(t, aerofake.Config{})
		if !c.External() || c.Fake() != nil || c.Namespace != "scratch" {
			t.Fatalf("cluster = %+v, want external", c)
		}
		set = c.Set("s")
		if !strings.HasPrefix(set, "StartExternal_inner_") || !strings.HasSuffix(set, "_s") || c.Set("s") != set {
			t.Fatalf("Set(s) = %q", set)
		}
		other := Start(t, aerofake.Config{})
		if other.Set("s") == set {
			t.Fatal("two clusters of one test share a set")
		}
		k, _ := as.NewKey("scratch", set, "k")
		wp := as.NewWritePolicy(0, 0)
		wp.SendKey = true
		if err := c.Client(t).Put(wp, k, as.BinMap{"n": 7, "m": map[any]any{"b": 2, "a": []any{1, "x"}}}); err != nil {
			t.Fatal(err)
		}
		r := c.Get(t, "s", "k")
		want := map[string]any{"n": int64(7), "m": map[any]any{"a": []any{int64(1), "x"}, "b": int64(2)}}
		if r == nil || r.Key != nil || !reflect.DeepEqual(r.Bins, want) || r.Generation != 1 || r.TTL != NeverExpires {
			t.Fatalf("Get = %+v, want bins %v, no key (a get does not show the stored one), generation 1, no expiry", r, want)
		}
		if c.Get(t, "s", "absent") != nil {
			t.Fatal("Get of an absent key is not nil")
		}
		if got := c.Scan(t, "s"); len(got) != 1 || got[0].Key != "k" || !reflect.DeepEqual(got[0].Bins, want) {
			t.Fatalf("Scan = %+v", got)
		}
		if got := c.MaxRecordSize(t); got != 8192 {
			t.Fatalf("MaxRecordSize = %d, want the server's 8192", got)
		}
		if !c.AllowsTTL(t) {
			t.Fatal("AllowsTTL = false on a namespace that allows TTLs")
		}
	})
	if n := srv.Count("scratch", set); n != 0 {
		t.Fatalf("%d records left in %s after the test", n, set)
	}
}

func TestStartMalformedEnvFails(t *testing.T) {
	clearEnv(t)
	t.Setenv(EnvHosts, "db1")
	ft := &fatalTB{TB: t}
	func() {
		defer func() { _ = recover() }()
		Start(ft, aerofake.Config{})
	}()
	if !strings.Contains(ft.msg, "not host:port") {
		t.Fatalf("Start with a malformed variable: fatal %q", ft.msg)
	}
}

// clearEnv unsets the variables for one test, whatever the run was given.
func clearEnv(t *testing.T) {
	for _, k := range []string{EnvHosts, EnvNamespace, EnvUser, EnvPassword} {
		t.Setenv(k, "")
	}
}

// fatalTB records Fatal instead of ending the test.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	panic("fatal")
}

func (f *fatalTB) Helper() {}
