package aerospike

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	as "github.com/aerospike/aerospike-client-go/v7"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/sdk"
)

// Configuration keys of the AerospikeSink connector.
const (
	KeyHosts          = "aerospike.hosts"
	KeyUser           = "aerospike.user"
	KeyPassword       = "aerospike.password"
	KeyClusterName    = "aerospike.cluster.name"
	KeyTLSEnabled     = "aerospike.tls.enabled"
	KeyTLSName        = "aerospike.tls.name"
	KeyTLSCAFile      = "aerospike.tls.ca.file"
	KeyTLSCertFile    = "aerospike.tls.cert.file"
	KeyTLSKeyFile     = "aerospike.tls.key.file"
	KeyConnectTimeout = "aerospike.connect.timeout.ms"
	KeySocketTimeout  = "aerospike.socket.timeout.ms"
	KeyTotalTimeout   = "aerospike.total.timeout.ms"
	KeyClientRetries  = "aerospike.client.max.retries"
	KeyNamespace      = "aerospike.namespace"
	KeySet            = "aerospike.set"
	KeyKeySource      = "key.source"
	KeyKeyField       = "key.field"
	KeyKeyHeader      = "key.header"
	KeyKeyType        = "key.type"
	KeySendKey        = "send.key"
	KeyBinsInclude    = "bins.include"
	KeyBinsExclude    = "bins.exclude"
	KeyBinsRename     = "bins.rename"
	KeyWriteMode      = "write.mode"
	KeyMapKeyField    = "map.key.field"
	KeyTombstone      = "tombstone.behavior"
	KeyTTL            = "ttl"
	KeyTTLField       = "ttl.field"
	KeyPositionsBin   = "positions.bin"
	KeyEffectivelyOne = "effectively.once"
	KeyRetryAttempts  = "retry.max.attempts"
	KeyRetryBackoff   = "retry.backoff.ms"
	KeyRetryBackoffMx = "retry.backoff.max.ms"
	KeyBatchMaxKeys   = "batch.max.keys"
	KeyBatchMaxBytes  = "batch.max.bytes"
	KeyStatsSet       = "stats.set"
)

// Values of write.mode.
const (
	ModeReplace   = "replace"
	ModeUpdate    = "update"
	ModeIncrement = "increment"
	// ModeListAppend appends each field's value (or each element of a
	// list value) to the list bin of the field.
	ModeListAppend = "list_append"
	// ModeMapPut puts each field's value into the map bin of the field,
	// under the map key taken from map.key.field.
	ModeMapPut = "map_put"
	// ModeMapIncrement is ModeMapPut with numeric fields added to the
	// map entry (a counter per map key) instead of replacing it.
	ModeMapIncrement = "map_increment"
)

// cdtMode reports whether a write mode writes through list or map
// operations on the bins rather than whole bin values.
func cdtMode(mode string) bool {
	return mode == ModeListAppend || mode == ModeMapPut || mode == ModeMapIncrement
}

// replayUnsafe reports whether applying a record twice changes the
// result, so that the mode needs the effectively-once protocol.
func replayUnsafe(mode string) bool {
	return mode == ModeIncrement || mode == ModeListAppend || mode == ModeMapIncrement
}

// Values of tombstone.behavior.
const (
	// TombstoneClear leaves a record holding only the positions bin.
	TombstoneClear = "clear"
	// TombstoneDelete deletes the record, positions bin included.
	TombstoneDelete = "delete"
)

// Values of key.source.
const (
	KeySourceRecordKey  = "record_key"
	KeySourceValueField = "value_field"
	KeySourceHeader     = "header"
)

// Values of key.type.
const (
	KeyTypeAuto    = "auto"
	KeyTypeString  = "string"
	KeyTypeInteger = "integer"
	KeyTypeBytes   = "bytes"
	// KeyTypeDigest takes the key as the record's 20-byte RIPEMD-160
	// digest instead of a user key to hash.
	KeyTypeDigest = "digest"
)

// TopicPlaceholder in aerospike.set is replaced by the record's topic.
const TopicPlaceholder = "${topic}"

const (
	// maxBinName is Aerospike's limit on bin name length in bytes.
	maxBinName = 15
	// maxSetName is Aerospike's limit on set name length in bytes.
	maxSetName = 63
	// maxNamespace is Aerospike's limit on namespace name length in bytes.
	maxNamespace = 31
	// maxTTL is the largest positive TTL the server accepts (10 years).
	maxTTL = 315360000
	// defaultPort is Aerospike's service port.
	defaultPort = 3000
	// defaultBatchMaxBytes bounds one batch write command. The client
	// refuses commands over 120 MiB (its MaxBufferSize) with PARSE_ERROR;
	// 8 MiB keeps a full default put (1000 records of up to ~8 KiB) in one
	// command while staying far below that limit, so an estimate that is
	// off by a factor of ten still cannot reach it. Measured against the
	// test server with puts of 1000 records of 16 KiB, CPU per record was
	// the same from 1 to 8 MiB per command and about 40% higher at 16 and
	// 32 MiB.
	defaultBatchMaxBytes = 8 << 20
	// maxBatchMaxBytes leaves the same margin for configured values.
	maxBatchMaxBytes = 64 << 20
)

