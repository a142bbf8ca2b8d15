package chaos

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// The bad-record corpus: records the sink must dead-letter. Each is written
// into the source topic with the badHeader; the replication copies it like
// any record (it moves bytes), and the sink's converter, key mapping or
// Aerospike write refuses it.
var badRecordKinds = []string{
	"not-json", "binary", "truncated-json", "json-array", "json-string", "json-number",
	"empty-key", "null-key", "float-into-integer-counter",
}

// badRecord builds corpus record kind number id. counterKey is an existing
// counter's key, for the kinds that need one.
func badRecord(kind string, id int, counterKey string) (key, value []byte) {
	k := []byte("bad-" + strconv.Itoa(id))
	switch kind {
	case "not-json":
		return k, []byte(`{not json`)
	case "binary":
		return k, []byte{0, 0xff, 0xfe, 0x01, 'c', 'h', 'a', 'o', 's'}
	case "truncated-json":
		return k, []byte(`{"key":"k1","amount":`)
	case "json-array":
		return k, []byte(`[1,2,3]`)
	case "json-string":
		return k, []byte(`"seven"`)
	case "json-number":
		return k, []byte(`42`)
	case "empty-key":
		return []byte{}, []byte(`{"amount":5}`)
	case "null-key":
		return nil, []byte(`{"amount":5}`)
	case "float-into-integer-counter":
		// Increment mode adds numbers: a float added to an integer bin is
		// refused by the server (BIN_TYPE_ERROR).
		return []byte(counterKey), []byte(`{"amount":2.5}`)
	}
	panic("unknown bad record kind " + kind)
}

// produceBad writes n corpus records into random source partitions.
func (r *run) produceBad(ctx context.Context, rng *rand.Rand, n int) (int, []string, error) {
	var kinds []string
	done := make(chan kafka.Event, n)
	sent := 0
	for range n {
		kind := badRecordKinds[rng.IntN(len(badRecordKinds))]
		var counterKey string
		if kind == "float-into-integer-counter" {
			// Only a counter that exists holds an integer bin to refuse
			// the float; a new key would just be created as a float.
			c := "k" + strconv.Itoa(rng.IntN(r.pl.cardinality))
			if _, ok := r.aero.amount(r.aero.set, c); !ok {
				kind = "not-json"
			} else {
				counterKey = c
			}
		}
		r.badMu.Lock()
		r.badSeq++
		id := r.badSeq
		r.badMu.Unlock()
		key, value := badRecord(kind, id, counterKey)
		topic := r.pl.source
		tag := strconv.Itoa(id) + ":" + kind
		m := &kafka.Message{
			TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: int32(rng.IntN(r.pl.partitions))},
			Key:            key, Value: value,
			Headers: []kafka.Header{{Key: badHeader, Value: []byte(tag)}},
			Opaque:  tag, // delivery reports carry no headers
		}
		if err := r.producer.Produce(m, done); err != nil {
			return sent, kinds, err
		}
		sent++
		kinds = append(kinds, kind)
	}
	var firstErr error
	for range sent {
		select {
		case ev := <-done:
			m := ev.(*kafka.Message)
			if m.TopicPartition.Error != nil && firstErr == nil {
				firstErr = m.TopicPartition.Error
			}
			if m.TopicPartition.Error == nil {
				r.badMu.Lock()
				r.badSent[m.Opaque.(string)] = true
				r.badMu.Unlock()
			}
		case <-time.After(5 * time.Minute):
			return sent, kinds, fmt.Errorf("bad records not acknowledged within 5 min")
		}
	}
	return sent, kinds, firstErr
}

// restCase is one invalid REST request and the answer it must get.
type restCase struct {
	name   string
	method string
	path   string
	body   string
	// want is the exact status when non-zero; otherwise any 4xx.
	want int
	// ctype is the Content-Type; empty means application/json when there
	// is a body, "-" sends none.
	ctype string
	// headers are extra request headers, name then value.
	headers []string
}

