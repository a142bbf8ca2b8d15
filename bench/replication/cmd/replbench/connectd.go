package main

import (
	"context"
	"fmt"
)

// connectdSystem runs KafkaReplicationSource in a connectd worker.
type connectdSystem struct {
	bin       string
	pluginDir string
}

func (*connectdSystem) name() string                      { return "connectd-eos" }
func (*connectdSystem) target(rs *runSpec) string         { return rs.source + ".replica" }
func (*connectdSystem) finishesByExit() bool              { return false }
func (*connectdSystem) cleanup(context.Context, *runSpec) {}

func (c *connectdSystem) prepare(ctx context.Context, rs *runSpec) ([]*proc, error) {
	return nil, fmt.Errorf("%w: the connectd worker daemon is not wired into the benchmark yet", errUnavailable)
}

func (c *connectdSystem) start(ctx context.Context, rs *runSpec) ([]*proc, error) {
	return nil, errUnavailable
}