const (
	groupConn   = "Aerospike connection"
	groupTarget = "Aerospike target"
	groupMap    = "Mapping"
	groupWrite  = "Writes"
)

// configDef returns the connector's own configuration keys. The framework's
// common keys (name, topics, converters, errors.*) are not repeated here.
func configDef() *configdef.Def {
	d := configdef.New()
	order := map[string]int{}
	def := func(k configdef.Key) {
		order[k.Group]++
		k.OrderInGroup = order[k.Group]
		if k.Width == "" {
			k.Width = configdef.WidthMedium
		}
		d.Define(k)
	}
	def(configdef.Key{Name: KeyHosts, Type: configdef.List, Required: true, Importance: configdef.High, Group: groupConn,
		DisplayName: "Seed hosts", Validator: hostListValidator{},
		Documentation: "Seed nodes of the Aerospike cluster as host:port pairs (port defaults to 3000), comma-separated. The client discovers the other nodes from them."})
	def(configdef.Key{Name: KeyUser, Type: configdef.String, Default: "", Importance: configdef.Medium, Group: groupConn,
		DisplayName: "User", Documentation: "User for internal authentication; empty means the cluster has security disabled."})
	def(configdef.Key{Name: KeyPassword, Type: configdef.Password, Default: "", Importance: configdef.Medium, Group: groupConn,
		DisplayName: "Password", Documentation: "Password of aerospike.user."})
	def(configdef.Key{Name: KeyClusterName, Type: configdef.String, Default: "", Importance: configdef.Low, Group: groupConn,
		DisplayName: "Cluster name", Documentation: "Expected cluster name; nodes that report another name are rejected. Empty disables the check."})
	def(configdef.Key{Name: KeyTLSEnabled, Type: configdef.Boolean, Default: false, Importance: configdef.Medium, Group: groupConn,
		DisplayName: "TLS", Dependents: []string{KeyTLSName, KeyTLSCAFile, KeyTLSCertFile, KeyTLSKeyFile},
		Documentation: "Connect with TLS. The seed hosts must then be the nodes' TLS service ports."})
	def(configdef.Key{Name: KeyTLSName, Type: configdef.String, Default: "", Importance: configdef.Medium, Group: groupConn,
		DisplayName: "TLS name", Documentation: "Name the nodes' certificates are verified against (Aerospike's tls-name); empty uses the host name."})
	def(configdef.Key{Name: KeyTLSCAFile, Type: configdef.String, Default: "", Importance: configdef.Medium, Group: groupConn,
		DisplayName: "TLS CA file", Documentation: "PEM file of the CA certificates that sign the nodes' certificates; empty uses the system roots."})
	def(configdef.Key{Name: KeyTLSCertFile, Type: configdef.String, Default: "", Importance: configdef.Low, Group: groupConn,
		DisplayName: "TLS client certificate", Documentation: "PEM client certificate for mutual TLS; needs aerospike.tls.key.file."})
	def(configdef.Key{Name: KeyTLSKeyFile, Type: configdef.String, Default: "", Importance: configdef.Low, Group: groupConn,
		DisplayName: "TLS client key", Documentation: "PEM private key of aerospike.tls.cert.file."})
	def(configdef.Key{Name: KeyConnectTimeout, Type: configdef.Int, Default: int32(5000), Importance: configdef.Low, Group: groupConn,
		DisplayName: "Connect timeout (ms)", Validator: configdef.Between[int32](1, 600000),
		Documentation: "How long connecting to the cluster (at task start and for validation) may take, in milliseconds."})
	def(configdef.Key{Name: KeySocketTimeout, Type: configdef.Int, Default: int32(5000), Importance: configdef.Low, Group: groupConn,
		DisplayName: "Socket timeout (ms)", Validator: configdef.Between[int32](0, 600000),
		Documentation: "Socket idle timeout of one attempt of a command, in milliseconds; 0 means only the total timeout applies."})
	def(configdef.Key{Name: KeyTotalTimeout, Type: configdef.Int, Default: int32(10000), Importance: configdef.Low, Group: groupConn,
		DisplayName: "Total timeout (ms)", Validator: configdef.Between[int32](1, 600000),
		Documentation: "Upper bound of one batch command including the client's own retries, in milliseconds."})
	def(configdef.Key{Name: KeyClientRetries, Type: configdef.Int, Default: int32(2), Importance: configdef.Low, Group: groupConn,
		DisplayName: "Client retries", Validator: configdef.Between[int32](0, 100),
		Documentation: "Retries the Aerospike client makes inside one command on network errors and timeouts. They are safe: every write is conditional on the generation it read."})

	def(configdef.Key{Name: KeyNamespace, Type: configdef.String, Required: true, Importance: configdef.High, Group: groupTarget,
		DisplayName: "Namespace", Validator: nameValidator{what: "namespace", max: maxNamespace},
		Documentation: "Aerospike namespace records are written to. It must exist on the cluster. ${value.<field>} takes it from a value field of each record (dots address nested fields), ${header.<name>} from a header; a record naming a namespace the cluster does not have is reported."})
	def(configdef.Key{Name: KeySet, Type: configdef.String, Default: TopicPlaceholder, Importance: configdef.High, Group: groupTarget,
		DisplayName: "Set", Validator: setValidator{},
		Documentation: "Set records are written to: a fixed name, " + TopicPlaceholder + " for the record's topic (after transforms), ${value.<field>} for a value field of each record, ${header.<name>} for a header, or empty for the namespace's null set. At most 63 bytes after substitution."})
	def(configdef.Key{Name: KeyKeySource, Type: configdef.String, Default: KeySourceRecordKey, Importance: configdef.High, Group: groupTarget,
		DisplayName: "Key source", Validator: configdef.OneOf(KeySourceRecordKey, KeySourceValueField, KeySourceHeader),
		Dependents:    []string{KeyKeyField, KeyKeyHeader},
		Documentation: "Where the Aerospike user key comes from: record_key (the Kafka record key), value_field (the value field named by key.field) or header (the header named by key.header). The mapping must be deterministic: a redelivered record must map to the same key."})
	def(configdef.Key{Name: KeyKeyField, Type: configdef.String, Default: "", Importance: configdef.Medium, Group: groupTarget,
		DisplayName: "Key field", Documentation: "Value field holding the key when key.source=value_field; dots address nested fields (a.b)."})
	def(configdef.Key{Name: KeyKeyHeader, Type: configdef.String, Default: "", Importance: configdef.Medium, Group: groupTarget,
		DisplayName: "Key header", Documentation: "Header holding the key when key.source=header; its bytes are the key."})
	def(configdef.Key{Name: KeyKeyType, Type: configdef.String, Default: KeyTypeAuto, Importance: configdef.Medium, Group: groupTarget,
		DisplayName: "Key type", Validator: configdef.OneOf(KeyTypeAuto, KeyTypeString, KeyTypeInteger, KeyTypeBytes, KeyTypeDigest),
		Documentation: "Type of the Aerospike user key, which is part of the record digest: auto (integers stay integers, text is a string, bytes a blob), string, integer or bytes. digest: the key is the record's 20-byte RIPEMD-160 digest itself (bytes, 40 hex digits or base64), used as it is instead of being computed from a user key; send.key cannot be used with it."})
	def(configdef.Key{Name: KeySendKey, Type: configdef.Boolean, Default: false, Importance: configdef.Low, Group: groupTarget,
		DisplayName: "Store key", Documentation: "Store the user key with the record (Aerospike send-key), so scans return it."})

	def(configdef.Key{Name: KeyBinsInclude, Type: configdef.List, Default: []string{}, Importance: configdef.Medium, Group: groupMap,
		DisplayName: "Include fields", Validator: fieldListValidator{},
		Documentation: "Top-level value fields written as bins; empty means all fields. Nested objects become map bins."})
	def(configdef.Key{Name: KeyBinsExclude, Type: configdef.List, Default: []string{}, Importance: configdef.Medium, Group: groupMap,
		DisplayName: "Exclude fields", Validator: fieldListValidator{},
		Documentation: "Top-level value fields not written."})
	def(configdef.Key{Name: KeyBinsRename, Type: configdef.List, Default: []string{}, Importance: configdef.Medium, Group: groupMap,
		DisplayName: "Rename fields", Validator: renameValidator{},
		Documentation: "field:bin pairs, comma-separated, naming the bin a field is written to. Bin names are at most 15 bytes."})

	def(configdef.Key{Name: KeyWriteMode, Type: configdef.String, Default: ModeUpdate, Importance: configdef.High, Group: groupWrite,
		DisplayName: "Write mode", Validator: configdef.OneOf(ModeReplace, ModeUpdate, ModeIncrement, ModeListAppend, ModeMapPut, ModeMapIncrement),
		Dependents:    []string{KeyMapKeyField},
		Documentation: "replace: the record's bins become exactly the value's fields. update: the value's fields are written over the existing bins (null deletes a bin). increment: numeric fields are added to the bins (counters), other fields are written as in update. list_append: each field's value is appended to the list bin of the field (a list value appends each of its elements). map_put: each field's value is put into the map bin of the field under the map key read from map.key.field (null removes the entry). map_increment: as map_put, but numeric fields are added to the map entry (a counter per map key). increment, list_append and map_increment need effectively.once=true."})
	def(configdef.Key{Name: KeyMapKeyField, Type: configdef.String, Default: "", Importance: configdef.Medium, Group: groupWrite,
		DisplayName: "Map key field", Documentation: "Value field whose value (a string or an integer) is the map key that write.mode=map_put and map_increment write under; dots address nested fields (a.b). A top-level key field is not itself written as a bin."})
	def(configdef.Key{Name: KeyTombstone, Type: configdef.String, Default: TombstoneClear, Importance: configdef.Medium, Group: groupWrite,
		DisplayName: "Tombstone behavior", Validator: configdef.OneOf(TombstoneClear, TombstoneDelete),
		Documentation: "What a record with a null value does. clear: the record's bins are removed but the record stays, holding only the positions bin, so a replayed older record is still recognised as applied. delete: the record is deleted (generation-checked), positions bin included: a replay of records older than the tombstone then applies them again and brings the record back. Without effectively.once tombstones always delete."})
	def(configdef.Key{Name: KeyTTL, Type: configdef.Long, Default: int64(0), Importance: configdef.Medium, Group: groupWrite,
		DisplayName: "TTL (s)", Validator: ttlValidator{},
		Documentation: "Record time-to-live in seconds: 0 the namespace default, -1 never expire, -2 keep the record's current TTL, or 1..315360000. An expired record loses its positions bin, so only records whose TTL outlasts any possible replay keep the effectively-once guarantee."})
	def(configdef.Key{Name: KeyTTLField, Type: configdef.String, Default: "", Importance: configdef.Medium, Group: groupWrite,
		DisplayName: "TTL field", Documentation: "Value field holding each record's time-to-live in seconds (0 the namespace default, or 1..315360000), used instead of ttl; dots address nested fields. A record whose field is missing, not an integer or negative is reported. Tombstones keep the stored record's TTL. The field is also written as a bin unless excluded."})
	def(configdef.Key{Name: KeyPositionsBin, Type: configdef.String, Default: "kafka_pos", Importance: configdef.Medium, Group: groupWrite,
		DisplayName: "Positions bin", Validator: binNameValidator{},
		Documentation: "Map bin holding, per source topic partition (\"<topic>-<partition>\"), the last Kafka offset applied to the record. It is what makes replays and zombie writes harmless; no value field may map to it."})
	def(configdef.Key{Name: KeyEffectivelyOne, Type: configdef.Boolean, Default: true, Importance: configdef.Medium, Group: groupWrite,
		DisplayName: "Effectively once", Dependents: []string{KeyPositionsBin},
		Documentation: "Apply every Kafka record at most once per Aerospike record (positions bin plus generation-checked writes). false writes blindly: faster, but a replay applies records again, so increment mode requires true."})
	def(configdef.Key{Name: KeyRetryAttempts, Type: configdef.Int, Default: int32(10), Importance: configdef.Low, Group: groupWrite,
		DisplayName: "Retry attempts", Validator: configdef.Between[int32](1, 1000),
		Documentation: "Attempts per record key inside one put for retriable failures (timeouts, KEY_BUSY, unavailable partitions, connection errors) and generation conflicts; afterwards the put fails as retriable and the framework redelivers the batch."})
	def(configdef.Key{Name: KeyRetryBackoff, Type: configdef.Int, Default: int32(20), Importance: configdef.Low, Group: groupWrite,
		DisplayName: "Retry backoff (ms)", Validator: configdef.Between[int32](0, 60000),
		Documentation: "First backoff between attempts, in milliseconds; it doubles (with jitter) up to retry.backoff.max.ms."})
	def(configdef.Key{Name: KeyRetryBackoffMx, Type: configdef.Int, Default: int32(1000), Importance: configdef.Low, Group: groupWrite,
		DisplayName: "Max retry backoff (ms)", Validator: configdef.Between[int32](0, 600000),
		Documentation: "Largest backoff between attempts, in milliseconds."})
	def(configdef.Key{Name: KeyBatchMaxKeys, Type: configdef.Int, Default: int32(5000), Importance: configdef.Low, Group: groupWrite,
		DisplayName: "Keys per batch command", Validator: configdef.Between[int32](1, 100000),
		Documentation: "Most record keys sent in one BatchRead/BatchOperate command; larger puts are split."})
	def(configdef.Key{Name: KeyBatchMaxBytes, Type: configdef.Int, Default: int32(defaultBatchMaxBytes), Importance: configdef.Low, Group: groupWrite,
		DisplayName: "Bytes per batch command", Validator: configdef.Between[int32](1024, maxBatchMaxBytes),
		Documentation: "Most estimated encoded bytes of record writes sent in one BatchOperate command; larger puts are split, and records of one key are folded into one write only up to this size. A single record larger than this is sent alone. The Aerospike client refuses commands over 120 MiB."})
	def(configdef.Key{Name: KeyStatsSet, Type: configdef.String, Default: "", Importance: configdef.Low, Group: groupWrite,
		DisplayName: "Statistics set", Validator: statsSetValidator{},
		Documentation: "Set of aerospike.namespace where the sink keeps durable counters, so that they outlive task, plugin and worker restarts (the Prometheus counters start from 0 in every plugin process): one record per connector, keyed by the connector's name, whose integer bins " + StatsBinApplied + " and " + StatsBinDuplicates + " are incremented after each Put by the records it applied and the records it skipped because the positions bin showed them applied. The increment follows the writes, so a task that dies in between leaves them uncounted (the replayed records are then counted as duplicates). Empty (the default): no counters are written. Needs a fixed aerospike.namespace."})
	return d
}

