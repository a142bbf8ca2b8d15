package aerospike

import (
	"errors"
	"fmt"

	as "github.com/aerospike/aerospike-client-go/v7"
	"github.com/aerospike/aerospike-client-go/v7/types"
)

// WriteError is a record the sink could not write to Aerospike because the
// server (or the client) rejected it for good. It is what the framework
// receives through ReportError, so the dead-letter queue's exception
// message carries the result code.
type WriteError struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       string // namespace/set/user key
	Code      types.ResultCode
	Err       error
}

func (e *WriteError) Error() string {
	msg := fmt.Sprintf("aerospike sink: writing %s-%d@%d to %s failed: result code %d %s",
		e.Topic, e.Partition, e.Offset, e.Key, int(e.Code), e.Code.String())
	var ae *as.AerospikeError
	if errors.As(e.Err, &ae) && ae.ResultCode == e.Code {
		// The client's own text repeats the code; its description is enough.
		return msg + " (" + types.ResultCodeToString(e.Code) + ")"
	}
	if e.Err != nil {
		return msg + ": " + e.Err.Error()
	}
	return msg
}

func (e *WriteError) Unwrap() error { return e.Err }

// class says what to do about a result code.
type class int

const (
	classOK        class = iota
	classConflict        // another writer changed the record: re-read and retry
	classRetriable       // transient: back off and retry
	classPermanent       // the record cannot be written as it is
)

// classify maps a result code to what the write protocol does with it.
func classify(rc types.ResultCode) class {
	switch rc {
	case types.OK:
		return classOK
	case types.GENERATION_ERROR, types.KEY_EXISTS_ERROR, types.KEY_NOT_FOUND_ERROR:
		// KEY_NOT_FOUND: the record we read vanished before a
		// generation-checked write reached it.
		return classConflict
	case types.TIMEOUT, types.KEY_BUSY, types.PARTITION_UNAVAILABLE,
		types.SERVER_ERROR, types.SERVER_MEM_ERROR, types.DEVICE_OVERLOAD,
		types.SERVER_NOT_AVAILABLE, types.CLUSTER_KEY_MISMATCH,
		types.NETWORK_ERROR, types.NO_RESPONSE, types.MAX_RETRIES_EXCEEDED,
		types.NO_AVAILABLE_CONNECTIONS_TO_NODE, types.INVALID_NODE_ERROR,
		types.MAX_ERROR_RATE, types.INVALID_CLUSTER_PARTITION_MAP,
		types.QUOTA_EXCEEDED, types.BATCH_QUEUES_FULL, types.BATCH_FAILED, types.COMMON_ERROR,
		types.PARSE_ERROR, types.GRPC_ERROR:
		return classRetriable
	}
	return classPermanent
}

// errCode extracts the result code of a client error; errors that are not
// Aerospike errors count as network errors.
func errCode(err error) types.ResultCode {
	var ae *as.AerospikeError
	if errors.As(err, &ae) {
		return ae.ResultCode
	}
	return types.NETWORK_ERROR
}

// errNoSecurity explains a login refused with SECURITY_NOT_SUPPORTED:
// Community Edition has no users, and it will never accept one.
var errNoSecurity = errors.New("the cluster has no security (Aerospike Community Edition answers SECURITY_NOT_SUPPORTED to a login); leave " + KeyUser + " and " + KeyPassword + " empty")

// securityUnsupported reports whether a connect error is a cluster
// refusing a login because it has no security.
func securityUnsupported(err error) bool {
	var ae *as.AerospikeError
	return errors.As(err, &ae) && ae.Matches(types.SECURITY_NOT_SUPPORTED)
}

// codeLabel is the errors_total label value of a result code: the
// client's constant name (a bounded set).
func codeLabel(rc types.ResultCode) string { return rc.String() }

// labelBadMapping is the errors_total label for records the mapping
// rejected before any write.
const labelBadMapping = "BAD_MAPPING"
