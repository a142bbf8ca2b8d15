package host

import (
	"context"
	"fmt"
	"sync"

	"github.com/connectd/connectd/plugins/internal/wire"
	"github.com/connectd/connectd/plugins/pluginpb"
)

// EventType says what a ConnectorEvent reports.
type EventType int

const (
	// ReconfigurationRequested: the connector asks for TaskConfigs to be
	// called again.
	ReconfigurationRequested EventType = iota + 1
	// Failed: the connector raised an error, or its process died.
	Failed
)

// ConnectorEvent is a message from a running connector.
type ConnectorEvent struct {
	Type EventType
	Err  error // Failed only
}

// Connector is a connector instance running in a plugin process.
type Connector struct {
	p      *Process
	name   string
	events chan ConnectorEvent
	cancel context.CancelFunc
	once   sync.Once
}

// StartConnector starts the connector instance name with its validated
// configuration.
func (p *Process) StartConnector(ctx context.Context, name string, props map[string]string) (*Connector, error) {
	err := p.unary(ctx, "start connector", func(ctx context.Context) error {
		_, err := p.rpc.StartConnector(ctx, &pluginpb.StartConnectorRequest{Name: name, Props: props})
		return err
	})
	if err != nil {
		return nil, err
	}
	life, cancel := context.WithCancel(context.Background())
	c := &Connector{p: p, name: name, events: make(chan ConnectorEvent, 16), cancel: cancel}
	stream, err := p.rpc.ConnectorEvents(life, &pluginpb.ConnectorEventsRequest{Name: name})
	if err != nil {
		cancel()
		return nil, p.failure("connector events", err, false)
	}
	go c.pump(life, stream)
	return c, nil
}

func (c *Connector) pump(ctx context.Context, stream pluginpb.Plugin_ConnectorEventsClient) {
	defer close(c.events)
	for {
		ev, err := stream.Recv()
		if err != nil {
			if ctx.Err() == nil {
				c.emit(ctx, ConnectorEvent{Type: Failed, Err: c.p.failure("connector events", err, false)})
			}
			return
		}
		switch e := ev.Event.(type) {
		case *pluginpb.ConnectorEvent_ReconfigurationRequested:
			c.emit(ctx, ConnectorEvent{Type: ReconfigurationRequested})
		case *pluginpb.ConnectorEvent_Failed:
			c.emit(ctx, ConnectorEvent{Type: Failed, Err: fmt.Errorf("connector %s: %w", c.name, wire.ErrorFromPB(e.Failed))})
		}
	}
}

func (c *Connector) emit(ctx context.Context, ev ConnectorEvent) {
	select {
	case c.events <- ev:
	case <-ctx.Done():
	}
}

// Events delivers reconfiguration requests and failures until the
// connector stops; the channel is closed then.
func (c *Connector) Events() <-chan ConnectorEvent { return c.events }

// TaskConfigs asks the connector to split its work into at most maxTasks
// task configurations.
func (c *Connector) TaskConfigs(ctx context.Context, maxTasks int) ([]map[string]string, error) {
	var r *pluginpb.TaskConfigsResponse
	err := c.p.unary(ctx, "task configs", func(ctx context.Context) (err error) {
		r, err = c.p.rpc.TaskConfigs(ctx, &pluginpb.TaskConfigsRequest{Name: c.name, MaxTasks: int32(maxTasks)})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]map[string]string, len(r.GetConfigs()))
	for i, tc := range r.GetConfigs() {
		out[i] = tc.GetProps()
		if out[i] == nil {
			out[i] = map[string]string{}
		}
	}
	return out, nil
}

// Stop stops the connector instance.
func (c *Connector) Stop(ctx context.Context) error {
	var err error
	c.once.Do(func() {
		err = c.p.unary(ctx, "stop connector", func(ctx context.Context) error {
			_, err := c.p.rpc.StopConnector(ctx, &pluginpb.StopConnectorRequest{Name: c.name})
			return err
		})
		c.cancel()
	})
	return err
}
