package hostile

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
)

// fuzzReq is one generated request.
type fuzzReq struct {
	method  string
	path    string // escaped, with the query
	body    []byte // nil: no body
	ctype   string // "": no Content-Type
	headers []string
}

func (r fuzzReq) String() string {
	p, b := r.path, string(r.body)
	if len(p) > 200 {
		p = p[:200] + fmt.Sprintf("…(%d bytes)", len(r.path))
	}
	if len(b) > 300 {
		b = b[:300] + fmt.Sprintf("…(%d bytes)", len(r.body))
	}
	return fmt.Sprintf("%s %s content-type=%q headers=%q body=%q", r.method, p, r.ctype, r.headers, b)
}

// gen draws requests from one seeded source, so a seed replays a run.
type gen struct {
	rng    *rand.Rand
	topic  string // an existing topic for valid datagen configs
	victim string // a connector that exists when the run starts
	pool   []string
	// maxBody is the worker's rest.request.max.bytes.
	maxBody int
}

func (g *gen) pick(xs []string) string { return xs[g.rng.IntN(len(xs))] }

func (g *gen) chance(p float64) bool { return g.rng.Float64() < p }

// hostileSegments are connector, plugin and logger path segments, already
// escaped: traversal, encoded separators, empty-looking, control
// characters, bidi and emoji, invalid UTF-8, bad escapes, very long.
func hostileSegments() []string {
	return []string{
		"..", ".", "%2E%2E", "%2e", "..%2F..%2Fetc%2Fpasswd", "%2F", "a%2Fb", "%2F%2F", "%5C..%5C",
		"%00", "a%00b", "%0A", "a%0D%0Ab", "%7F", "%1B%5B31m", "%20", "%20%20%20", "%09",
		"%E2%80%AE", "%F0%9F%94%A5", "%C3%A9t%C3%A9", "%EF%BB%BF", "%FF%FE", "%C0%AF", "%ED%A0%80",
		"%ZZ", "%", "%2", "%25", "%2525", "%3F", "%23", "name%3Fx%3D1", "%3B", "*", "~", "%7B%7D",
		strings.Repeat("n", 5000), strings.Repeat("%C3%A9", 1500), strings.Repeat("%2F", 1000),
	}
}

// hostileNames are connector names as they appear in JSON bodies.
func hostileNames() []string {
	return []string{
		"", " ", "\t", "..", ".", "../etc", "a/b", "/", "a\x00b", "\n", "a\rb", "\x7f", "\u202e", "\u200b",
		"🔥", "名前", "é", "\ufeff", "%2F", "name?x=1", "a#b", strings.Repeat("n", 5000), strings.Repeat("é", 2000),
	}
}

// nameSegment is a {connector} segment.
func (g *gen) nameSegment() string {
	switch n := g.rng.IntN(10); {
	case n < 3:
		return url.PathEscape(g.victim)
	case n < 6:
		return url.PathEscape(g.pick(g.pool))
	case n < 8:
		return g.pick(hostileSegments())
	default:
		return url.PathEscape(g.pick(hostileNames()))
	}
}

func (g *gen) segment(param string) string {
	switch param {
	case "connector":
		return g.nameSegment()
	case "task":
		return g.pick([]string{"0", "1", "-1", "99", "2147483648", "99999999999999999999", "1e3", "0x1", "abc", "%20", "0.5", "%2F"})
	case "plugin":
		if g.chance(0.4) {
			return g.pick([]string{datagenClass, "datagensource", "org.example.NoSuch", "DatagenSource%00"})
		}
		return g.pick(hostileSegments())
	case "logger":
		if g.chance(0.4) {
			return g.pick([]string{"root", "connectd", "org.apache.kafka", "a.b.c"})
		}
		return g.pick(hostileSegments())
	}
	return g.pick(hostileSegments())
}

