package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connectd/connectd/plugins/plugintest"
)

func TestPluginInstallListRemove(t *testing.T) {
	bins := t.TempDir()
	b := plugintest.NewBuilder(bins)
	b.Build(t, "github.com/connectd/connectd/connectors/datagen/cmd/connectd-datagen")
	dir := filepath.Join(t.TempDir(), "plugins")
	ctx := context.Background()
	cli := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(ctx, args, &out, &errb)
		return code, out.String(), errb.String()
	}

	// A directory installs every executable in it.
	if code, out, errs := cli("plugin", "install", "--plugin-path", dir, bins); code != exitOK || !strings.Contains(out, "installed DatagenSource") {
		t.Fatalf("install: %d %q %q", code, out, errs)
	}
	// The environment variable is the default plugin path.
	t.Setenv(pluginPathEnv, dir)
	code, out, _ := cli("plugin", "list")
	if code != exitOK || !strings.Contains(out, "DatagenSource") || !strings.Contains(out, "source") {
		t.Fatalf("list: %d %q", code, out)
	}
	// Each version has its own manifest and binary, so that versions
	// live side by side (KIP-891).
	if _, err := os.Stat(filepath.Join(dir, "DatagenSource@0.1.0.json")); err != nil {
		t.Fatal(err)
	}
	newer := b.Build(t, "github.com/connectd/connectd/connectors/datagen/cmd/connectd-datagen",
		"github.com/connectd/connectd/connectors/datagen.Version=0.2.0")
	if code, out, errs := cli("plugin", "install", "--plugin-path", dir, newer); code != exitOK || !strings.Contains(out, "installed DatagenSource 0.2.0") {
		t.Fatalf("install of a second version: %d %q %q", code, out, errs)
	}
	if code, out, _ := cli("plugin", "list"); code != exitOK || !strings.Contains(out, "0.1.0") || !strings.Contains(out, "0.2.0") {
		t.Fatalf("list after a second version: %d %q", code, out)
	}
	if code, out, _ := cli("plugin", "remove", "DatagenSource", "0.2.0"); code != exitOK || !strings.Contains(out, "removed DatagenSource 0.2.0") {
		t.Fatalf("remove one version: %d %q", code, out)
	}
	if code, _, errs := cli("plugin", "remove", "DatagenSource", "0.2.0"); code != exitNotFound || !strings.Contains(errs, "available versions: 0.1.0") {
		t.Fatalf("remove a version not installed: %d %q", code, errs)
	}
	if code, out, _ := cli("plugin", "remove", "DatagenSource"); code != exitOK || !strings.Contains(out, "removed") {
		t.Fatalf("remove: %d %q", code, out)
	}
	if code, _, errs := cli("plugin", "remove", "DatagenSource"); code != exitNotFound || !strings.Contains(errs, "unknown plugin") {
		t.Fatalf("second remove: %d %q", code, errs)
	}
	if code, _, _ := cli("plugin", "install"); code != exitUsage {
		t.Fatalf("install without args: %d", code)
	}
	if code, _, errs := cli("plugin", "install", "--plugin-path", dir, filepath.Join(bins, "missing")); code != exitFailure || errs == "" {
		t.Fatalf("install of a missing file: %d %q", code, errs)
	}
}
