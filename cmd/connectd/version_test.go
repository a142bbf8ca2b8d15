package main

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

func TestVersionReportsEveryComponent(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"version"}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	text := out.String()
	for _, want := range []string{"connectd dev", "commit ", runtime.Version(), "librdkafka        2.", "plugin protocol   4"} {
		if !strings.Contains(text, want) {
			t.Errorf("version output lacks %q:\n%s", want, text)
		}
	}

	out.Reset()
	if code := run(context.Background(), []string{"version", "--output", "json"}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var v versionInfo
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("json output: %v\n%s", err, out.String())
	}
	if v.Version != version || v.Go != runtime.Version() || v.Librdkafka == "" || len(v.PluginProtocols) == 0 || v.Commit == "" {
		t.Fatalf("incomplete version info: %+v", v)
	}

	if code := run(context.Background(), []string{"version", "--output", "yaml"}, &out, &errOut); code != exitUsage {
		t.Fatalf("--output yaml: exit %d, want %d", code, exitUsage)
	}
}