// Config is the parsed connector configuration.
type Config struct {
	Hosts          []*as.Host
	User           string
	Password       string
	ClusterName    string
	TLS            bool
	TLSName        string
	TLSCAFile      string
	TLSCertFile    string
	TLSKeyFile     string
	ConnectTimeout time.Duration
	SocketTimeout  time.Duration
	TotalTimeout   time.Duration
	ClientRetries  int

	Namespace string
	// Set is the fixed set name, or a template containing TopicPlaceholder.
	Set string
	// NamespaceSrc and SetSrc say where each record's namespace and set
	// come from: the fields above, or a value field or header.
	NamespaceSrc nameSource
	SetSrc       nameSource
	KeySource    string
	// KeyField is the dotted path of the key field, split.
	KeyField  []string
	KeyHeader string
	KeyType   string
	SendKey   bool

	Include map[string]bool // nil: all fields
	Exclude map[string]bool
	Rename  map[string]string

	WriteMode string
	// MapKeyField is the dotted path of map.key.field, split.
	MapKeyField []string
	// TombstoneDelete: tombstones delete the record (tombstone.behavior).
	TombstoneDelete bool
	TTL             int64
	// TTLField is the dotted path of ttl.field, split; nil uses TTL.
	TTLField        []string
	PositionsBin    string
	EffectivelyOnce bool

	RetryAttempts   int
	RetryBackoff    time.Duration
	RetryBackoffMax time.Duration
	BatchMaxKeys    int
	// StatsSet is the set of the durable counters; empty: none.
	StatsSet      string
	BatchMaxBytes int
}

