package linesource

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/sdk"
)

// Class is the connector class users put in connector.class.
const Class = "LinesSource"

// Configuration keys.
const (
	KeyFiles    = "files"
	KeyTopic    = "topic"
	KeyBatch    = "batch.max.lines"
	KeyPollWait = "poll.wait.ms"
	keyTaskFile = "task.files" // set by TaskConfigs: the files of one task
)

func configDef() *configdef.Def {
	const g = "Lines"
	return configdef.New().
		Define(configdef.Key{Name: KeyFiles, Type: configdef.List, Required: true, Importance: configdef.High,
			Validator: configdef.NonEmptyList(), Group: g, OrderInGroup: 1, Width: configdef.WidthLong,
			Documentation: "Absolute paths of the text files to read. Each line becomes one record; files are split between the tasks."}).
		Define(configdef.Key{Name: KeyTopic, Type: configdef.String, Required: true, Importance: configdef.High,
			Validator: configdef.NonEmptyString(), Group: g, OrderInGroup: 2,
			Documentation: "Topic to write the lines to."}).
		Define(configdef.Key{Name: KeyBatch, Type: configdef.Int, Default: int32(500), Importance: configdef.Low,
			Validator: configdef.AtLeast(int32(1)), Group: g, OrderInGroup: 3,
			Documentation: "Most lines one poll returns per file."}).
		Define(configdef.Key{Name: KeyPollWait, Type: configdef.Int, Default: int32(200), Importance: configdef.Low,
			Validator: configdef.Between(int32(1), int32(60000)), Group: g, OrderInGroup: 4,
			Documentation: "How long a poll that finds no new line waits before it returns, in milliseconds: the delay before a new line is seen, against the cost of an idle task."})
}

// Connector is the LinesSource connector.
type Connector struct {
	props map[string]string
	files []string
}

// New returns the connector.
func New() *Connector { return &Connector{} }

var _ sdk.SourceConnector = (*Connector)(nil)

// Spec describes the class. ExactlyOnce holds because each file is read by
// one task and its whole position is the framework's offset.
func (c *Connector) Spec() sdk.Spec {
	return sdk.Spec{
		Class:       Class,
		Version:     "1.0.0",
		Type:        sdk.Source,
		Summary:     "Turns every line of text files into a Kafka record (the worked example of docs/writing-a-connector.md).",
		Config:      configDef(),
		ExactlyOnce: true,
	}
}

// Validate checks what the ConfigDef cannot: absolute, distinct paths.
func (c *Connector) Validate(_ context.Context, props map[string]string) []sdk.FieldError {
	if _, err := splitFiles(props[KeyFiles]); err != nil {
		return []sdk.FieldError{{Key: KeyFiles, Message: err.Error()}}
	}
	return nil
}

func splitFiles(v string) ([]string, error) {
	var files []string
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !filepath.IsAbs(f) {
			return nil, fmt.Errorf("%q is not an absolute path (the worker's working directory is no place to rely on)", f)
		}
		if slices.Contains(files, f) {
			return nil, fmt.Errorf("%q is listed twice: each file must be read by one task", f)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no files")
	}
	return files, nil
}

// Start keeps the configuration for TaskConfigs.
func (c *Connector) Start(_ context.Context, _ sdk.ConnectorContext, props map[string]string) error {
	files, err := splitFiles(props[KeyFiles])
	if err != nil {
		return err
	}
	c.props, c.files = props, files
	return nil
}

// TaskConfigs deals the files round-robin to at most maxTasks tasks.
func (c *Connector) TaskConfigs(_ context.Context, maxTasks int) ([]map[string]string, error) {
	n := min(maxTasks, len(c.files))
	groups := make([][]string, n)
	for i, f := range c.files {
		groups[i%n] = append(groups[i%n], f)
	}
	out := make([]map[string]string, n)
	for i, g := range groups {
		cfg := make(map[string]string, len(c.props)+1)
		for k, v := range c.props {
			cfg[k] = v
		}
		cfg[keyTaskFile] = strings.Join(g, ",")
		out[i] = cfg
	}
	return out, nil
}

// Stop has nothing to release.
func (c *Connector) Stop(context.Context) error { return nil }

// NewTask returns an unstarted task.
func (c *Connector) NewTask() sdk.SourceTask { return &Task{} }
