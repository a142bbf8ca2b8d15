package plugintest

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/sdk"
)

// SourceTaskContext is the least a source task needs to be called
// directly, outside a plugin process: a unit test of its Start and Poll.
// It has no committed offsets and no transaction context; its logger
// discards and each Metrics call returns a fresh registry.
type SourceTaskContext struct {
	ConnectorName string // "" reads as "test"
	Task          int
}

var _ sdk.SourceTaskContext = SourceTaskContext{}

func (c SourceTaskContext) Connector() string {
	if c.ConnectorName == "" {
		return "test"
	}
	return c.ConnectorName
}

func (c SourceTaskContext) TaskID() int                        { return c.Task }
func (SourceTaskContext) Logger() *slog.Logger                 { return slog.New(slog.DiscardHandler) }
func (SourceTaskContext) Metrics() prometheus.Registerer       { return prometheus.NewRegistry() }
func (SourceTaskContext) Offset(map[string]any) map[string]any { return nil }
func (SourceTaskContext) Transactions() sdk.TransactionContext { return nil }
