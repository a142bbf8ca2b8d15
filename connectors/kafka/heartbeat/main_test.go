package heartbeat_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/connectd/connectd/plugins/plugintest"
)

// builder compiles connectd and the plugins once per test binary.
var builder *plugintest.Builder

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "connectors-heartbeat-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	builder = plugintest.NewBuilder(dir)
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
