package wire

import (
	"errors"
	"fmt"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/plugins/pluginpb"
)

// KeyInfoToPB converts a key definition for the wire.
func KeyInfoToPB(k configdef.KeyInfo) *pluginpb.KeyInfo {
	return &pluginpb.KeyInfo{
		Name: k.Name, Type: string(k.Type), Required: k.Required, DefaultValue: k.DefaultValue,
		Importance: string(k.Importance), Documentation: k.Documentation, Group: k.Group,
		Order: int32(k.Order), Width: string(k.Width), DisplayName: k.DisplayName,
		Dependents: k.Dependents, ValidValues: k.ValidValues,
	}
}

// KeyInfoFromPB is the inverse of KeyInfoToPB.
func KeyInfoFromPB(k *pluginpb.KeyInfo) configdef.KeyInfo {
	if k == nil {
		return configdef.KeyInfo{}
	}
	return configdef.KeyInfo{
		Name: k.Name, Type: configdef.Type(k.Type), Required: k.Required, DefaultValue: k.DefaultValue,
		Importance: configdef.Importance(k.Importance), Documentation: k.Documentation, Group: k.Group,
		Order: int(k.Order), Width: configdef.Width(k.Width), DisplayName: k.DisplayName,
		Dependents: k.Dependents, ValidValues: k.ValidValues,
	}
}

// ValidationToPB converts a validation result for the wire.
func ValidationToPB(r configdef.ValidationResult) *pluginpb.ValidateResponse {
	out := &pluginpb.ValidateResponse{Name: r.Name, ErrorCount: int32(r.ErrorCount), Groups: r.Groups}
	for _, c := range r.Configs {
		var def *pluginpb.KeyInfo
		if c.Definition != nil {
			def = KeyInfoToPB(*c.Definition)
		}
		out.Configs = append(out.Configs, &pluginpb.ConfigInfo{
			Definition: def,
			Value: &pluginpb.ConfigValue{
				Name: c.Value.Name, Value: c.Value.Value, RecommendedValues: c.Value.RecommendedValues,
				Errors: c.Value.Errors, Visible: c.Value.Visible,
			},
		})
	}
	return out
}

// ValidationFromPB is the inverse of ValidationToPB.
func ValidationFromPB(r *pluginpb.ValidateResponse) configdef.ValidationResult {
	out := configdef.ValidationResult{Name: r.GetName(), ErrorCount: int(r.GetErrorCount()), Groups: r.GetGroups()}
	for _, c := range r.GetConfigs() {
		v := c.GetValue()
		var def *configdef.KeyInfo
		if c.GetDefinition() != nil {
			k := KeyInfoFromPB(c.GetDefinition())
			def = &k
		}
		out.Configs = append(out.Configs, configdef.ConfigInfo{
			Definition: def,
			Value: configdef.ConfigValue{
				Name: v.GetName(), Value: v.Value, RecommendedValues: v.GetRecommendedValues(),
				Errors: v.GetErrors(), Visible: v.GetVisible(),
			},
		})
	}
	return out
}

// RecordSize estimates the encoded size of a record, without encoding it,
// closely enough for byte budgets (it errs on the large side).
func RecordSize(r *chain.Raw) int {
	n := 48 + len(r.Topic) + len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		n += 12 + len(h.Key) + len(h.Value)
	}
	return n
}

// ErrorToPB converts err for the wire; nil stays nil.
func ErrorToPB(err error) *pluginpb.Error {
	if err == nil {
		return nil
	}
	return &pluginpb.Error{Message: err.Error(), Trace: fmt.Sprintf("%+v", err), Retriable: sdk.IsRetriable(err)}
}

// RemoteError is an error that happened on the other side of the boundary.
// Its message is the remote error's, unchanged: a retriable one already
// says so ("retriable: ..."), so it is marked through Retriable rather
// than wrapped a second time.
type RemoteError struct {
	Message, Trace string
	retriable      bool
}

func (e *RemoteError) Error() string { return e.Message }

// Retriable reports whether the remote error was retriable; sdk.IsRetriable
// asks it.
func (e *RemoteError) Retriable() bool { return e.retriable }

// ErrorFromPB converts a wire error: retriable errors satisfy
// sdk.IsRetriable; errors.As finds the *RemoteError with the trace.
func ErrorFromPB(e *pluginpb.Error) error {
	if e == nil {
		return nil
	}
	return &RemoteError{Message: e.Message, Trace: e.Trace, retriable: e.Retriable}
}

// TraceOf returns the remote trace of err if it came over the wire, else
// its message.
func TraceOf(err error) string {
	var re *RemoteError
	if errors.As(err, &re) && re.Trace != "" {
		return re.Trace
	}
	return err.Error()
}

// TopicPartitionsToPB converts partitions for the wire.
func TopicPartitionsToPB(tps []sdk.TopicPartition) []*pluginpb.TopicPartition {
	out := make([]*pluginpb.TopicPartition, len(tps))
	for i, tp := range tps {
		out[i] = &pluginpb.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}
	}
	return out
}

// TopicPartitionsFromPB is the inverse of TopicPartitionsToPB.
func TopicPartitionsFromPB(tps []*pluginpb.TopicPartition) []sdk.TopicPartition {
	out := make([]sdk.TopicPartition, len(tps))
	for i, tp := range tps {
		out[i] = sdk.TopicPartition{Topic: tp.GetTopic(), Partition: tp.GetPartition()}
	}
	return out
}

// OffsetsToPB converts sink offsets for the wire.
func OffsetsToPB(m map[sdk.TopicPartition]int64) []*pluginpb.TopicPartitionOffset {
	out := make([]*pluginpb.TopicPartitionOffset, 0, len(m))
	for tp, o := range m {
		out = append(out, &pluginpb.TopicPartitionOffset{Topic: tp.Topic, Partition: tp.Partition, Offset: o})
	}
	return out
}

// OffsetsFromPB is the inverse of OffsetsToPB.
func OffsetsFromPB(l []*pluginpb.TopicPartitionOffset) map[sdk.TopicPartition]int64 {
	out := make(map[sdk.TopicPartition]int64, len(l))
	for _, o := range l {
		out[sdk.TopicPartition{Topic: o.GetTopic(), Partition: o.GetPartition()}] = o.GetOffset()
	}
	return out
}
