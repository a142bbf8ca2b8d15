package aerospike

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/connectd/connectd/framework/sdk"
)

// Placeholders that take aerospike.namespace or aerospike.set from each
// record instead of the configuration: the whole value is
// ${value.<field>} (dots address nested fields) or ${header.<name>}.
const (
	valuePlaceholderPrefix  = "${value."
	headerPlaceholderPrefix = "${header."
)

// nameSource is where a namespace or set name comes from.
type nameSource struct {
	static string   // the configured name (may hold TopicPlaceholder for a set)
	field  []string // from this value field, when set
	header string   // from this header, when set
}

func (s nameSource) dynamic() bool { return s.field != nil || s.header != "" }

// where names the source in error messages.
func (s nameSource) where() string {
	if s.field != nil {
		return "value field " + strconv.Quote(strings.Join(s.field, "."))
	}
	return "header " + strconv.Quote(s.header)
}

// parseNameSource reads a ${value.x} or ${header.x} placeholder; ok is
// false for a plain name (or a set template with ${topic}).
func parseNameSource(s string) (src nameSource, ok bool, err error) {
	if !strings.HasPrefix(s, "${") {
		return nameSource{static: s}, false, nil
	}
	inner, closed := strings.CutSuffix(s, "}")
	switch {
	case strings.HasPrefix(s, valuePlaceholderPrefix):
		path := strings.TrimPrefix(inner, valuePlaceholderPrefix)
		if !closed || path == "" || slices.Contains(strings.Split(path, "."), "") || strings.ContainsAny(path, "{}") {
			return src, false, fmt.Errorf("%q is not ${value.<field>}", s)
		}
		return nameSource{field: strings.Split(path, ".")}, true, nil
	case strings.HasPrefix(s, headerPlaceholderPrefix):
		name := strings.TrimPrefix(inner, headerPlaceholderPrefix)
		if !closed || name == "" || strings.ContainsAny(name, "{}") {
			return src, false, fmt.Errorf("%q is not ${header.<name>}", s)
		}
		return nameSource{header: name}, true, nil
	}
	return nameSource{static: s}, false, nil
}

// headerValue returns the last header named name; found is false when the
// record has none.
func headerValue(rec *sdk.SinkRecord, name string) (value []byte, found bool) {
	for i := len(rec.Headers) - 1; i >= 0; i-- {
		if rec.Headers[i].Key == name {
			return rec.Headers[i].Value, true
		}
	}
	return nil, false
}

// resolveName reads a namespace or set name (what) from a record and checks
// it as Aerospike would: a non-empty string of at most max bytes without
// ':', ';' or NUL.
func resolveName(rec *sdk.SinkRecord, src nameSource, what string, max int) (string, error) {
	where := src.where()
	var name string
	if src.field != nil {
		if rec.Value == nil {
			return "", mappingErr("record is a tombstone (null value), so %s cannot provide the %s", where, what)
		}
		fields, err := valueFields(rec.Value)
		if err != nil {
			return "", err
		}
		raw, ok := lookupPath(fields, src.field)
		if !ok {
			return "", mappingErr("%s, which names the %s, is missing", where, what)
		}
		s, ok := raw.(string)
		if !ok {
			if raw == nil {
				return "", mappingErr("%s, which names the %s, is null", where, what)
			}
			return "", mappingErr("%s, which names the %s, has type %T; it must be a string", where, what, raw)
		}
		name = s
	} else {
		v, found := headerValue(rec, src.header)
		if !found {
			return "", mappingErr("%s, which names the %s, is missing", where, what)
		}
		name = string(v)
	}
	switch {
	case name == "":
		return "", mappingErr("%s, which names the %s, is empty", where, what)
	case len(name) > max:
		return "", mappingErr("%s names the %s %q of %d bytes; Aerospike allows at most %d", where, what, name, len(name), max)
	case strings.ContainsAny(name, ":;\x00"):
		return "", mappingErr("%s names the %s %q, which contains ':', ';' or NUL", where, what, name)
	}
	return name, nil
}

// ttlOf reads the record's TTL in seconds from the value field at path:
// an integer from 0 (the namespace default) to maxTTL.
func ttlOf(fields map[string]any, path []string) (uint32, error) {
	where := "ttl field " + strconv.Quote(strings.Join(path, "."))
	raw, ok := lookupPath(fields, path)
	if !ok {
		return 0, mappingErr("%s is missing", where)
	}
	v, err := binValue(raw)
	if err != nil {
		return 0, mappingErr("%s: %v", where, err)
	}
	n, ok := v.(int64)
	switch {
	case v == nil:
		return 0, mappingErr("%s is null; it must be a number of seconds", where)
	case !ok:
		return 0, mappingErr("%s has type %s; it must be an integer number of seconds", where, kindOf(v))
	case n < 0:
		return 0, mappingErr("%s is %d; it must be 0 (the namespace default) or 1..%d seconds, not negative", where, n, maxTTL)
	case n > maxTTL:
		return 0, mappingErr("%s is %d; Aerospike accepts at most %d seconds", where, n, maxTTL)
	}
	return uint32(n), nil
}

// digestOf turns a key of key.type=digest into the 20 RIPEMD-160 digest
// bytes Aerospike addresses records by: raw bytes, 40 hex digits, or
// base64 (standard alphabet) of 20 bytes.
func digestOf(raw any, where string) ([]byte, error) {
	var d []byte
	switch v := raw.(type) {
	case nil:
		return nil, mappingErr("%s is null; every record needs a key", where)
	case []byte:
		d = v
	case string:
		s := strings.TrimSpace(v)
		if len(s) == 40 {
			b, err := hex.DecodeString(s)
			if err != nil {
				return nil, mappingErr("%s %q is 40 characters but not hex (key.type=digest)", where, v)
			}
			d = b
		} else {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return nil, mappingErr("%s %q is neither 40 hex digits nor base64 of 20 bytes (key.type=digest)", where, v)
			}
			d = b
		}
	default:
		return nil, mappingErr("%s has type %T; a digest must be bytes, hex or base64 (key.type=digest)", where, raw)
	}
	if len(d) != 20 {
		return nil, mappingErr("%s holds %d bytes; a digest is 20 bytes (key.type=digest)", where, len(d))
	}
	return d, nil
}

// namespaceCache knows which namespaces the cluster has, for namespaces
// taken from records: a record naming one the cluster does not have is
// reported instead of failing the whole batch command. It lists the
// cluster's namespaces again when a record names one it does not know,
// at most once per refreshEvery, so a namespace added to the cluster is
// found without a task restart.
type namespaceCache struct {
	list func() ([]string, error)

	mu        sync.Mutex
	known     map[string]bool
	refreshed time.Time
}

const namespaceRefreshEvery = 5 * time.Second

// check reports nil when ns exists, a mapping error when it does not, and
// a retriable error when the cluster cannot be asked.
func (c *namespaceCache) check(ns string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.known[ns] {
		return nil
	}
	if c.known == nil || time.Since(c.refreshed) >= namespaceRefreshEvery {
		list, err := c.list()
		if err != nil {
			return sdk.Retriable(fmt.Errorf("aerospike sink: cannot list the cluster's namespaces: %w", err))
		}
		c.known = make(map[string]bool, len(list))
		for _, n := range list {
			c.known[n] = true
		}
		c.refreshed = time.Now()
		if c.known[ns] {
			return nil
		}
	}
	known := make([]string, 0, len(c.known))
	for n := range c.known {
		known = append(known, n)
	}
	slices.Sort(known)
	return mappingErr("namespace %q does not exist on the cluster (namespaces: %s)", ns, strings.Join(known, ", "))
}
