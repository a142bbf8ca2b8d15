package aerospike

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
	"github.com/connectd/connectd/framework/sdk"
)

// validateAll validates like the framework does: the ConfigDef (types,
// required keys, validators), then Connector.Validate. It returns the
// error messages per key.
func validateAll(t *testing.T, props map[string]string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, cv := range configDef().Validate(props) {
		if len(cv.Errors) > 0 {
			out[cv.Name] = append(out[cv.Name], cv.Errors...)
		}
	}
	for _, fe := range (&Connector{}).Validate(context.Background(), props) {
		out[fe.Key] = append(out[fe.Key], fe.Message)
	}
	return out
}

// closedPort returns a loopback address nobody listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

func TestValidate(t *testing.T) {
	srv := startServer(t, aerofake.Config{Namespaces: []aerofake.NamespaceConfig{{Name: "test"}, {Name: "bar"}}})
	secured := startServer(t, aerofake.Config{EnterpriseSecurity: &aerofake.Security{Users: map[string]string{"app": "secret"}}})
	dir := t.TempDir()
	certFile := filepath.Join(dir, "cert.pem")
	if err := os.WriteFile(certFile, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		props   map[string]string
		key     string // "" = valid
		message string // substring of the error on key
		// fake marks rows that need the test server's configuration (its
		// edition, a second namespace).
		fake bool
	}{
		{name: "valid", props: baseProps(srv)},
		{name: "user on Community Edition", props: baseProps(srv, KeyUser, "app", KeyPassword, "secret"), key: KeyUser, message: "SECURITY_NOT_SUPPORTED", fake: true},
		{name: "user on Enterprise with security", props: baseProps(secured, KeyUser, "app", KeyPassword, "secret"), fake: true},
		{name: "valid increment on other namespace", props: baseProps(srv, KeyNamespace, "bar", KeyWriteMode, "increment", KeySet, "${topic}"), fake: true},
		{name: "port not a number", props: baseProps(srv, KeyHosts, "127.0.0.1:notaport"), key: KeyHosts, message: "invalid port"},
		{name: "bare IPv6", props: baseProps(srv, KeyHosts, "::1"), key: KeyHosts, message: "brackets"},
		{name: "empty hosts", props: baseProps(srv, KeyHosts, ""), key: KeyHosts, message: "at least one"},
		{name: "port out of range", props: baseProps(srv, KeyHosts, "127.0.0.1:70000"), key: KeyHosts, message: "invalid port"},
		{name: "unreachable hosts", props: baseProps(srv, KeyHosts, closedPort(t)), key: KeyHosts, message: "cannot reach the Aerospike cluster"},
		{name: "unknown namespace", props: baseProps(srv, KeyNamespace, "nope"), key: KeyNamespace, message: `namespace "nope" does not exist`},
		{name: "missing namespace", props: func() map[string]string { p := baseProps(srv); delete(p, KeyNamespace); return p }(), key: KeyNamespace, message: "Missing required"},
		{name: "namespace too long", props: baseProps(srv, KeyNamespace, strings.Repeat("n", 32)), key: KeyNamespace, message: "at most 31"},
		{name: "bad write mode", props: baseProps(srv, KeyWriteMode, "upsert"), key: KeyWriteMode, message: "upsert"},
		{name: "increment without effectively once", props: baseProps(srv, KeyWriteMode, "increment", KeyEffectivelyOne, "false"), key: KeyWriteMode, message: "effectively.once=true"},
		{name: "rename to long bin", props: baseProps(srv, KeyBinsRename, "a:averyveryverylongbin"), key: KeyBinsRename, message: "at most 15 bytes"},
		{name: "rename not a pair", props: baseProps(srv, KeyBinsRename, "abc"), key: KeyBinsRename, message: "not field:bin"},
		{name: "rename onto positions bin", props: baseProps(srv, KeyBinsRename, "a:kafka_pos"), key: KeyBinsRename, message: "positions.bin"},
		{name: "two renames onto one bin", props: baseProps(srv, KeyBinsRename, "a:x,b:x"), key: KeyBinsRename, message: "both renamed"},
		{name: "include long field", props: baseProps(srv, KeyBinsInclude, "short,a_field_name_too_long"), key: KeyBinsInclude, message: "at most 15 bytes"},
		{name: "include long field renamed", props: baseProps(srv, KeyBinsInclude, "a_field_name_too_long", KeyBinsRename, "a_field_name_too_long:short")},
		{name: "positions bin too long", props: baseProps(srv, KeyPositionsBin, "kafka_positions_x"), key: KeyPositionsBin, message: "at most 15 bytes"},
		{name: "key field missing", props: baseProps(srv, KeyKeySource, "value_field"), key: KeyKeyField, message: "needs key.field"},
		{name: "key header missing", props: baseProps(srv, KeyKeySource, "header"), key: KeyKeyHeader, message: "needs key.header"},
		{name: "bad key source", props: baseProps(srv, KeyKeySource, "offset"), key: KeyKeySource, message: "offset"},
		{name: "bad key type", props: baseProps(srv, KeyKeyType, "float"), key: KeyKeyType, message: "float"},
		{name: "ttl too small", props: baseProps(srv, KeyTTL, "-3"), key: KeyTTL, message: "-2 (keep)"},
		{name: "ttl too large", props: baseProps(srv, KeyTTL, "315360001"), key: KeyTTL, message: "315360000"},
		{name: "ttl not a number", props: baseProps(srv, KeyTTL, "1h"), key: KeyTTL, message: "LONG"},
		{name: "unknown set placeholder", props: baseProps(srv, KeySet, "${partition}"), key: KeySet, message: "placeholders are ${topic}"},
		{name: "set too long", props: baseProps(srv, KeySet, strings.Repeat("s", 64)), key: KeySet, message: "longer than 63"},
		{name: "tls cert without key", props: baseProps(srv, KeyTLSEnabled, "true", KeyTLSCertFile, certFile), key: KeyTLSKeyFile, message: "set together"},
		{name: "tls missing ca", props: baseProps(srv, KeyTLSEnabled, "true", KeyTLSCAFile, filepath.Join(dir, "nope.pem")), key: KeyTLSCAFile, message: "cannot read"},
		{name: "backoff max below backoff", props: baseProps(srv, KeyRetryBackoff, "500", KeyRetryBackoffMx, "100"), key: KeyRetryBackoffMx, message: "below"},
		{name: "retry attempts zero", props: baseProps(srv, KeyRetryAttempts, "0"), key: KeyRetryAttempts, message: "retry.max.attempts"},
		{name: "batch bytes too small", props: baseProps(srv, KeyBatchMaxBytes, "100"), key: KeyBatchMaxBytes, message: "batch.max.bytes"},
		{name: "batch bytes over the client limit", props: baseProps(srv, KeyBatchMaxBytes, "200000000"), key: KeyBatchMaxBytes, message: "batch.max.bytes"},
		{name: "not a boolean", props: baseProps(srv, KeySendKey, "yes"), key: KeySendKey, message: "true or false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.fake {
				srv.NeedFake(t, "the server's edition or a second namespace")
			}
			got := validateAll(t, tt.props)
			if tt.key == "" {
				if len(got) != 0 {
					t.Fatalf("errors for a valid config: %v", got)
				}
				return
			}
			msgs := got[tt.key]
			found := false
			for _, m := range msgs {
				if strings.Contains(m, tt.message) {
					found = true
				}
			}
			if !found {
				t.Fatalf("errors on %s = %q, want one containing %q (all errors: %v)", tt.key, msgs, tt.message, got)
			}
			for k := range got {
				if k != tt.key {
					t.Errorf("unexpected error on %s: %v", k, got[k])
				}
			}
		})
	}
}

