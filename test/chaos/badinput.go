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
		{"malformed JSON body", "POST", "/connectors", `{not json`, 400},
		{"create without config", "POST", "/connectors", `{"name":"chaos-bad-1"}`, 400},
		{"unknown connector class", "POST", "/connectors", `{"name":"chaos-bad-2","config":{"connector.class":"NoSuchConnector"}}`, 400},
		{"tasks.max not a number", "PUT", "/connectors/chaos-bad-3/config", withKV(dg, "tasks.max", "many"), 400},
		{"tasks.max zero", "PUT", "/connectors/chaos-bad-3/config", withKV(dg, "tasks.max", "0"), 400},
		{"name in body differs from path", "PUT", "/connectors/" + connSink + "/config", withKV(sinkCfg, "name", "someone-else"), 400},
		{"invalid errors.tolerance", "PUT", "/connectors/" + connSink + "/config", withKV(sinkCfg, "errors.tolerance", "sometimes"), 400},
		{"sink without hosts", "PUT", "/connectors/" + connSink + "/config", withKV(sinkCfg, "aerospike.hosts", ""), 400},
		{"invalid write mode by PATCH", "PATCH", "/connectors/" + connSink + "/config", `{"write.mode":"multiply"}`, 400},
		{"unknown transform", "PUT", "/connectors/" + connDatagen + "/config", withKV(dg, "transforms", "t", "transforms.t.type", "com.example.NoSuchSMT"), 400},
		{"datagen with negative iterations", "PUT", "/connectors/" + connDatagen + "/config", withKV(dg, "iterations", "-5"), 400},
		{"connector name ..", "POST", "/connectors", `{"name":"..","config":{"connector.class":"DatagenSource"}}`, 400},
		{"status of unknown connector", "GET", "/connectors/chaos-nobody/status", "", 404},
		{"restart unknown connector", "POST", "/connectors/chaos-nobody/restart", "", 404},
		{"pause unknown connector", "PUT", "/connectors/chaos-nobody/pause", "", 404},
		{"delete unknown connector", "DELETE", "/connectors/chaos-nobody", "", 404},
		{"patch unknown connector", "PATCH", "/connectors/chaos-nobody/config", `{"tasks.max":"1"}`, 404},
		{"unknown task", "GET", "/connectors/" + connSink + "/tasks/99/status", "", 404},
		{"boolean query not a boolean", "POST", "/connectors/" + connSink + "/restart?includeTasks=maybe", "", 400},
		{"body over rest.request.max.bytes", "POST", "/connectors", big, 413},
		{"alter offsets of a running connector", "PATCH", "/connectors/" + connDatagen + "/offsets", `{"offsets":[]}`, 0},
		{"garbage offsets body", "PATCH", "/connectors/" + connDatagen + "/offsets", `[[[`, 400},
		{"unsigned internal task configs", "POST", "/connectors/" + connSink + "/tasks", `[{"a":"b"}]`, 0},
		{"unsigned internal fencing", "PUT", "/connectors/" + connRepl + "/fence", "", 0},
		{"invalid logger level", "PUT", "/admin/loggers/connectd", `{"level":"LOUD"}`, 0},
		{"unknown path", "GET", "/no/such/path", "", 404},
		{"validate with a tampered plugin binary", "PUT", "/connector-plugins/" + tamperedClass + "/config/validate",
			`{"connector.class":"` + tamperedClass + `","kafka.topic":"x"}`, 0},
		{"create with a tampered plugin binary", "PUT", "/connectors/chaos-bad-tampered/config",
			`{"connector.class":"` + tamperedClass + `","kafka.topic":"x"}`, 0},
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
		code, body, err := doRaw(ctx, hc, c.method, w.URL+c.path, c.body)
		// A rebalance answers 409 with Retry-After; ask again, as a client
		// would, so that the check is about the input.
		for try := 0; err == nil && code == http.StatusConflict && try < 20 && strings.Contains(strings.ToLower(body), "rebalanc"); try++ {
			sleepCtx(ctx, 500*time.Millisecond)
			code, body, err = doRaw(ctx, hc, c.method, w.URL+c.path, c.body)
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

func wantText(want int) string {
	if want == 0 {
		return "a 4xx"
	}
	return strconv.Itoa(want)
}

func doRaw(ctx context.Context, hc *http.Client, method, url, body string) (int, string, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, "", err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
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
	mf, err := os.ReadFile(filepath.Join(pluginDir, class+".json"))
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
