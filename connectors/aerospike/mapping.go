package aerospike

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	as "github.com/aerospike/aerospike-client-go/v7"

	"github.com/connectd/connectd/framework/data"
	"github.com/connectd/connectd/framework/sdk"
)

// ErrMapping marks a record that cannot be turned into an Aerospike write
// (no key, a value that is not an object, a field that makes an invalid
// bin). Such records are reported to the framework, never skipped.
var ErrMapping = errors.New("aerospike sink: bad mapping")

func mappingErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrMapping, fmt.Sprintf(format, a...))
}

// bin is one mapped field: a bin name and a value the Aerospike client can
// encode. A nil value deletes the bin (update and increment modes).
type bin struct {
	name  string
	value any
}

// mapped is a sink record turned into what the write protocol needs.
type mapped struct {
	rec   *sdk.SinkRecord
	index int // position in the Put batch
	key   *as.Key
	// pos is the positions map key of the record's source partition:
	// "<original topic>-<original partition>".
	pos       string
	offset    int64
	tombstone bool
	bins      []bin // in the value's field order (a Go map's: unordered)
	// mapKey is the map key the bins are written under in map_put and
	// map_increment modes (string or int64).
	mapKey any
	// size estimates the bytes the record adds to a batch write (recordSize).
	size int
	// ttl is the record's TTL from ttl.field (not for tombstones).
	ttl uint32
}

// mapper turns sink records into keys and bins according to the config.
// It is used by one goroutine at a time (the task's Put).
type mapper struct {
	cfg *Config
	// posKeys caches "<topic>-<partition>" strings.
	posKeys map[sdk.TopicPartition]string
	// keys caches Aerospike keys: a key's digest is a RIPEMD-160 hash and
	// the same keys come back batch after batch (counters, entities).
	keys map[keyCacheKey]*as.Key
	// namespaces checks namespaces taken from records; nil skips the check.
	namespaces *namespaceCache
}

// keyCacheSize bounds the key cache; when full it starts over.
const keyCacheSize = 1 << 16

type keyCacheKey struct {
	ns  string
	set string
	str string
	num int64
	typ byte // 's' string, 'i' integer, 'd' digest (in str)
}

func newMapper(cfg *Config) *mapper {
	return &mapper{cfg: cfg, posKeys: map[sdk.TopicPartition]string{}, keys: map[keyCacheKey]*as.Key{}}
}

// key returns the Aerospike key of a user key (or, with key.type=digest,
// of a digest) in ns and set.
func (m *mapper) key(ns, set string, userKey any) (*as.Key, error) {
	var ck keyCacheKey
	digest := m.cfg.KeyType == KeyTypeDigest
	switch k := userKey.(type) {
	case string:
		ck = keyCacheKey{ns: ns, set: set, str: k, typ: 's'}
	case int64:
		ck = keyCacheKey{ns: ns, set: set, num: k, typ: 'i'}
	case []byte:
		if digest {
			ck = keyCacheKey{ns: ns, set: set, str: string(k), typ: 'd'}
		}
	}
	if ck.typ != 0 {
		if k, ok := m.keys[ck]; ok {
			return k, nil
		}
	}
	var k *as.Key
	var err error
	if digest {
		k, err = as.NewKeyWithDigest(ns, set, nil, userKey.([]byte))
	} else {
		k, err = as.NewKey(ns, set, userKey)
	}
	if err != nil {
		return nil, mappingErr("cannot build key %v: %v", userKey, err)
	}
	if ck.typ != 0 {
		if len(m.keys) >= keyCacheSize {
			clear(m.keys)
		}
		m.keys[ck] = k
	}
	return k, nil
}

func (m *mapper) posKey(tp sdk.TopicPartition) string {
	if s, ok := m.posKeys[tp]; ok {
		return s
	}
	s := tp.Topic + "-" + strconv.Itoa(int(tp.Partition))
	m.posKeys[tp] = s
	return s
}