func TestValidateUnreachableIsPrompt(t *testing.T) {
	start := time.Now()
	got := (&Connector{}).Validate(context.Background(), map[string]string{
		KeyHosts: closedPort(t), KeyNamespace: "test", KeyConnectTimeout: "600000",
	})
	if len(got) != 1 || got[0].Key != KeyHosts {
		t.Fatalf("errors = %v, want one on %s", got, KeyHosts)
	}
	if d := time.Since(start); d > 3*validateTimeout {
		t.Fatalf("validate took %v with an unreachable host", d)
	}
}

func TestStartRejectsInvalidConfig(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	task := (&Connector{}).NewTask()
	err := task.Start(context.Background(), newTaskCtx(), baseProps(srv, KeyWriteMode, "upsert", KeyBinsRename, "a:waytoolongbinname"))
	if err == nil {
		t.Fatal("start with an invalid config succeeded")
	}
	for _, want := range []string{KeyWriteMode, KeyBinsRename} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("start error does not name %s: %v", want, err)
		}
	}
	c := &Connector{}
	if err := c.Start(context.Background(), nil, baseProps(srv, KeyWriteMode, "upsert")); err == nil {
		t.Fatal("connector start with an invalid config succeeded")
	}
}

func TestStartUnreachableIsRetriable(t *testing.T) {
	task := (&Connector{}).NewTask()
	err := task.Start(context.Background(), newTaskCtx(), map[string]string{
		KeyHosts: closedPort(t), KeyNamespace: "test", KeyConnectTimeout: "500",
	})
	if err == nil || !sdk.IsRetriable(err) || !strings.Contains(err.Error(), "cannot connect") {
		t.Fatalf("start against a closed port = %v, want a retriable connect error", err)
	}
}

func TestTaskConfigs(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	c := &Connector{}
	props := baseProps(srv)
	if err := c.Start(context.Background(), nil, props); err != nil {
		t.Fatal(err)
	}
	cfgs, err := c.TaskConfigs(context.Background(), 3)
	if err != nil || len(cfgs) != 3 {
		t.Fatalf("task configs = %v, %v", cfgs, err)
	}
	for _, tc := range cfgs {
		if tc[KeyHosts] != props[KeyHosts] || tc[KeyNamespace] != srv.Namespace {
			t.Fatalf("task config %v lacks the connector's keys", tc)
		}
	}
	spec := c.Spec()
	if spec.Class != Class || spec.Type != sdk.Sink || spec.Config == nil {
		t.Fatalf("spec = %+v", spec)
	}
	for _, k := range spec.Config.Keys() {
		if k.Documentation == "" || k.Group == "" {
			t.Errorf("key %s lacks documentation or group", k.Name)
		}
	}
}

// A task configured with a user against Community Edition fails for good,
// naming the way out, instead of retrying a login that cannot succeed.
func TestStartWithUserOnCommunityEditionFails(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	srv.NeedFake(t, "a server known to be Community Edition")
	task := (&Connector{}).NewTask()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := task.Start(ctx, newTaskCtx(), baseProps(srv, KeyUser, "app", KeyPassword, "secret"))
	if err == nil {
		_ = task.Stop(context.Background())
		t.Fatal("start with a user on Community Edition succeeded")
	}
	if sdk.IsRetriable(err) || !strings.Contains(err.Error(), "leave aerospike.user and aerospike.password empty") {
		t.Fatalf("start error %v (retriable %v), want a permanent one naming the way out", err, sdk.IsRetriable(err))
	}
}
