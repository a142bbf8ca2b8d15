package client_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/herder"
	"github.com/connectd/connectd/framework/rest"
	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/framework/rest/client"
	"github.com/connectd/connectd/framework/rest/resttest"
)

func serve(t *testing.T, h rest.Herder) string {
	t.Helper()
	srv, err := rest.NewServer(rest.Config{}, h)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestClientRoundTrips(t *testing.T) {
	ctx := context.Background()
	h := resttest.New()
	c, err := client.New(serve(t, h))
	if err != nil {
		t.Fatal(err)
	}
	name := "orders/v1 ✓"
	cfg := map[string]string{"connector.class": resttest.SourceClass, "tasks.max": "2"}
	info, err := c.Create(ctx, name, cfg, api.InitialPaused)
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != name || len(info.Tasks) != 2 || info.Type != api.TypeSource || info.Config["name"] != name {
		t.Fatalf("create: %+v", info)
	}
	if _, err := c.Create(ctx, name, cfg, ""); !client.IsConflict(err) || client.IsRebalance(err) {
		t.Fatalf("duplicate create: %v", err)
	}
	names, err := c.Connectors(ctx)
	if err != nil || !reflect.DeepEqual(names, []string{name}) {
		t.Fatalf("list: %v %v", names, err)
	}
	exp, err := c.ConnectorsExpanded(ctx, true, true)
	if err != nil || exp[name].Status == nil || exp[name].Status.Connector.State != "PAUSED" || exp[name].Info == nil {
		t.Fatalf("expanded: %+v %v", exp, err)
	}
	if err := c.Resume(ctx, name); err != nil {
		t.Fatal(err)
	}
	st, err := c.Status(ctx, name)
	if err != nil || st.Connector.State != "RUNNING" || len(st.Tasks) != 2 {
		t.Fatalf("status: %+v %v", st, err)
	}
	if _, created, err := c.PutConfig(ctx, name, map[string]string{"connector.class": resttest.SourceClass, "tasks.max": "1"}); err != nil || created {
		t.Fatalf("put: created=%v %v", created, err)
	}
	v := "x"
	if info, err := c.PatchConfig(ctx, name, map[string]*string{"extra": &v}); err != nil || info.Config["extra"] != "x" {
		t.Fatalf("patch: %+v %v", info, err)
	}
	if got, err := c.Config(ctx, name); err != nil || got["extra"] != "x" {
		t.Fatalf("config: %v %v", got, err)
	}
	if ts, err := c.Tasks(ctx, name); err != nil || len(ts) != 1 {
		t.Fatalf("tasks: %v %v", ts, err)
	}
	if ts, err := c.TaskStatus(ctx, name, 0); err != nil || ts.State != "RUNNING" {
		t.Fatalf("task status: %v %v", ts, err)
	}
	if plan, err := c.Restart(ctx, name, false, false); err != nil || plan != nil {
		t.Fatalf("plain restart: %v %v", plan, err)
	}
	h.FailTask(name, 0, "boom")
	if plan, err := c.Restart(ctx, name, true, true); err != nil || plan == nil || plan.Tasks[0].State != "RESTARTING" {
		t.Fatalf("restart plan: %+v %v", plan, err)
	}
	if err := c.RestartTask(ctx, name, 0); err != nil {
		t.Fatal(err)
	}
	h.RecordTopics(name, "t")
	if tp, err := c.Topics(ctx, name); err != nil || !reflect.DeepEqual(tp, []string{"t"}) {
		t.Fatalf("topics: %v %v", tp, err)
	}
	if err := c.ResetTopics(ctx, name); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(ctx, name); err != nil {
		t.Fatal(err)
	}
	offs := api.ConnectorOffsets{Offsets: []api.ConnectorOffset{{Partition: map[string]any{"f": "a"}, Offset: map[string]any{"pos": 3}}}}
	if msg, err := c.AlterOffsets(ctx, name, offs); err != nil || msg == "" {
		t.Fatalf("alter: %q %v", msg, err)
	}
	if got, err := c.Offsets(ctx, name); err != nil || len(got.Offsets) != 1 {
		t.Fatalf("offsets: %+v %v", got, err)
	}
	if msg, err := c.ResetOffsets(ctx, name); err != nil || msg == "" {
		t.Fatalf("reset: %q %v", msg, err)
	}
	if ps, err := c.Plugins(ctx, true); err != nil || len(ps) != 2 {
		t.Fatalf("plugins: %v %v", ps, err)
	}
	if keys, err := c.PluginConfig(ctx, "TestSource"); err != nil || len(keys) != 2 {
		t.Fatalf("plugin config: %v %v", keys, err)
	}
	if res, err := c.Validate(ctx, "TestSource", map[string]string{"connector.class": "TestSource", "test.password": "pw"}); err != nil || *res.Configs[1].Value.Value != "[hidden]" {
		t.Fatalf("validate: %+v %v", res, err)
	}
	if _, err := c.ServerInfo(ctx); err != nil {
		t.Fatal(err)
	}
	h.SetHealth(api.Health{Status: "starting", Message: "Worker is still starting up."})
	if hl, err := c.Health(ctx); err != nil || hl.Status != "starting" {
		t.Fatalf("health: %+v %v", hl, err)
	}
	if err := c.Delete(ctx, name); err != nil {
		t.Fatal(err)
	}
	_, err = c.Connector(ctx, name)
	var ae *client.Error
	if !client.IsNotFound(err) || !errors.As(err, &ae) || ae.Message != "Connector "+name+" not found" || ae.ErrorCode != 404 {
		t.Fatalf("get deleted: %#v", err)
	}
}

// flakyHerder answers the first n creates with a rebalance conflict.
type flakyHerder struct {
	*resttest.Herder
	left atomic.Int32
}

func (f *flakyHerder) PutConnectorConfig(ctx context.Context, name string, props map[string]string, allowReplace bool, initial api.InitialState) (api.ConnectorInfo, bool, error) {
	if f.left.Add(-1) >= 0 {
		return api.ConnectorInfo{}, false, &herder.RebalanceError{Msg: "a rebalance is underway", RetryAfter: time.Second}
	}
	return f.Herder.PutConnectorConfig(ctx, name, props, allowReplace, initial)
}

func TestClientRetriesRebalanceOnly(t *testing.T) {
	ctx := context.Background()
	f := &flakyHerder{Herder: resttest.New()}
	f.left.Store(2)
	url := serve(t, f)
	cfg := map[string]string{"connector.class": resttest.SourceClass}

	noRetry, _ := client.New(url)
	if _, err := noRetry.Create(ctx, "a", cfg, ""); !client.IsRebalance(err) {
		t.Fatalf("without retries: %v", err)
	}
	retry, _ := client.New(url, client.WithRebalanceRetries(3, 5*time.Millisecond, 20*time.Millisecond))
	if _, err := retry.Create(ctx, "a", cfg, ""); err != nil {
		t.Fatalf("with retries: %v", err)
	}
	if left := f.left.Load(); left != -1 {
		t.Fatalf("attempts left %d, want -1 (1 failed without retries, 1 failed then 1 succeeded with)", left)
	}
	// "Already exists" is not retried.
	if _, err := retry.Create(ctx, "a", cfg, ""); !client.IsConflict(err) || client.IsRebalance(err) {
		t.Fatalf("exists: %v", err)
	}
	if f.Calls("PutConnectorConfig") != 2 {
		t.Fatalf("PutConnectorConfig reached the herder %d times, want 2", f.Calls("PutConnectorConfig"))
	}
}

func TestClientSignsInternalCalls(t *testing.T) {
	ctx := context.Background()
	h := resttest.New()
	url := serve(t, h)
	c, _ := client.New(url)
	if _, err := c.Create(ctx, "c", map[string]string{"connector.class": resttest.SourceClass}, ""); err != nil {
		t.Fatal(err)
	}
	if err := c.FenceZombies(ctx, "c"); statusOf(err) != 400 {
		t.Fatalf("unsigned fence: %v", err)
	}
	key, _, _ := h.SessionKey()
	wc, _ := client.New(url, client.WithSessionKey(func() ([]byte, bool) { return key, true }))
	if err := wc.FenceZombies(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if err := wc.PutTaskConfigs(ctx, "c", []map[string]string{{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	if got := h.Pushed("c"); len(got) != 1 || got[0]["k"] != "v" {
		t.Fatalf("pushed %v", got)
	}

	// Peer: the herder's view, one URL per call.
	p := client.NewPeer(func() ([]byte, bool) { return key, true })
	if err := p.PutTaskConfigs(ctx, url+"/", "c", []map[string]string{{"k": "w"}}); err != nil {
		t.Fatal(err)
	}
	if got := h.Pushed("c"); len(got) != 1 || got[0]["k"] != "w" {
		t.Fatalf("pushed %v", got)
	}
	if err := p.FenceZombies(ctx, url, "nope"); !client.IsNotFound(err) {
		t.Fatalf("fence unknown: %v", err)
	}
	bad := client.NewPeer(func() ([]byte, bool) { return []byte("wrong"), true })
	if err := bad.FenceZombies(ctx, url, "c"); statusOf(err) != 403 {
		t.Fatalf("wrong key: %v", err)
	}
}

func statusOf(err error) int {
	var e *client.Error
	if errors.As(err, &e) {
		return e.StatusCode
	}
	return 0
}
