package checkpoint

import (
	"context"
	"errors"
	"maps"
	"strings"

	"github.com/connectd/connectd/framework/sdk"
)

// Connector is KafkaCheckpointSource's connector side: it validates the
// configuration and runs one task.
type Connector struct {
	props map[string]string
}

// NewConnector returns the connector.
func NewConnector() *Connector { return &Connector{} }

var _ sdk.SourceConnector = (*Connector)(nil)

// Spec implements sdk.Connector.
func (c *Connector) Spec() sdk.Spec {
	return sdk.Spec{
		Class:   Class,
		Version: Version,
		Type:    sdk.Source,
		Summary: "Emits MirrorMaker 2 checkpoints (consumer-group offsets translated to the target) and optionally syncs them to the target's groups.",
		Config:  configDef(),
		// Checkpoints are MM2's binary records: the worker's default
		// converters must not wrap them.
		RawBytes: true,
	}
}

// Validate implements sdk.Connector. Per-key problems are reported by the
// framework's ConfigDef check; what is left is the policy class and the
// regular expressions.
func (c *Connector) Validate(ctx context.Context, props map[string]string) []sdk.FieldError {
	var errs []sdk.FieldError
	for _, k := range []string{"key.converter", "value.converter"} {
		// Checkpoints are MM2's binary records: any other converter would
		// re-encode them (JsonConverter writes base64 strings).
		if v := props[k]; v != "" && v != byteArrayConverter {
			errs = append(errs, sdk.FieldError{Key: k, Message: "KafkaCheckpointSource writes MirrorMaker 2's binary records; set " + k + "=" + byteArrayConverter})
		}
	}
	_, err := ParseConfig(props)
	if err == nil {
		return errs
	}
	for _, k := range []string{KeyPolicyClass, KeyGroups, KeyGroupsExclude} {
		if strings.HasPrefix(err.Error(), k+":") {
			return append(errs, sdk.FieldError{Key: k, Message: err.Error()})
		}
	}
	return errs
}

const byteArrayConverter = "org.apache.kafka.connect.converters.ByteArrayConverter"

// Start implements sdk.Connector.
func (c *Connector) Start(ctx context.Context, cctx sdk.ConnectorContext, props map[string]string) error {
	if _, err := ParseConfig(props); err != nil {
		return err
	}
	c.props = maps.Clone(props)
	return nil
}

// TaskConfigs implements sdk.Connector: one task does all groups.
func (c *Connector) TaskConfigs(ctx context.Context, maxTasks int) ([]map[string]string, error) {
	if c.props == nil {
		return nil, errors.New("TaskConfigs called before Start")
	}
	return []map[string]string{maps.Clone(c.props)}, nil
}

// Stop implements sdk.Connector.
func (c *Connector) Stop(ctx context.Context) error { return nil }

// NewTask implements sdk.SourceConnector.
func (c *Connector) NewTask() sdk.SourceTask { return &Task{} }