// parseConfig parses props against the connector's ConfigDef and checks the
// rules that span keys. It returns every problem found, one per key.
func parseConfig(props map[string]string) (*Config, []sdk.FieldError) {
	def := configDef()
	vals, errs := parseDef(def, props)
	errs = append(errs, crossCheck(vals)...)
	if len(errs) > 0 {
		return nil, errs
	}
	return configFromVals(vals), nil
}

// configFromVals builds a Config from parsed values; every key must be
// present with its configdef type.
func configFromVals(vals map[string]any) *Config {
	c := &Config{
		User:            vals[KeyUser].(string),
		Password:        vals[KeyPassword].(configdef.Secret).Value(),
		ClusterName:     vals[KeyClusterName].(string),
		TLS:             vals[KeyTLSEnabled].(bool),
		TLSName:         vals[KeyTLSName].(string),
		TLSCAFile:       vals[KeyTLSCAFile].(string),
		TLSCertFile:     vals[KeyTLSCertFile].(string),
		TLSKeyFile:      vals[KeyTLSKeyFile].(string),
		ConnectTimeout:  ms(vals[KeyConnectTimeout]),
		SocketTimeout:   ms(vals[KeySocketTimeout]),
		TotalTimeout:    ms(vals[KeyTotalTimeout]),
		ClientRetries:   int(vals[KeyClientRetries].(int32)),
		Namespace:       vals[KeyNamespace].(string),
		Set:             vals[KeySet].(string),
		KeySource:       vals[KeyKeySource].(string),
		KeyHeader:       vals[KeyKeyHeader].(string),
		KeyType:         vals[KeyKeyType].(string),
		SendKey:         vals[KeySendKey].(bool),
		Exclude:         toSet(vals[KeyBinsExclude].([]string)),
		Rename:          map[string]string{},
		WriteMode:       vals[KeyWriteMode].(string),
		TombstoneDelete: vals[KeyTombstone].(string) == TombstoneDelete,
		TTL:             vals[KeyTTL].(int64),
		PositionsBin:    vals[KeyPositionsBin].(string),
		EffectivelyOnce: vals[KeyEffectivelyOne].(bool),
		RetryAttempts:   int(vals[KeyRetryAttempts].(int32)),
		RetryBackoff:    ms(vals[KeyRetryBackoff]),
		RetryBackoffMax: ms(vals[KeyRetryBackoffMx]),
		BatchMaxKeys:    int(vals[KeyBatchMaxKeys].(int32)),
		BatchMaxBytes:   int(vals[KeyBatchMaxBytes].(int32)),
		StatsSet:        vals[KeyStatsSet].(string),
	}
	if f := vals[KeyKeyField].(string); f != "" {
		c.KeyField = strings.Split(f, ".")
	}
	c.NamespaceSrc, _, _ = parseNameSource(c.Namespace)
	c.SetSrc, _, _ = parseNameSource(c.Set)
	if f := vals[KeyTTLField].(string); f != "" {
		c.TTLField = strings.Split(f, ".")
	}
	if f := vals[KeyMapKeyField].(string); f != "" {
		c.MapKeyField = strings.Split(f, ".")
	}
	if inc := vals[KeyBinsInclude].([]string); len(inc) > 0 {
		c.Include = toSet(inc)
	}
	for _, pair := range vals[KeyBinsRename].([]string) {
		field, bin, _ := strings.Cut(pair, ":")
		c.Rename[strings.TrimSpace(field)] = strings.TrimSpace(bin)
	}
	for _, h := range vals[KeyHosts].([]string) {
		host, port, _ := splitHost(h)
		ah := as.NewHost(host, port)
		ah.TLSName = c.TLSName
		c.Hosts = append(c.Hosts, ah)
	}
	return c
}