func (r *run) restCorpus() []restCase {
	sinkCfg := r.pl.config(connSink)
	withKV := func(cfg map[string]string, kv ...string) string {
		c := maps.Clone(cfg)
		for i := 0; i+1 < len(kv); i += 2 {
			c[kv[i]] = kv[i+1]
		}
		b, _ := json.Marshal(c)
		return string(b)
	}
	dg := r.pl.config(connDatagen)
	big := `{"name":"chaos-bad-big","config":{"connector.class":"DatagenSource","x":"` + strings.Repeat("x", 2<<20) + `"}}`
	return []restCase{
		{"malformed JSON body", "POST", "/connectors", `{not json`, 400, "", nil},
		{"create without config", "POST", "/connectors", `{"name":"chaos-bad-1"}`, 400, "", nil},
		{"unknown connector class", "POST", "/connectors", `{"name":"chaos-bad-2","config":{"connector.class":"NoSuchConnector"}}`, 400, "", nil},
		{"tasks.max not a number", "PUT", "/connectors/chaos-bad-3/config", withKV(dg, "tasks.max", "many"), 400, "", nil},
		{"tasks.max zero", "PUT", "/connectors/chaos-bad-3/config", withKV(dg, "tasks.max", "0"), 400, "", nil},
		{"name in body differs from path", "PUT", "/connectors/" + connSink + "/config", withKV(sinkCfg, "name", "someone-else"), 400, "", nil},
		{"invalid errors.tolerance", "PUT", "/connectors/" + connSink + "/config", withKV(sinkCfg, "errors.tolerance", "sometimes"), 400, "", nil},
		{"sink without hosts", "PUT", "/connectors/" + connSink + "/config", withKV(sinkCfg, "aerospike.hosts", ""), 400, "", nil},
		{"invalid write mode by PATCH", "PATCH", "/connectors/" + connSink + "/config", `{"write.mode":"multiply"}`, 400, "", nil},
		{"unknown transform", "PUT", "/connectors/" + connDatagen + "/config", withKV(dg, "transforms", "t", "transforms.t.type", "com.example.NoSuchSMT"), 400, "", nil},
		{"datagen with negative iterations", "PUT", "/connectors/" + connDatagen + "/config", withKV(dg, "iterations", "-5"), 400, "", nil},
		{"connector name ..", "POST", "/connectors", `{"name":"..","config":{"connector.class":"DatagenSource"}}`, 400, "", nil},
		{"status of unknown connector", "GET", "/connectors/chaos-nobody/status", "", 404, "", nil},
		{"restart unknown connector", "POST", "/connectors/chaos-nobody/restart", "", 404, "", nil},
		{"pause unknown connector", "PUT", "/connectors/chaos-nobody/pause", "", 404, "", nil},
		{"delete unknown connector", "DELETE", "/connectors/chaos-nobody", "", 404, "", nil},
		{"patch unknown connector", "PATCH", "/connectors/chaos-nobody/config", `{"tasks.max":"1"}`, 404, "", nil},
		{"unknown task", "GET", "/connectors/" + connSink + "/tasks/99/status", "", 404, "", nil},
		{"boolean query not a boolean", "POST", "/connectors/" + connSink + "/restart?includeTasks=maybe", "", 400, "", nil},
		{"body over rest.request.max.bytes", "POST", "/connectors", big, 413, "", nil},
		{"alter offsets of a running connector", "PATCH", "/connectors/" + connDatagen + "/offsets", `{"offsets":[]}`, 0, "", nil},
		{"garbage offsets body", "PATCH", "/connectors/" + connDatagen + "/offsets", `[[[`, 400, "", nil},
		{"unsigned internal task configs", "POST", "/connectors/" + connSink + "/tasks", `[{"a":"b"}]`, 0, "", nil},
		{"unsigned internal fencing", "PUT", "/connectors/" + connRepl + "/fence", "", 0, "", nil},
		{"invalid logger level", "PUT", "/admin/loggers/connectd", `{"level":"LOUD"}`, 0, "", nil},
		{"unknown path", "GET", "/no/such/path", "", 404, "", nil},
		{"validate with a tampered plugin binary", "PUT", "/connector-plugins/" + tamperedClass + "/config/validate",
			`{"connector.class":"` + tamperedClass + `","kafka.topic":"x"}`, 0, "", nil},
		{"create with a tampered plugin binary", "PUT", "/connectors/chaos-bad-tampered/config",
			`{"connector.class":"` + tamperedClass + `","kafka.topic":"x"}`, 0, "", nil},

		// Numbers at and past the edges of their types.
		{"tasks.max past the INT range", "PUT", "/connectors/chaos-bad-4/config", withKV(dg, "tasks.max", "2147483648"), 400, "", nil},
		{"tasks.max negative", "PUT", "/connectors/chaos-bad-4/config", withKV(dg, "tasks.max", "-1"), 400, "", nil},
		{"tasks.max a fraction", "PUT", "/connectors/chaos-bad-4/config", withKV(dg, "tasks.max", "1.5"), 400, "", nil},
		{"tasks.max past the admission limit", "PUT", "/connectors/chaos-bad-4/config", withKV(dg, "tasks.max", "100000"), 400, "", nil},
		{"config past connector.config.max.bytes", "PUT", "/connectors/chaos-bad-4/config", withKV(dg, "padding", strings.Repeat("x", 300<<10)), 400, "", nil},
		{"iterations past the LONG range", "PUT", "/connectors/chaos-bad-4/config", withKV(dg, "iterations", "-9223372036854775809"), 400, "", nil},
		{"tasks.max a JSON number past every range", "POST", "/connectors",
			`{"name":"chaos-bad-5","config":{"connector.class":"DatagenSource","kafka.topic":"x","tasks.max":1e400}}`, 400, "", nil},
		// Wrong JSON types and nulls where strings belong.
		{"config value an object", "POST", "/connectors", `{"name":"chaos-bad-5","config":{"connector.class":"DatagenSource","tasks.max":{}}}`, 400, "", nil},
		{"config value null", "POST", "/connectors", `{"name":"chaos-bad-5","config":{"connector.class":null}}`, 400, "", nil},
		{"config an array", "POST", "/connectors", `{"name":"chaos-bad-5","config":["connector.class","DatagenSource"]}`, 400, "", nil},
		{"name null", "POST", "/connectors", `{"name":null,"config":{"connector.class":"DatagenSource"}}`, 400, "", nil},
		{"name a number", "POST", "/connectors", `{"name":5,"config":{"connector.class":"DatagenSource"}}`, 400, "", nil},
		{"initial_state unknown", "POST", "/connectors", `{"name":"chaos-bad-5","config":` + withKV(dg, "name", "chaos-bad-5") + `,"initial_state":"EXPLODED"}`, 400, "", nil},
		{"body a JSON string", "POST", "/connectors", `"chaos"`, 400, "", nil},
		{"body nested 100000 deep", "POST", "/connectors", strings.Repeat("[", 100000) + strings.Repeat("]", 100000), 400, "", nil},
		{"trailing data after the body", "POST", "/connectors", `{"name":"chaos-bad-5","config":{}} {}`, 400, "", nil},
		// Names that break paths, or are not names.
		{"name .. in the path", "PUT", "/connectors/%2E%2E/config", withKV(dg, "name", ".."), 400, "", nil},
		{"blank name", "POST", "/connectors", `{"name":"   ","config":{"connector.class":"DatagenSource"}}`, 400, "", nil},
		{"control character in the name", "POST", "/connectors", `{"name":"chaos\u0007bad","config":{"connector.class":"DatagenSource"}}`, 400, "", nil},
		{"control character in the path", "PUT", "/connectors/chaos%00bad/config", withKV(dg, "name", "chaos\x00bad"), 400, "", nil},
		{"traversal in the path", "GET", "/connectors/..%2F..%2Fetc%2Fpasswd/status", "", 404, "", nil},
		{"empty name segment", "GET", "/connectors//status", "", 404, "", nil},
		{"very long name in the path", "GET", "/connectors/" + strings.Repeat("n", 8000) + "/status", "", 404, "", nil},
		{"task id past the INT range", "GET", "/connectors/" + connSink + "/tasks/99999999999999999999/status", "", 0, "", nil},
		{"negative task id", "POST", "/connectors/" + connSink + "/tasks/-1/restart", "", 0, "", nil},
		// Content types and bodies that are not JSON.
		// As in Kafka Connect (Jersey), a body that is not declared JSON is
		// a 415 and an Accept without JSON a 406, before any decoding.
		{"form-encoded body", "POST", "/connectors", "name=chaos-bad-6&config=x", 415, "application/x-www-form-urlencoded", nil},
		{"XML body", "POST", "/connectors", `<connector name="chaos-bad-6"/>`, 415, "application/xml", nil},
		{"JSON body declared as text", "PUT", "/connectors/chaos-bad-6/config", withKV(dg, "name", "chaos-bad-6"), 415, "text/plain", nil},
		{"JSON body without a Content-Type", "PATCH", "/connectors/" + connSink + "/config", `{"tasks.max":"1"}`, 415, "-", nil},
		{"malformed Content-Type", "POST", "/connectors", `{"name":"chaos-bad-6","config":{}}`, 400, "json", nil},
		{"Accept without JSON", "PUT", "/connectors/" + connSink + "/pause", "", 406, "", []string{"Accept", "text/html"}},
		{"create without a body", "POST", "/connectors", "", 400, "-", nil},
		{"PATCH without a body", "PATCH", "/connectors/" + connSink + "/config", "", 400, "-", nil},
		// The type is checked before the body is read.
		{"body over rest.request.max.bytes as text", "PUT", "/connectors/chaos-bad-6/config", big, 415, "text/plain", nil},
		// Query and header values that are not what they claim.
		{"forward not a boolean", "POST", "/connectors/" + connSink + "/restart?forward=banana", "", 400, "", nil},
		{"forged inter-worker signature", "POST", "/connectors/" + connSink + "/tasks", `[{"a":"b"}]`, 0, "",
			[]string{"X-Connect-Authorization", "AAAA", "X-Connect-Request-Signature-Algorithm", "HmacSHA256", "X-Connectd-Request-Timestamp", "1"}},
		{"unsupported method", "PROPFIND", "/connectors", "", 405, "", nil},
	}
}

