package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/connectd/connectd/plugins/host"
	"github.com/connectd/connectd/plugins/plugintest"
)

const testPlugin = "github.com/connectd/connectd/plugins/internal/testconnectors/cmd/testplugin"

var builder *plugintest.Builder

// envHostHelper makes the test binary act as a small worker: it launches
// the plugin of the manifest in CONNECTD_TEST_MANIFEST, prints its pid and
// waits to be killed (TestNoOrphanAfterHostSIGKILL).
const envHostHelper = "CONNECTD_TEST_HOST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(envHostHelper) == "1" {
		os.Exit(hostHelper())
	}
	dir, err := os.MkdirTemp("", "connectd-plugin-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	builder = plugintest.NewBuilder(dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func hostHelper() int {
	var m host.Manifest
	if err := json.Unmarshal([]byte(os.Getenv("CONNECTD_TEST_MANIFEST")), &m); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	m.Dir = os.Getenv("CONNECTD_TEST_MANIFEST_DIR")
	p, err := host.Launch(context.Background(), m, host.LaunchOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("%d\n", p.Pid())
	time.Sleep(time.Hour)
	return 0
}

func build(t testing.TB, mode string) string {
	return builder.Build(t, testPlugin, "main.mode="+mode)
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}
