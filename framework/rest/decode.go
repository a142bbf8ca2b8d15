package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// decodeStrict decodes one JSON value from body into v and rejects
// trailing data; errors are 400s naming what was wrong and where.
func decodeStrict(body []byte, v any, what string) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest(fmt.Sprintf("request body is required: %s", what))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return jsonError(err, what)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badRequest(fmt.Sprintf("unexpected data after the JSON value in the request body (expected %s)", what))
	}
	return nil
}

func jsonError(err error, what string) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return badRequest(fmt.Sprintf("malformed JSON in the request body at byte %d: %v (expected %s)", se.Offset, se.Error(), what))
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			return badRequest(fmt.Sprintf("the request body must be %s, not a JSON %s", what, te.Value))
		}
		return badRequest(fmt.Sprintf("field %q of the request body has the wrong type: got a JSON %s, want %s", field, te.Value, te.Type))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return badRequest(fmt.Sprintf("truncated JSON in the request body (expected %s)", what))
	default:
		return badRequest(fmt.Sprintf("invalid request body (expected %s): %v", what, err))
	}
}

// stringValue renders one config value. Strings are taken as they are;
// numbers and booleans as their JSON text, as Kafka Connect's Jackson
// mapping coerces them. Null, objects and arrays are rejected.
func stringValue(key string, raw json.RawMessage) (string, bool, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "", false, badRequest(fmt.Sprintf("config key %q has no value", key))
	}
	switch t[0] {
	case '"':
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return "", false, badRequest(fmt.Sprintf("config key %q: %v", key, err))
		}
		return s, true, nil
	case 'n':
		return "", false, nil
	case '{', '[':
		return "", false, badRequest(fmt.Sprintf("config key %q must have a string value, not a JSON %s", key, map[byte]string{'{': "object", '[': "array"}[t[0]]))
	default: // number, true, false
		return string(t), true, nil
	}
}

// decodeConfig decodes a flat {"key": "value"} object. Null values are an
// error (there is nothing to set).
func decodeConfig(body []byte, what string) (map[string]string, error) {
	var raw map[string]json.RawMessage
	if err := decodeStrict(body, &raw, what); err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, badRequest(fmt.Sprintf("request body must be %s, not null", what))
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		s, present, err := stringValue(k, v)
		if err != nil {
			return nil, err
		}
		if !present {
			return nil, badRequest(fmt.Sprintf("config key %q must have a string value, not null", k))
		}
		out[k] = s
	}
	return out, nil
}

// validName checks a connector name from a URL or a request body. Kafka
// Connect forbids empty names and ISO control characters; "." and ".."
// are also refused because they cannot be addressed in a URL path.
func validName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return badRequest("Connector name is required and must not be blank")
	case !utf8.ValidString(name):
		return badRequest("connector name must be valid UTF-8")
	case name == "." || name == "..":
		return badRequest(fmt.Sprintf("connector name %q is not allowed: it cannot be used in a URL path", name))
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return badRequest(fmt.Sprintf("connector name %q must not contain ISO control characters", name))
		}
	}
	return nil
}

// checkAndPutName is Kafka's checkAndPutConnectorConfigName: a name key in
// the config must equal the URL's; an absent one is added.
func checkAndPutName(name string, cfg map[string]string) error {
	if err := validName(name); err != nil {
		return err
	}
	if inc, ok := cfg["name"]; ok {
		if inc != name {
			return badRequest(fmt.Sprintf("Connector name configuration (%s) doesn't match connector name in the URL (%s)", inc, name))
		}
		return nil
	}
	cfg["name"] = name
	return nil
}