// badREST replays the corpus against up workers and checks every answer
// is the expected 4xx and that nothing changed.
func (r *run) badREST(ctx context.Context, rng *rand.Rand) (n, bad int) {
	hc := &http.Client{Timeout: 60 * time.Second}
	for i, c := range r.restCorpus() {
		ws := r.cl.upWorkers()
		if len(ws) == 0 {
			r.violate("bad REST input: no worker is up")
			return n, bad
		}
		w := ws[(i+rng.IntN(len(ws)))%len(ws)]
		code, body, err := doRaw(ctx, hc, w.URL, c)
		// A rebalance answers 409 with Retry-After; ask again, as a client
		// would, so that the check is about the input.
		for try := 0; err == nil && code == http.StatusConflict && try < 20 && strings.Contains(strings.ToLower(body), "rebalanc"); try++ {
			sleepCtx(ctx, 500*time.Millisecond)
			code, body, err = doRaw(ctx, hc, w.URL, c)
		}
		n++
		r.restCounts.total++
		ok := err == nil && code >= 400 && code < 500 && (c.want == 0 || code == c.want)
		if !ok {
			bad++
			r.violate("bad REST input %q (%s %s) to %s: got %d %v %.300s, want %s", c.name, c.method, c.path, w.Name, code, err, body, wantText(c.want))
			continue
		}
		r.restCounts.refused++
		r.restCounts.byCode[code]++
	}
	// Nothing the corpus sent may have changed the cluster.
	cl := r.cl.any(rng.IntN(8))
	if cl == nil {
		return n, bad
	}
	names, err := cl.Connectors(ctx)
	if err != nil {
		r.violate("listing connectors after the bad REST input: %v", err)
		return n, bad
	}
	if len(names) != len(connectorNames) {
		r.violate("after the bad REST input the cluster has connectors %v, want exactly %v", names, connectorNames)
	}
	for _, name := range connectorNames {
		got, err := cl.Config(ctx, name)
		if err != nil {
			r.violate("config of %s after the bad REST input: %v", name, err)
			continue
		}
		delete(got, "name")
		want := r.pl.config(name)
		delete(want, "name")
		if !maps.Equal(got, want) {
			r.violate("the bad REST input changed %s's config: %v, want %v", name, got, want)
		}
	}
	return n, bad
}

