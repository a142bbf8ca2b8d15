package kafka

import (
	"fmt"
	"os"
	"testing"

	"github.com/connectd/connectd/plugins/plugintest"
)

// builder compiles the worker, daemon and plugin binaries the tests run,
// once per test binary: linking each again for every test cost seconds
// per test.
var builder *plugintest.Builder

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "connectors-kafka-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	builder = plugintest.NewBuilder(dir)
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
