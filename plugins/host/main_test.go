package host_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/plugins/host"
	"github.com/connectd/connectd/plugins/internal/wire"
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
	if os.Getenv(envFloorChild) == "1" {
		os.Exit(floorChild())
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
	if bin := os.Getenv("CONNECTD_TEST_RAW_PLUGIN"); bin != "" {
		return rawHostHelper(bin)
	}
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

// protocols are the plugin protocol versions the boundary tests run over:
// version 3 (task streams on the data channel) between current builds, and
// version 1 (gRPC task streams), which a plugin built before version 3
// existed negotiates.
var protocols = []int{3, 1}

// buildFor builds the test plugin in mode, speaking every protocol version
// (version 3 is negotiated) or only version 1.
func buildFor(t testing.TB, mode string, version int) string {
	if version == 1 {
		return builder.Build(t, testPlugin, "main.mode="+mode, "github.com/connectd/connectd/plugins.onlyProtocolV1=true")
	}
	return build(t, mode)
}

// launchFor launches the test plugin and checks the negotiated version.
func launchFor(t *testing.T, mode string, version int, opts host.LaunchOptions) (*plugintest.Env, *host.Process) {
	t.Helper()
	env := plugintest.Install(t, buildFor(t, mode, version), opts)
	p := env.Launch(t)
	if got := p.ProtocolVersion(); got != version {
		t.Fatalf("negotiated protocol version %d, want %d", got, version)
	}
	return env, p
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// rawHostHelper starts a plugin without host.Launch (so without
// Pdeathsig), completes go-plugin's handshake by hand and prints the
// plugin's pid: only the plugin's own parent watchdog can end it.
func rawHostHelper(bin string) int {
	cmd := exec.Command(bin)
	cmd.Env = []string{
		wire.Handshake.MagicCookieKey + "=" + wire.Handshake.MagicCookieValue,
		"PLUGIN_PROTOCOL_VERSIONS=1",
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "1|1|unix|") {
		fmt.Fprintf(os.Stderr, "handshake line %q: %v\n", line, err)
		return 1
	}
	fmt.Printf("%d\n", cmd.Process.Pid)
	time.Sleep(time.Hour)
	return 0
}