// mapRecord maps one record into out. Bins are appended to *arena, whose
// backing array the batch's records share. Errors wrap ErrMapping.
func (m *mapper) mapRecord(rec *sdk.SinkRecord, index int, out *mapped, arena *[]bin) error {
	*out = mapped{
		rec:    rec,
		index:  index,
		pos:    m.posKey(rec.OriginalTopicPartition()),
		offset: rec.OriginalOffset,
	}
	ns, err := m.namespace(rec)
	if err != nil {
		return err
	}
	set, err := m.setName(rec)
	if err != nil {
		return err
	}
	userKey, err := m.userKey(rec)
	if err != nil {
		return err
	}
	k, err := m.key(ns, set, userKey)
	if err != nil {
		return err
	}
	out.key = k
	if rec.Value == nil {
		out.tombstone = true
		out.size = recordSize(out)
		return nil
	}
	fields, err := valueFields(rec.Value)
	if err != nil {
		return err
	}
	if m.cfg.TTLField != nil {
		if out.ttl, err = ttlOf(fields, m.cfg.TTLField); err != nil {
			return err
		}
	}
	keyField := "" // a top-level map key field, which is not a bin
	if m.cfg.WriteMode == ModeMapPut || m.cfg.WriteMode == ModeMapIncrement {
		if out.mapKey, err = mapKeyOf(fields, m.cfg.MapKeyField); err != nil {
			return err
		}
		if len(m.cfg.MapKeyField) == 1 {
			keyField = m.cfg.MapKeyField[0]
		}
	}
	start := len(*arena)
	for name, v := range fields {
		if keyField != "" && name == keyField {
			continue
		}
		if m.cfg.Include != nil && !m.cfg.Include[name] {
			continue
		}
		if m.cfg.Exclude[name] {
			continue
		}
		binName := name
		if r, ok := m.cfg.Rename[name]; ok {
			binName = r
		}
		if binName == "" {
			return mappingErr("value has a field with an empty name; bin names must not be empty (rename it with %s)", KeyBinsRename)
		}
		if len(binName) > maxBinName {
			return mappingErr("field %q maps to bin %q of %d bytes; Aerospike bin names are at most %d bytes (rename it with %s)", name, binName, len(binName), maxBinName, KeyBinsRename)
		}
		if m.cfg.EffectivelyOnce && binName == m.cfg.PositionsBin {
			return mappingErr("field %q maps to bin %q, which is positions.bin (rename or exclude the field)", name, binName)
		}
		bv, err := binValue(v)
		if err != nil {
			return mappingErr("field %q: %v", name, err)
		}
		if m.cfg.WriteMode == ModeListAppend {
			if err := appendable(bv); err != nil {
				return mappingErr("field %q: %v", name, err)
			}
		}
		*arena = append(*arena, bin{name: binName, value: bv})
	}
	out.bins = (*arena)[start:len(*arena):len(*arena)]
	// Only a rename can make two fields one bin.
	if len(m.cfg.Rename) > 0 {
		seen := make(map[string]bool, len(out.bins))
		for _, b := range out.bins {
			if seen[b.name] {
				return mappingErr("two fields map to bin %q", b.name)
			}
			seen[b.name] = true
		}
	}
	out.size = recordSize(out)
	return nil
}

// mapKeyOf reads the map key of map_put and map_increment modes from the
// value field at path. Aerospike map keys may be strings, integers or
// blobs; JSON has no blobs, and other types are refused here rather than
// by the server, so the record is reported before anything is written.
func mapKeyOf(fields map[string]any, path []string) (any, error) {
	where := "map key field " + strconv.Quote(strings.Join(path, "."))
	raw, ok := lookupPath(fields, path)
	if !ok {
		return nil, mappingErr("%s is missing", where)
	}
	v, err := binValue(raw)
	if err != nil {
		return nil, mappingErr("%s: %v", where, err)
	}
	switch k := v.(type) {
	case nil:
		return nil, mappingErr("%s is null; map keys must be strings or integers", where)
	case string, int64:
		return k, nil
	}
	return nil, mappingErr("%s has type %s; map keys must be strings or integers", where, kindOf(v))
}

// appendable checks a list_append value: null cannot be appended, neither
// as the field's value nor as an element of a list value, so a record that
// holds one is reported instead of writing part of it.
func appendable(v any) error {
	if v == nil {
		return errors.New("null cannot be appended to a list (exclude the field, or drop nulls with a transform)")
	}
	if l, ok := v.([]any); ok {
		for i, e := range l {
			if e == nil {
				return fmt.Errorf("element %d is null, which cannot be appended to a list", i)
			}
		}
	}
	return nil
}