// request builds the case's request to the worker at base.
func (c restCase) request(ctx context.Context, base string) (*http.Request, error) {
	var rd io.Reader
	if c.body != "" {
		rd = strings.NewReader(c.body)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, base+c.path, rd)
	if err != nil {
		return nil, err
	}
	switch {
	case c.ctype == "-":
	case c.ctype != "":
		req.Header.Set("Content-Type", c.ctype)
	case c.body != "":
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(c.headers); i += 2 {
		req.Header.Set(c.headers[i], c.headers[i+1])
	}
	return req, nil
}

func wantText(want int) string {
	if want == 0 {
		return "a 4xx"
	}
	return strconv.Itoa(want)
}

func doRaw(ctx context.Context, hc *http.Client, base string, c restCase) (int, string, error) {
	req, err := c.request(ctx, base)
	if err != nil {
		return 0, "", err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, string(b), nil
}

// tamperedClass is a plugin whose binary no longer matches its manifest's
// checksum: every launch must refuse it.
const tamperedClass = "ChaosTamperedSource"

// installTampered drops a copy of an installed plugin into the plugin
// directory under another class, with the original's checksum in its
// manifest, and then changes the copy's bytes.
func installTampered(pluginDir, class string) error {
	// Each installed version has its own manifest, <class>@<version>.json.
	ms, err := filepath.Glob(filepath.Join(pluginDir, class+"@*.json"))
	if err != nil || len(ms) == 0 {
		return fmt.Errorf("no manifest of %s in %s (%v)", class, pluginDir, err)
	}
	mf, err := os.ReadFile(ms[0])
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(mf, &m); err != nil {
		return err
	}
	src := filepath.Join(pluginDir, m["binary"].(string))
	bin, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(bin)
	if hex.EncodeToString(sum[:]) != m["sha256"] {
		return fmt.Errorf("manifest of %s does not match its binary before tampering", class)
	}
	m["name"] = tamperedClass
	m["binary"] = "connectd-chaos-tampered"
	out, _ := json.MarshalIndent(m, "", "  ")
	tampered := append(bytes.Clone(bin), []byte("\x00tampered")...)
	if err := os.WriteFile(filepath.Join(pluginDir, "connectd-chaos-tampered"), tampered, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(pluginDir, tamperedClass+".json"), out, 0o644)
}

// installGarbage asks `connectd plugin install` to install a file that is
// not a plugin; it must refuse with a non-zero exit and install nothing.
func installGarbage(ctx context.Context, connectd, pluginDir, dir string) error {
	garbage := filepath.Join(dir, "connectd-not-a-plugin")
	if err := os.WriteFile(garbage, []byte("#!/bin/sh\necho not a plugin\nexit 3\n"), 0o755); err != nil {
		return err
	}
	before, _ := filepath.Glob(filepath.Join(pluginDir, "*.json"))
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := exec.CommandContext(cctx, connectd, "plugin", "install", "--plugin-path", pluginDir, garbage).CombinedOutput()
	if err == nil {
		return fmt.Errorf("connectd plugin install accepted a non-plugin binary: %s", out)
	}
	after, _ := filepath.Glob(filepath.Join(pluginDir, "*.json"))
	if len(after) != len(before) {
		return fmt.Errorf("a refused install left a manifest behind: %v", after)
	}
	return nil
}