func ms(v any) time.Duration { return time.Duration(v.(int32)) * time.Millisecond }

func toSet(list []string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, s := range list {
		m[s] = true
	}
	return m
}

// parseDef parses props with the ConfigDef (types, required keys,
// validators) and returns the values of the keys that are valid, plus one
// error per invalid key. Keys the definition does not know are ignored:
// they belong to the framework.
func parseDef(def *configdef.Def, props map[string]string) (map[string]any, []sdk.FieldError) {
	var errs []sdk.FieldError
	bad := map[string]bool{}
	for _, cv := range def.Validate(props) {
		for _, msg := range cv.Errors {
			errs = append(errs, sdk.FieldError{Key: cv.Name, Message: msg})
			bad[cv.Name] = true
		}
	}
	vals := map[string]any{}
	for _, k := range def.Keys() {
		if bad[k.Name] {
			continue
		}
		raw, ok := props[k.Name]
		if !ok {
			vals[k.Name] = k.Default
			continue
		}
		v, err := configdef.ParseValue(k.Name, k.Type, raw)
		if err != nil { // cannot happen: Validate parsed it
			errs = append(errs, sdk.FieldError{Key: k.Name, Message: err.Error()})
			continue
		}
		vals[k.Name] = v
	}
	return vals, errs
}