// kindOf names a normalized value's type as the JSON a user sent.
func kindOf(v any) string {
	switch v.(type) {
	case bool:
		return "boolean"
	case float64:
		return "non-integer number"
	case []any:
		return "array"
	case map[string]any, map[any]any:
		return "object"
	case []byte:
		return "bytes"
	}
	return fmt.Sprintf("%T", v)
}

// namespace returns the record's namespace. One taken from the record is
// checked against the cluster's namespaces: the client fails a whole batch
// command for a namespace the cluster does not have, so such a record is
// reported instead. The error is retriable when the cluster cannot say.
func (m *mapper) namespace(rec *sdk.SinkRecord) (string, error) {
	src := m.cfg.NamespaceSrc
	if !src.dynamic() {
		return m.cfg.Namespace, nil
	}
	ns, err := resolveName(rec, src, "namespace", maxNamespace)
	if err != nil {
		return "", err
	}
	if m.namespaces != nil {
		if err := m.namespaces.check(ns); err != nil {
			if errors.Is(err, ErrMapping) {
				return "", fmt.Errorf("%w (from %s)", err, src.where())
			}
			return "", err
		}
	}
	return ns, nil
}

func (m *mapper) setName(rec *sdk.SinkRecord) (string, error) {
	if m.cfg.SetSrc.dynamic() {
		return resolveName(rec, m.cfg.SetSrc, "set", maxSetName)
	}
	set := m.cfg.Set
	if strings.Contains(set, TopicPlaceholder) {
		set = strings.ReplaceAll(set, TopicPlaceholder, rec.Topic)
		if len(set) > maxSetName {
			return "", mappingErr("set name %q (from topic %q) is %d bytes; Aerospike set names are at most %d bytes", set, rec.Topic, len(set), maxSetName)
		}
		if strings.ContainsAny(set, ":;\x00") {
			return "", mappingErr("set name %q (from topic %q) contains ':', ';' or NUL", set, rec.Topic)
		}
	}
	return set, nil
}

// userKey extracts the Aerospike user key and converts it to key.type.
func (m *mapper) userKey(rec *sdk.SinkRecord) (any, error) {
	var raw any
	var where string
	switch m.cfg.KeySource {
	case KeySourceValueField:
		where = "value field " + strings.Join(m.cfg.KeyField, ".")
		if rec.Value == nil {
			return nil, mappingErr("record is a tombstone (null value), so %s cannot provide the key; use key.source=record_key to delete by record key", where)
		}
		fields, err := valueFields(rec.Value)
		if err != nil {
			return nil, err
		}
		v, ok := lookupPath(fields, m.cfg.KeyField)
		if !ok {
			return nil, mappingErr("%s is missing", where)
		}
		raw = v
	case KeySourceHeader:
		where = "header " + strconv.Quote(m.cfg.KeyHeader)
		v, found := headerValue(rec, m.cfg.KeyHeader)
		if !found {
			return nil, mappingErr("%s is missing", where)
		}
		switch {
		case v == nil:
		case m.cfg.KeyType == KeyTypeDigest:
			raw = v // digest bytes as sent
		default:
			raw = string(v)
		}
	default:
		where = "record key"
		raw = rec.Key
	}
	if m.cfg.KeyType == KeyTypeDigest {
		return digestOf(raw, where)
	}
	return convertKey(raw, m.cfg.KeyType, where)
}

func lookupPath(fields map[string]any, path []string) (any, bool) {
	var cur any = fields
	for _, p := range path {
		mp, err := valueFields(cur)
		if err != nil {
			return nil, false
		}
		v, ok := mp[p]
		if !ok {
			return nil, false
		}
		cur = v
	}
	return cur, true
}