// boundaryJSON are JSON values at the edges of every type.
func boundaryJSON() []string {
	return []string{
		`null`, `true`, `false`, `0`, `-0`, `-1`, `1`, `2147483647`, `2147483648`, `-2147483648`, `-2147483649`,
		`9223372036854775807`, `9223372036854775808`, `-9223372036854775809`, `18446744073709551616`,
		`1e308`, `1e400`, `-1e400`, `0.5`, `1.0`, `1E2`, `-0.0e-0`, `123456789012345678901234567890`,
		`""`, `" "`, `"\u0000"`, `"\ud800"`, `"\u202e"`, `"🔥"`, `"-1"`, `"1e400"`, `"NaN"`, `"null"`,
		`[]`, `{}`, `[null]`, `{"":null}`, `[[[]]]`, `{"a":{"b":{"c":{}}}}`,
	}
}

// value is a random JSON value: a boundary value, a long string or a
// small nested one.
func (g *gen) value(depth int) string {
	switch n := g.rng.IntN(10); {
	case n < 6 || depth > 3:
		return g.pick(boundaryJSON())
	case n < 7:
		return strconv.Quote(strings.Repeat(g.pick([]string{"x", "é", "🔥", `\`, `"`}), 1+g.rng.IntN(50000)))
	case n < 9:
		var b strings.Builder
		b.WriteByte('{')
		for i := range g.rng.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(g.key())
			b.Write(k)
			b.WriteByte(':')
			b.WriteString(g.value(depth + 1))
		}
		b.WriteByte('}')
		return b.String()
	default:
		var b strings.Builder
		b.WriteByte('[')
		for i := range g.rng.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(g.value(depth + 1))
		}
		b.WriteByte(']')
		return b.String()
	}
}

// key is a config key: a real one (so that the value reaches the
// validators) or an odd one.
func (g *gen) key() string {
	return g.pick([]string{
		"name", "connector.class", "tasks.max", "kafka.topic", "iterations", "max.interval", "key.cardinality", "random.seed",
		"quickstart", "transforms", "transforms.t.type", "predicates", "errors.tolerance", "errors.deadletterqueue.topic.name",
		"key.converter", "value.converter", "header.converter", "exactly.once.support", "transaction.boundary", "config.action.reload",
		"", " ", "\u0000", "🔥", strings.Repeat("k", 10000), "a.b.c.d.e.f.g.h", "tasks.max ", "TASKS.MAX",
	})
}

// configValue is a value for key: a string the validators know how to
// reject, or any JSON value.
func (g *gen) configValue(key string) string {
	if g.chance(0.5) {
		return g.value(0)
	}
	s := g.pick([]string{"", " ", "-1", "0", "1", "2", "abc", "1.5", "2147483648", "-2147483649", "9223372036854775808",
		"1e3", "0x10", "+1", " 1 ", "NaN", "Infinity", "true", "null", datagenClass, "NoSuchConnector", "../../bin/sh",
		"org.apache.kafka.connect.json.JsonConverter", "all", "none", "counter", "pageviews", "exactly.once", "required",
		g.topic, "no-such-topic", strings.Repeat("v", 100000)})
	return strconv.Quote(s)
}

// config is a DatagenSource config for name with a few keys changed,
// added or removed; nameKey false leaves out the name key.
func (g *gen) config(name string, nameKey bool) map[string]string {
	cfg := map[string]string{}
	for k, v := range datagenConfig(name, g.topic) {
		cfg[k] = strconv.Quote(v)
	}
	if !nameKey {
		delete(cfg, "name")
	}
	for range g.rng.IntN(4) {
		switch k := g.key(); g.rng.IntN(4) {
		case 0:
			delete(cfg, k)
		default:
			cfg[k] = g.configValue(k)
		}
	}
	safe(cfg)
	return cfg
}

// safe keeps the generated configs that the worker accepts cheap: many
// tasks exhaust the worker (admission limits are their own work) and
// max.interval under 100 ms makes datagen spin. It reads values as the
// REST API does (strings as they are, numbers as their JSON text, trimmed
// like the config parser).
func safe(cfg map[string]string) {
	num := func(k string, bits int) (int64, bool) {
		raw, ok := cfg[k]
		if !ok {
			return 0, false
		}
		s := raw
		var str string
		if json.Unmarshal([]byte(raw), &str) == nil {
			s = str
		}
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, bits)
		return n, err == nil
	}
	if n, ok := num("tasks.max", 32); ok && n > 2 {
		cfg["tasks.max"] = `"2147483648"` // out of range: refused
	}
	if n, ok := num("max.interval", 64); ok && n >= 0 && n < 100 {
		cfg["max.interval"] = `"500"`
	}
}

func object(fields map[string]string) []byte {
	var b strings.Builder
	b.WriteByte('{')
	first := true
	for k, v := range fields {
		if !first {
			b.WriteByte(',')
		}
		first = false
		kq, _ := json.Marshal(k)
		b.Write(kq)
		b.WriteByte(':')
		b.WriteString(v)
	}
	b.WriteByte('}')
	return []byte(b.String())
}

// bodyName is a connector name for a request body.
func (g *gen) bodyName() string {
	switch n := g.rng.IntN(10); {
	case n < 5:
		return g.pick(g.pool)
	case n < 6:
		return g.victim
	default:
		return g.pick(hostileNames())
	}
}

// createBody is POST /connectors's body, more or less well formed.
func (g *gen) createBody() []byte {
	name := g.bodyName()
	nq, _ := json.Marshal(name)
	fields := map[string]string{
		"name":   string(nq),
		"config": string(object(g.config(name, g.chance(0.7)))),
	}
	if g.chance(0.5) {
		fields["initial_state"] = g.pick([]string{`"RUNNING"`, `"PAUSED"`, `"STOPPED"`, `"paused"`, `""`, `"BOGUS"`, `null`, `1`, `[]`})
	}
	switch g.rng.IntN(6) {
	case 0:
		fields[g.pick([]string{"name", "config", "initial_state"})] = g.value(0)
	case 1:
		delete(fields, g.pick([]string{"name", "config"}))
	case 2:
		fields[g.key()] = g.value(0)
	}
	return object(fields)
}

// offsetsBody is PATCH /connectors/{c}/offsets's body.
func (g *gen) offsetsBody() []byte {
	switch g.rng.IntN(4) {
	case 0:
		return []byte(`{"offsets":` + g.value(0) + `}`)
	case 1:
		return []byte(`{"offsets":[{"partition":` + g.value(0) + `,"offset":` + g.value(0) + `}]}`)
	case 2:
		return []byte(`{"offsets":[{"partition":{"kafka_topic":` + g.value(0) + `,"kafka_partition":` + g.value(0) +
			`},"offset":{"kafka_offset":` + g.value(0) + `}}]}`)
	default:
		return []byte(`{"offsets":[{"partition":{"task":0},"offset":{"seq":` + g.value(0) + `}}]}`)
	}
}

// hostileBody replaces a route's body: malformed, deeply nested,
// oversized, not UTF-8, or any JSON value.
func (g *gen) hostileBody() []byte {
	switch g.rng.IntN(12) {
	case 0:
		return []byte{}
	case 1:
		return []byte(g.pick([]string{`{not json`, `{"a":`, `{"a":1}{"b":2}`, `{"a":1} trailing`, "\x00\x01\x02", `'single'`, `{"a":1,}`, `[1,2`, `{"a":"\x01"}`, `NaN`}))
	case 2:
		n := 20000 + g.rng.IntN(100000)
		return []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
	case 3:
		n := 20000 + g.rng.IntN(50000)
		return []byte(strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n))
	case 4:
		return []byte(`{"name":"` + "\xff\xfe\xfd" + `","config":{"connector.class":"DatagenSource","kafka.topic":"` + g.topic + `"}}`)
	case 5:
		// Just over the cap, in one string value.
		return []byte(`{"name":"fz-big","config":{"x":"` + strings.Repeat("x", g.maxBody) + `"}}`)
	case 6:
		// Many small keys, just under the cap.
		var b strings.Builder
		b.WriteByte('{')
		for i := 0; b.Len() < g.maxBody-64; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"k%d":"v"`, i)
		}
		b.WriteByte('}')
		return []byte(b.String())
	case 7:
		return []byte("\xef\xbb\xbf" + `{"name":"fz-a"}`) // a byte-order mark
	default:
		return []byte(g.value(0))
	}
}

// request draws one request for a route.
func (g *gen) request(rt route) fuzzReq {
	r := fuzzReq{method: rt.method}
	if g.chance(0.1) {
		r.method = g.pick([]string{"GET", "PUT", "POST", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE", "PROPFIND"})
	}
	var p strings.Builder
	for _, seg := range strings.Split(strings.Trim(rt.pattern, "/"), "/") {
		if seg == "" {
			continue
		}
		p.WriteByte('/')
		if strings.HasPrefix(seg, "{") {
			p.WriteString(g.segment(strings.Trim(seg, "{}")))
		} else {
			p.WriteString(seg)
		}
	}
	path := p.String()
	if path == "" {
		path = "/"
	}
	if g.chance(0.05) {
		path = g.pick([]string{path + "/", path + "//", "/" + path, path + "/..", path + "/%2e%2e", "/%2e%2e" + path, path + ";x=1"})
	}
	if g.chance(0.3) {
		path += g.pick([]string{"?expand=status", "?expand=info&expand=status", "?expand=bogus", "?includeTasks=maybe",
			"?includeTasks=true&onlyFailed=true", "?includeTasks=&onlyFailed=", "?forward=banana", "?forward=false",
			"?scope=cluster", "?scope=bogus", "?%ZZ=1", "?a=" + strings.Repeat("q", 20000), "?expand=status&expand=status&expand=info",
			"?includeTasks=TRUE", "?forward=1&forward=0"})
	}
	r.path = path

	switch {
	case rt.method == "POST" && rt.pattern == "/connectors":
		r.body = g.createBody()
	case strings.HasSuffix(rt.pattern, "/config/validate"):
		r.body = object(g.config(g.bodyName(), g.chance(0.5)))
	case strings.HasSuffix(rt.pattern, "/config") && rt.method == "PUT":
		r.body = object(g.config(g.bodyName(), g.chance(0.5)))
	case strings.HasSuffix(rt.pattern, "/config") && rt.method == "PATCH":
		fields := map[string]string{}
		for range 1 + g.rng.IntN(3) {
			k := g.key()
			fields[k] = g.configValue(k)
		}
		safe(fields)
		r.body = object(fields)
	case strings.HasSuffix(rt.pattern, "/offsets") && rt.method == "PATCH":
		r.body = g.offsetsBody()
	case strings.HasPrefix(rt.pattern, "/admin/loggers/") && rt.method == "PUT":
		// No DEBUG or TRACE: a chatty root logger would slow the run down.
		r.body = []byte(`{"level":` + g.pick([]string{`"INFO"`, `"WARN"`, `"ERROR"`, `"info"`, `"LOUD"`, `""`, `null`, `7`, `[]`, `"OFF"`}) + `}`)
	case rt.internal:
		r.body = []byte(`[` + g.value(0) + `]`)
	case g.chance(0.2):
		r.body = []byte(g.value(0))
	}
	if g.chance(0.25) {
		r.body = g.hostileBody()
	}
	r.ctype = "application/json"
	if r.body == nil && g.chance(0.7) {
		r.ctype = ""
	}
	if g.chance(0.2) {
		r.ctype = g.pick([]string{"", "text/plain", "application/x-www-form-urlencoded", "application/json; charset=utf-16",
			"multipart/form-data; boundary=x", "application/xml", "a/b/c;;;=", "application/JSON"})
	}
	if g.chance(0.08) {
		// A forged inter-worker signature.
		r.headers = []string{
			"X-Connect-Authorization", g.pick([]string{"", "AAAA", "not base64!", strings.Repeat("A", 4000)}),
			"X-Connect-Request-Signature-Algorithm", g.pick([]string{"HmacSHA256", "none", "HmacMD5", ""}),
			"X-Connectd-Request-Timestamp", g.pick([]string{"0", "-1", "99999999999999999999", "abc", strconv.FormatInt(g.rng.Int64(), 10)}),
		}
	}
	return r
}