// crossCheck validates rules that involve more than one key. vals may lack
// keys whose own parsing failed.
func crossCheck(vals map[string]any) []sdk.FieldError {
	c := &checker{vals: vals}
	c.key()
	c.writeMode()
	c.record()
	c.bins()
	c.tls()
	if mx, ok := vals[KeyRetryBackoffMx].(int32); ok {
		if b, ok := vals[KeyRetryBackoff].(int32); ok && b > mx {
			c.add(KeyRetryBackoffMx, "retry.backoff.max.ms (%d) is below retry.backoff.ms (%d)", mx, b)
		}
	}
	return c.errs
}

// checker collects the errors of crossCheck, one group of related keys per
// method.
type checker struct {
	vals map[string]any
	errs []sdk.FieldError
}

func (c *checker) str(k string) string { s, _ := c.vals[k].(string); return s }

func (c *checker) add(k, format string, a ...any) {
	c.errs = append(c.errs, sdk.FieldError{Key: k, Message: fmt.Sprintf(format, a...)})
}

// effectivelyOnce is effectively.once's value (false when it did not parse).
func (c *checker) effectivelyOnce() bool { eo, _ := c.vals[KeyEffectivelyOne].(bool); return eo }

// emptyPathElement reports whether a dotted field path has an empty element.
func emptyPathElement(path string) bool {
	return path != "" && slices.Contains(strings.Split(path, "."), "")
}

// key checks where the record key comes from.
func (c *checker) key() {
	switch c.str(KeyKeySource) {
	case KeySourceValueField:
		if c.str(KeyKeyField) == "" {
			c.add(KeyKeyField, "key.source=value_field needs key.field, the value field that holds the key")
		}
	case KeySourceHeader:
		if c.str(KeyKeyHeader) == "" {
			c.add(KeyKeyHeader, "key.source=header needs key.header, the header that holds the key")
		}
	}
	if f := c.str(KeyKeyField); emptyPathElement(f) {
		c.add(KeyKeyField, "key.field %q has an empty path element", f)
	}
}

// writeMode checks what the write mode needs.
func (c *checker) writeMode() {
	mode := c.str(KeyWriteMode)
	if replayUnsafe(mode) && !c.effectivelyOnce() && c.vals[KeyEffectivelyOne] != nil {
		c.add(KeyWriteMode, "write.mode=%s needs effectively.once=true: without it a replay applies the records again", mode)
	}
	if ss := c.str(KeyStatsSet); ss != "" {
		if _, dynamic, _ := parseNameSource(c.str(KeyNamespace)); dynamic {
			c.add(KeyStatsSet, "stats.set needs a fixed aerospike.namespace to keep its counters in, not %s", c.str(KeyNamespace))
		}
	}
	switch mf := c.str(KeyMapKeyField); {
	case (mode == ModeMapPut || mode == ModeMapIncrement) && mf == "":
		c.add(KeyMapKeyField, "write.mode=%s needs map.key.field, the value field whose value is the map key", mode)
	case emptyPathElement(mf):
		c.add(KeyMapKeyField, "map.key.field %q has an empty path element", mf)
	}
}

// record checks what a record carries besides its bins: its TTL, its user key.
func (c *checker) record() {
	if f := c.str(KeyTTLField); emptyPathElement(f) {
		c.add(KeyTTLField, "ttl.field %q has an empty path element", f)
	}
	if sk, _ := c.vals[KeySendKey].(bool); sk && c.str(KeyKeyType) == KeyTypeDigest {
		c.add(KeySendKey, "key.type=digest has no user key to store; set send.key=false")
	}
}

