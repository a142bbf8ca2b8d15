// Command filesink is a test sink plugin (class TestFileSink): it appends
// one line per applied record to a file — topic, partition, offset, key,
// value, tab-separated — so tests can check what a sink applied across
// crashes. Records whose value contains fail.value.contains are reported
// as failed (ReportError); the first retriable.puts Put calls fail with a
// retriable error before writing anything; records whose value contains
// flaky.value.contains are reported with a retriable error the first
// flaky.attempts times they are put.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/convert"
	"github.com/connectd/connectd/framework/convert/schemaregistry"
	"github.com/connectd/connectd/framework/data"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/plugins"
)

func main() {
	plugins.Serve(func() *connector { return &connector{} }, plugins.WithConverters(convert.NewSet(schemaregistry.Infos()...)))
}

type connector struct{ props map[string]string }

func (c *connector) Spec() sdk.Spec {
	return sdk.Spec{
		Class: "TestFileSink", Version: "0.0.1", Type: sdk.Sink,
		Summary: "Test sink that records every applied record in a file.",
		Config: configdef.New().
			Define(configdef.Key{Name: "file", Type: configdef.String, Required: true, Importance: configdef.High, Documentation: "File to append applied records to."}).
			Define(configdef.Key{Name: "fail.value.contains", Type: configdef.String, Default: "", Importance: configdef.Low, Documentation: "Report records whose value contains this as failed."}).
			Define(configdef.Key{Name: "retriable.puts", Type: configdef.Int, Default: int32(0), Importance: configdef.Low, Documentation: "Fail this many Put calls with a retriable error first."}).
			Define(configdef.Key{Name: "put.delay.ms", Type: configdef.Int, Default: int32(0), Importance: configdef.Low, Documentation: "Sleep this long in every Put."}).
			Define(configdef.Key{Name: "flaky.value.contains", Type: configdef.String, Default: "", Importance: configdef.Low, Documentation: "Report records whose value contains this with a retriable error at first."}).
			Define(configdef.Key{Name: "flaky.attempts", Type: configdef.Int, Default: int32(2), Importance: configdef.Low, Documentation: "How many times a flaky record fails before it is applied."}),
	}
}

func (c *connector) Validate(context.Context, map[string]string) []sdk.FieldError { return nil }

func (c *connector) Start(_ context.Context, _ sdk.ConnectorContext, props map[string]string) error {
	c.props = props
	return nil
}

func (c *connector) TaskConfigs(_ context.Context, maxTasks int) ([]map[string]string, error) {
	out := make([]map[string]string, maxTasks)
	for i := range out {
		out[i] = c.props
	}
	return out, nil
}

func (c *connector) Stop(context.Context) error { return nil }

func (c *connector) NewTask() sdk.SinkTask { return &task{} }

type task struct {
	tctx      sdk.SinkTaskContext
	mu        sync.Mutex
	f         *os.File
	failOn    string
	retriable int
	delay     time.Duration
	flakyOn   string
	flakyMax  int
	attempts  map[string]int // flaky record → failed attempts
}

func (t *task) Start(_ context.Context, tctx sdk.SinkTaskContext, props map[string]string) error {
	t.tctx = tctx
	t.failOn = props["fail.value.contains"]
	if v := props["retriable.puts"]; v != "" {
		t.retriable, _ = strconv.Atoi(v)
	}
	t.flakyOn, t.flakyMax, t.attempts = props["flaky.value.contains"], 2, map[string]int{}
	if v := props["flaky.attempts"]; v != "" {
		t.flakyMax, _ = strconv.Atoi(v)
	}
	if v := props["put.delay.ms"]; v != "" {
		ms, _ := strconv.Atoi(v)
		t.delay = time.Duration(ms) * time.Millisecond
	}
	f, err := os.OpenFile(props["file"], os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	t.f = f
	return nil
}

func (t *task) Open(context.Context, []sdk.TopicPartition) error  { return nil }
func (t *task) Close(context.Context, []sdk.TopicPartition) error { return nil }

func render(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case []byte:
		return string(x)
	case string:
		return x
	case *data.StructValue:
		return x.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func (t *task) Put(ctx context.Context, records []*sdk.SinkRecord) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.delay > 0 {
		select {
		case <-time.After(t.delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if t.retriable > 0 {
		t.retriable--
		return sdk.Retriable(errors.New("simulated retriable put failure"))
	}
	var b strings.Builder
	for _, r := range records {
		val := render(r.Value)
		if t.failOn != "" && strings.Contains(val, t.failOn) {
			t.tctx.ReportError(r, fmt.Errorf("rejected: value contains %q", t.failOn))
			continue
		}
		if t.flakyOn != "" && strings.Contains(val, t.flakyOn) {
			id := fmt.Sprintf("%s/%d/%d", r.OriginalTopic, r.OriginalPartition, r.OriginalOffset)
			if t.attempts[id] < t.flakyMax {
				t.attempts[id]++
				t.tctx.ReportError(r, sdk.Retriable(fmt.Errorf("flaky: attempt %d of %s failed", t.attempts[id], id)))
				continue
			}
		}
		fmt.Fprintf(&b, "%s\t%d\t%d\t%s\t%s\n", r.OriginalTopic, r.OriginalPartition, r.OriginalOffset, render(r.Key), val)
	}
	// One write per batch: a killed process loses the batch or keeps it
	// whole, and the page cache keeps what was written.
	_, err := t.f.WriteString(b.String())
	return err
}

func (t *task) Flush(_ context.Context, offsets map[sdk.TopicPartition]int64) (map[sdk.TopicPartition]int64, error) {
	return offsets, nil
}

func (t *task) Stop(context.Context) error {
	if t.f != nil {
		return t.f.Close()
	}
	return nil
}
