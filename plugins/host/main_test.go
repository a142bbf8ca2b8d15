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
	"syscall"
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

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// rawHostHelper starts a plugin without host.Launch (so without
// Pdeathsig), hands it a data channel and completes go-plugin's handshake
// by hand, and prints the plugin's pid: only the plugin's exit when the
// data channel closes can end it.
func rawHostHelper(bin string) int {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The plugin gets its end through ExtraFiles only, and never the
	// host's: it would keep the channel open after the helper died.
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	hostEnd, pluginEnd := os.NewFile(uintptr(fds[0]), "host"), os.NewFile(uintptr(fds[1]), "plugin")
	defer hostEnd.Close()
	cmd := exec.Command(bin)
	cmd.ExtraFiles = []*os.File{pluginEnd}
	cmd.Env = []string{
		wire.Handshake.MagicCookieKey + "=" + wire.Handshake.MagicCookieValue,
		fmt.Sprintf("PLUGIN_PROTOCOL_VERSIONS=%d", wire.ProtocolV4),
		wire.EnvDataFD + "=3",
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
	pluginEnd.Close()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, fmt.Sprintf("1|%d|unix|", wire.ProtocolV4)) {
		fmt.Fprintf(os.Stderr, "handshake line %q: %v\n", line, err)
		return 1
	}
	fmt.Printf("%d\n", cmd.Process.Pid)
	time.Sleep(time.Hour)
	return 0
}
