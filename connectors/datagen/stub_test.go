package datagen_test

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/sdk"
)

// stubContext is a source task context for calling the task directly.
type stubContext struct{}

func (stubContext) Connector() string                    { return "gen" }
func (stubContext) TaskID() int                          { return 0 }
func (stubContext) Logger() *slog.Logger                 { return slog.New(slog.DiscardHandler) }
func (stubContext) Metrics() prometheus.Registerer       { return prometheus.NewRegistry() }
func (stubContext) Offset(map[string]any) map[string]any { return nil }
func (stubContext) Transactions() sdk.TransactionContext { return nil }
