package connconfig

import (
	"context"
	"errors"
	"time"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/sdk"
)

// CommonDef returns the keys every connector of type t has.
func CommonDef(t sdk.Type) *configdef.Def { return configdef.New() }

// Validate validates a whole connector config.
func Validate(ctx context.Context, c sdk.Connector, props map[string]string, defaults chain.Defaults) configdef.ValidationResult {
	return configdef.ValidationResult{}
}

// ErrorPolicy is the errors.* policy of a connector.
type ErrorPolicy struct {
	Tolerance            string        // none|all
	RetryTimeout         time.Duration // -1 infinite
	RetryDelayMax        time.Duration
	LogEnable            bool
	LogIncludeMessages   bool
	DLQTopic             string
	DLQReplicationFactor int16
	DLQContextHeaders    bool
}

// ParseErrorPolicy parses the errors.* keys.
func ParseErrorPolicy(props map[string]string) (ErrorPolicy, error) {
	return ErrorPolicy{}, errors.New("connconfig: not implemented yet")
}