// convertKey turns a raw key into an Aerospike user key (int64, string or
// []byte). The same raw key always yields the same user key, which is what
// makes the mapping deterministic across redeliveries.
func convertKey(raw any, typ, where string) (any, error) {
	if raw == nil {
		return nil, mappingErr("%s is null; every record needs a key", where)
	}
	var k any
	switch v := raw.(type) {
	case string:
		k = v
	case []byte:
		k = v
	case json.Number:
		n, err := v.Int64()
		if err != nil {
			return nil, mappingErr("%s %s is not an integer", where, v)
		}
		k = n
	case bool, float32, float64, map[string]any, []any:
		return nil, mappingErr("%s has type %T; keys must be strings, integers or bytes", where, raw)
	default:
		n, ok := toInt64(raw)
		if !ok {
			return nil, mappingErr("%s has type %T; keys must be strings, integers or bytes", where, raw)
		}
		k = n
	}
	switch typ {
	case KeyTypeString:
		switch v := k.(type) {
		case int64:
			k = strconv.FormatInt(v, 10)
		case []byte:
			k = string(v)
		}
	case KeyTypeInteger:
		switch v := k.(type) {
		case string:
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return nil, mappingErr("%s %q is not an integer (key.type=integer)", where, v)
			}
			k = n
		case []byte:
			n, err := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
			if err != nil {
				return nil, mappingErr("%s %q is not an integer (key.type=integer)", where, v)
			}
			k = n
		}
	case KeyTypeBytes:
		switch v := k.(type) {
		case string:
			k = []byte(v)
		case int64:
			k = []byte(strconv.FormatInt(v, 10))
		}
	}
	switch v := k.(type) {
	case string:
		if v == "" {
			return nil, mappingErr("%s is empty; every record needs a non-empty key", where)
		}
	case []byte:
		if len(v) == 0 {
			return nil, mappingErr("%s is empty; every record needs a non-empty key", where)
		}
	}
	return k, nil
}

// valueFields returns the top-level fields of a value.
func valueFields(v any) (map[string]any, error) {
	switch x := v.(type) {
	case map[string]any:
		return x, nil
	case *data.StructValue:
		if x == nil {
			return nil, mappingErr("value is a nil struct")
		}
		fs := x.Schema().Fields
		out := make(map[string]any, len(fs))
		for i, f := range fs {
			out[f.Name] = x.At(i)
		}
		return out, nil
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, fv := range x {
			ks, ok := k.(string)
			if !ok {
				return nil, mappingErr("value is a map with a %T key; field names must be strings", k)
			}
			out[ks] = fv
		}
		return out, nil
	}
	return nil, mappingErr("value has type %T, not an object or struct; the sink maps the fields of a JSON object or struct to bins (check value.converter)", v)
}

// binValue converts a field value into a value the client encodes as the
// intended particle: integers become int64, floats float64, objects maps.
func binValue(v any) (any, error) {
	out, _, err := normalize(v)
	return out, err
}

// normalize is binValue that also reports whether the value changed, so
// that lists and maps that are already in shape are passed on without a
// copy.
func normalize(v any) (any, bool, error) {
	switch x := v.(type) {
	case nil, string, bool, int64, float64, []byte:
		return x, false, nil
	case float32:
		return float64(x), true, nil
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, true, nil
		}
		f, err := x.Float64()
		if err != nil {
			return nil, false, fmt.Errorf("number %s out of range", x)
		}
		return f, true, nil
	case time.Time:
		return x.UnixMilli(), true, nil
	case data.Decimal:
		// Aerospike has no decimal type; the plain string keeps every digit.
		return x.PlainString(), true, nil
	case []any:
		var out []any
		for i, e := range x {
			ev, changed, err := normalize(e)
			if err != nil {
				return nil, false, fmt.Errorf("element %d: %w", i, err)
			}
			if changed && out == nil {
				out = make([]any, len(x))
				copy(out, x[:i])
			}
			if out != nil {
				out[i] = ev
			}
		}
		if out == nil {
			return x, false, nil
		}
		return out, true, nil
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			ev, changed, err := normalize(e)
			if err != nil {
				return nil, false, fmt.Errorf("field %q: %w", k, err)
			}
			if changed && out == nil {
				out = make(map[string]any, len(x))
				for k2, e2 := range x {
					out[k2] = e2
				}
			}
			if out != nil {
				out[k] = ev
			}
		}
		if out == nil {
			return x, false, nil
		}
		return out, true, nil
	case *data.StructValue, map[any]any:
		fields, err := valueFields(x)
		if err != nil {
			return nil, false, err
		}
		out, _, err := normalize(fields)
		return out, true, err
	}
	if n, ok := toInt64(v); ok {
		return n, true, nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Uint64 || rv.Kind() == reflect.Uint {
		return nil, false, fmt.Errorf("unsigned integer %v exceeds the int64 range of Aerospike integers", v)
	}
	return nil, false, fmt.Errorf("unsupported value type %T", v)
}

// toInt64 converts any Go integer that fits int64.
func toInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint:
		if uint64(x) <= math.MaxInt64 {
			return int64(x), true
		}
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), true
		}
	}
	return 0, false
}
