package sdk

import "errors"

// RetriableError marks a failure that may succeed if the same operation is
// tried again (a timeout, a busy target, a lost connection). The framework
// backs off and retries; other errors are final.
type RetriableError struct {
	Err error
}

func (e *RetriableError) Error() string { return "retriable: " + e.Err.Error() }
func (e *RetriableError) Unwrap() error { return e.Err }

// Retriable wraps err so that IsRetriable reports true. Retriable(nil) is nil.
func Retriable(err error) error {
	if err == nil {
		return nil
	}
	return &RetriableError{Err: err}
}

// IsRetriable reports whether err or any error it wraps is a
// RetriableError, or has a Retriable method that returns true (an error
// that crossed the plugin boundary says so that way, its message
// unchanged).
func IsRetriable(err error) bool {
	var re *RetriableError
	if errors.As(err, &re) {
		return true
	}
	var r interface{ Retriable() bool }
	return errors.As(err, &r) && r.Retriable()
}

// Stage names the step of record processing at which a failure happened. The
// values are Kafka Connect's, and they appear in the dead-letter queue's
// __connect.errors.stage header.
type Stage string

const (
	StageTaskPoll        Stage = "TASK_POLL"
	StageTaskPut         Stage = "TASK_PUT"
	StageTransformation  Stage = "TRANSFORMATION"
	StageKeyConverter    Stage = "KEY_CONVERTER"
	StageValueConverter  Stage = "VALUE_CONVERTER"
	StageHeaderConverter Stage = "HEADER_CONVERTER"
	StageKafkaProduce    Stage = "KAFKA_PRODUCE"
	StageKafkaConsume    Stage = "KAFKA_CONSUME"
)