// bins checks the bin names that bins.rename and bins.include produce:
// unique, not positions.bin, within Aerospike's length limit.
func (c *checker) bins() {
	eo, posBin := c.effectivelyOnce(), c.str(KeyPositionsBin)
	renames, _ := c.vals[KeyBinsRename].([]string)
	targets := map[string]string{}
	renamed := map[string]bool{}
	for _, pair := range renames {
		field, bin, _ := strings.Cut(pair, ":")
		field, bin = strings.TrimSpace(field), strings.TrimSpace(bin)
		if eo && bin == posBin {
			c.add(KeyBinsRename, "field %q is renamed to bin %q, which is positions.bin", field, bin)
		}
		if prev, dup := targets[bin]; dup {
			c.add(KeyBinsRename, "fields %q and %q are both renamed to bin %q", prev, field, bin)
		}
		targets[bin] = field
		renamed[field] = true
	}
	inc, _ := c.vals[KeyBinsInclude].([]string)
	for _, f := range inc {
		if renamed[f] {
			continue
		}
		if len(f) > maxBinName {
			c.add(KeyBinsInclude, "field %q would be bin %q of %d bytes; Aerospike bin names are at most %d bytes: add a bins.rename entry for it", f, f, len(f), maxBinName)
		}
		if eo && f == posBin {
			c.add(KeyBinsInclude, "field %q would be written to bin %q, which is positions.bin: rename it or change positions.bin", f, f)
		}
	}
}

// tls checks that the TLS files are readable and the client pair complete.
func (c *checker) tls() {
	if on, _ := c.vals[KeyTLSEnabled].(bool); !on {
		return
	}
	cert, key := c.str(KeyTLSCertFile), c.str(KeyTLSKeyFile)
	if (cert == "") != (key == "") {
		c.add(KeyTLSKeyFile, "aerospike.tls.cert.file and aerospike.tls.key.file must be set together")
	}
	for _, k := range []string{KeyTLSCAFile, KeyTLSCertFile, KeyTLSKeyFile} {
		if p := c.str(k); p != "" {
			if _, err := os.Stat(p); err != nil {
				c.add(k, "cannot read %s: %v", p, err)
			}
		}
	}
}

// clientPolicy builds the Aerospike client policy from the configuration.
func (c *Config) clientPolicy() (*as.ClientPolicy, error) {
	p := as.NewClientPolicy()
	p.User = c.User
	p.Password = c.Password
	p.ClusterName = c.ClusterName
	p.Timeout = c.ConnectTimeout
	p.FailIfNotConnected = true
	if c.TLS {
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if c.TLSCAFile != "" {
			pem, err := os.ReadFile(c.TLSCAFile)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", KeyTLSCAFile, err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("%s: no PEM certificate in %s", KeyTLSCAFile, c.TLSCAFile)
			}
			tc.RootCAs = pool
		}
		if c.TLSCertFile != "" {
			cert, err := tls.LoadX509KeyPair(c.TLSCertFile, c.TLSKeyFile)
			if err != nil {
				return nil, fmt.Errorf("%s/%s: %w", KeyTLSCertFile, KeyTLSKeyFile, err)
			}
			tc.Certificates = []tls.Certificate{cert}
		}
		p.TlsConfig = tc
	}
	return p, nil
}

// ttlSeconds converts the ttl key to the wire value.
func (c *Config) ttlSeconds() uint32 {
	switch c.TTL {
	case -1:
		return as.TTLDontExpire
	case -2:
		return as.TTLDontUpdate
	}
	return uint32(c.TTL)
}

// splitHost parses host[:port]; IPv6 literals need brackets.
func splitHost(s string) (string, int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", 0, errors.New("empty host")
	}
	host, portStr, err := net.SplitHostPort(s)
	if err != nil {
		// No port: the whole string is the host, unless it is a bare IPv6
		// literal or otherwise malformed.
		if strings.Contains(s, ":") && !strings.HasPrefix(s, "[") {
			return "", 0, fmt.Errorf("%q is not host:port (IPv6 addresses need brackets: [::1]:3000)", s)
		}
		host, portStr = strings.Trim(s, "[]"), strconv.Itoa(defaultPort)
	}
	if host == "" {
		return "", 0, fmt.Errorf("%q has no host", s)
	}
	if strings.ContainsAny(host, " /\t") {
		return "", 0, fmt.Errorf("%q is not a valid host name", host)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("%q has an invalid port %q (1-65535)", s, portStr)
	}
	return host, port, nil
}

// Validators. Each implements configdef.Validator on the parsed value.

type hostListValidator struct{}

func (hostListValidator) Validate(key string, v any) error {
	list, _ := v.([]string)
	if len(list) == 0 {
		return configdef.Invalid(key, "", "at least one host:port is needed")
	}
	for _, h := range list {
		if _, _, err := splitHost(h); err != nil {
			return configdef.Invalid(key, strings.Join(list, ","), err.Error())
		}
	}
	return nil
}
func (hostListValidator) String() string { return "host[:port],..." }

