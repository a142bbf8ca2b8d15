package configdef

import "log/slog"

// Hidden is how PASSWORD values are shown everywhere outside the process
// that owns them: logs, REST answers, validation results, error messages.
const Hidden = "[hidden]"

// Secret is a parsed PASSWORD value (Kafka's Password). Every way of
// printing or serializing it yields "[hidden]"; only Value returns the clear
// text, so a secret cannot leak through %v, JSON or slog by accident.
type Secret struct {
	value string
}

// NewSecret wraps a clear-text secret.
func NewSecret(clear string) Secret { return Secret{value: clear} }

// Value returns the clear text. Call it only where the secret is used.
func (s Secret) Value() string { return s.value }

// String returns "[hidden]".
func (s Secret) String() string { return Hidden }

// GoString returns "[hidden]", so %#v does not print the clear text either.
func (s Secret) GoString() string { return Hidden }

// MarshalJSON returns the JSON string "[hidden]".
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + Hidden + `"`), nil }

// MarshalText returns "[hidden]".
func (s Secret) MarshalText() ([]byte, error) { return []byte(Hidden), nil }

// LogValue makes slog print "[hidden]".
func (s Secret) LogValue() slog.Value { return slog.StringValue(Hidden) }
