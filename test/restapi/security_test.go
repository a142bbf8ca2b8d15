package restapi

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/rest/signature"
	"github.com/connectd/connectd/internal/kafkatest"
)

// TestSecretsAndInternalAuthOnWorkers: config-provider secrets are
// resolved only where tasks run and never come back through the API or
// into logs; internal endpoints refuse unsigned and forged requests; the
// CLI works against a real worker with its exit codes.
func TestSecretsAndInternalAuthOnWorkers(t *testing.T) {
	c := newCluster(t, 2, nil)
	ctx := context.Background()
	a := c.client(0)
	const secret = "TopSecret-4f9a7c"
	secrets := filepath.Join(c.dir, "secrets.properties")
	if err := os.WriteFile(secrets, []byte("pw="+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	name := "with-secret"
	template := "${file:" + secrets + ":pw}"
	cfg := map[string]string{"connector.class": datagenClass, "tasks.max": "2", "kafka.topic": kafkatest.Topic(t),
		"max.interval": "50", "connection.password": template}
	if _, err := a.Create(ctx, name, cfg, ""); err != nil {
		t.Fatal(err)
	}
	waitState(t, a, name, "RUNNING", 2, "RUNNING")

	for _, w := range c.workers {
		for _, p := range []string{"/connectors/" + name, "/connectors/" + name + "/config", "/connectors/" + name + "/tasks",
			"/connectors/" + name + "/tasks-config", "/connectors/" + name + "/status", "/connectors?expand=info&expand=status"} {
			code, _, body := raw(t, "GET", w.url+p, "", true)
			if code != 200 {
				t.Fatalf("GET %s: %d %s", p, code, body)
			}
			if strings.Contains(body, secret) {
				t.Fatalf("GET %s on %s returned the resolved secret: %s", p, w.url, body)
			}
		}
		code, _, body := raw(t, "GET", w.url+"/connectors/"+name+"/config", "", true)
		if code != 200 || !strings.Contains(body, `"connection.password":"${file:`) {
			t.Fatalf("config does not keep the placeholder: %s", body)
		}
	}
	code, _, body := raw(t, "PUT", c.workers[1].url+"/connector-plugins/"+datagenClass+"/config/validate",
		`{"connector.class":"`+datagenClass+`","kafka.topic":"t","connection.password":"`+template+`"}`, true)
	if code != 200 || strings.Contains(body, secret) {
		t.Fatalf("validate: %d, secret present: %v", code, strings.Contains(body, secret))
	}

	// Internal endpoints: unsigned → 400, forged → 403; nothing changes.
	beforeCode, _, beforeBody := raw(t, "GET", c.workers[0].url+"/connectors/"+name+"/tasks", "", true)
	push := `[{"task.class":"evil"}]`
	for _, w := range c.workers {
		code, _, body = raw(t, "POST", w.url+"/connectors/"+name+"/tasks", push, true)
		wantError(t, "unsigned internal request", code, body, 400, "Internal request missing required signature")
		req, _ := http.NewRequest("POST", w.url+"/connectors/"+url.PathEscape(name)+"/tasks", strings.NewReader(push))
		req.Header.Set("Content-Type", "application/json") // as workers send it
		signature.Sign(req, []byte(push), []byte("not-the-session-key-at-all-00000"), time.Now())
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.ReadFrom(res.Body)
		res.Body.Close()
		wantError(t, "forged internal request", res.StatusCode, b.String(), 403, "Internal request contained invalid signature.")
		req, _ = http.NewRequest("PUT", w.url+"/connectors/"+url.PathEscape(name)+"/fence", nil)
		signature.Sign(req, nil, []byte("not-the-session-key-at-all-00000"), time.Now())
		res, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 403 {
			t.Fatalf("forged fence: %d", res.StatusCode)
		}
	}
	afterCode, _, afterBody := raw(t, "GET", c.workers[0].url+"/connectors/"+name+"/tasks", "", true)
	if beforeCode != 200 || afterCode != 200 || beforeBody != afterBody {
		t.Fatalf("task configs changed by rejected requests:\n%s\n%s", beforeBody, afterBody)
	}

	// The CLI against a real worker.
	cli := func(args ...string) (int, string) {
		cmd := exec.Command(c.bin, append(args, "--url", c.workers[1].url, "--user", user)...)
		cmd.Env = append(os.Environ(), "CONNECTD_PASSWORD="+password)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, string(out)
	}
	if code, out := cli("connectors", "list"); code != 0 || !strings.Contains(out, name) || !strings.Contains(out, "RUNNING") {
		t.Fatalf("cli list: %d %s", code, out)
	}
	if code, out := cli("connectors", "get", "nope"); code != 3 || !strings.Contains(out, "(HTTP 404)") {
		t.Fatalf("cli get unknown: %d %s", code, out)
	}
	if code, out := cli("connectors", "status", name, "--output", "json"); code != 0 || !strings.Contains(out, `"state": "RUNNING"`) || strings.Contains(out, secret) {
		t.Fatalf("cli status: %d %s", code, out)
	}
	if code, out := cli("plugins", "list"); code != 0 || !strings.Contains(out, datagenClass) {
		t.Fatalf("cli plugins: %d %s", code, out)
	}
	if code, out := cli("connectors", "delete", name); code != 0 {
		t.Fatalf("cli delete: %d %s", code, out)
	}

	if logs := c.logs(); strings.Contains(logs, secret) || strings.Contains(logs, password) {
		t.Fatal("a worker log contains the config-provider secret or the REST password")
	}
}