type ttlValidator struct{}

func (ttlValidator) Validate(key string, v any) error {
	n, _ := v.(int64)
	if n < -2 || n > maxTTL {
		return configdef.Invalid(key, n, fmt.Sprintf("must be -2 (keep), -1 (never expire), 0 (namespace default) or 1..%d seconds", maxTTL))
	}
	return nil
}
func (ttlValidator) String() string { return fmt.Sprintf("-2, -1, 0, [1,...,%d]", maxTTL) }

type nameValidator struct {
	what string
	max  int
}

func (n nameValidator) Validate(key string, v any) error {
	s, _ := v.(string)
	if _, dynamic, err := parseNameSource(s); err != nil {
		return configdef.Invalid(key, s, err.Error())
	} else if dynamic {
		return nil
	}
	switch {
	case s == "":
		return configdef.Invalid(key, s, "the "+n.what+" must not be empty")
	case len(s) > n.max:
		return configdef.Invalid(key, s, fmt.Sprintf("the %s is %d bytes; Aerospike allows at most %d", n.what, len(s), n.max))
	case strings.ContainsAny(s, ":;\x00"):
		return configdef.Invalid(key, s, "the "+n.what+" contains ':', ';' or NUL")
	}
	return nil
}
func (n nameValidator) String() string {
	return fmt.Sprintf("1 to %d bytes, ${value.<field>} or ${header.<name>}", n.max)
}

type setValidator struct{}

func (setValidator) Validate(key string, v any) error {
	s, _ := v.(string)
	if _, dynamic, err := parseNameSource(s); err != nil {
		return configdef.Invalid(key, s, err.Error())
	} else if dynamic {
		return nil
	}
	switch {
	case strings.Contains(strings.ReplaceAll(s, TopicPlaceholder, ""), "${"):
		return configdef.Invalid(key, s, "placeholders are "+TopicPlaceholder+" (inside a name), or ${value.<field>} or ${header.<name>} (the whole value)")
	case len(strings.ReplaceAll(s, TopicPlaceholder, "")) > maxSetName:
		return configdef.Invalid(key, s, fmt.Sprintf("set names are at most %d bytes (longer than %d)", maxSetName, maxSetName))
	case strings.ContainsAny(s, ":;\x00"):
		return configdef.Invalid(key, s, "set names must not contain ':', ';' or NUL")
	}
	return nil
}
func (setValidator) String() string {
	return "a set name, " + TopicPlaceholder + ", ${value.<field>}, ${header.<name>} or empty"
}

// Bins of the stats.set record.
const (
	StatsBinApplied    = "applied"
	StatsBinDuplicates = "duplicates"
)

type statsSetValidator struct{}

func (statsSetValidator) Validate(key string, v any) error {
	s, _ := v.(string)
	switch {
	case len(s) > maxSetName:
		return configdef.Invalid(key, s, fmt.Sprintf("set names are at most %d bytes", maxSetName))
	case strings.ContainsAny(s, ":;\x00") || strings.Contains(s, "${"):
		return configdef.Invalid(key, s, "a fixed set name without ':', ';', NUL or placeholders")
	}
	return nil
}
func (statsSetValidator) String() string { return "a fixed set name, or empty" }

type binNameValidator struct{}

func (binNameValidator) Validate(key string, v any) error {
	s, _ := v.(string)
	if reason := binNameProblem(s); reason != "" {
		return configdef.Invalid(key, s, reason)
	}
	return nil
}
func (binNameValidator) String() string { return fmt.Sprintf("1 to %d bytes", maxBinName) }

// binNameProblem says what is wrong with a bin name, or "".
func binNameProblem(s string) string {
	if s == "" {
		return "bin names must not be empty"
	}
	if len(s) > maxBinName {
		return fmt.Sprintf("bin name %q is %d bytes; Aerospike bin names are at most %d bytes", s, len(s), maxBinName)
	}
	return ""
}

type fieldListValidator struct{}

func (fieldListValidator) Validate(key string, v any) error {
	list, _ := v.([]string)
	if slices.Contains(list, "") {
		return configdef.Invalid(key, strings.Join(list, ","), "a field name is empty")
	}
	return nil
}
func (fieldListValidator) String() string { return "field,..." }

type renameValidator struct{}

func (renameValidator) Validate(key string, v any) error {
	list, _ := v.([]string)
	for _, pair := range list {
		field, bin, ok := strings.Cut(pair, ":")
		field, bin = strings.TrimSpace(field), strings.TrimSpace(bin)
		if !ok || field == "" {
			return configdef.Invalid(key, strings.Join(list, ","), fmt.Sprintf("%q is not field:bin", pair))
		}
		if reason := binNameProblem(bin); reason != "" {
			return configdef.Invalid(key, strings.Join(list, ","), fmt.Sprintf("%s (in %q)", reason, pair))
		}
	}
	return nil
}
func (renameValidator) String() string { return "field:bin,..." }
