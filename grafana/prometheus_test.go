package grafana

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/connectd/connectd/internal/kafkatest"
)

// Grafana's macros and the dashboards' variables, as the test substitutes
// them: Prometheus scrapes every second, so a 10 s rate window holds ten
// samples; "All" of a multi-value variable is its allValue, .*.
var grafanaVars = strings.NewReplacer(
	"$__rate_interval", "10s",
	"$__interval", "2s",
	"$__range", "1m",
	`"$job"`, `".*"`,
	`"$worker"`, `".*"`,
	`"$connector"`, `".*"`,
	`"$task"`, `".*"`,
)

// TestDashboardsAgainstPrometheus runs a real `connectd worker` with
// DatagenSource → AerospikeSink (the in-memory Aerospike test server), has
// Debian's Prometheus scrape it every second with the alert rules loaded,
// and then requires every query of every dashboard panel and variable to
// return data. It also lints the real scrape (promlint, promtool check
// metrics), checks that the Aerospike sink's plugin-side metrics arrive
// with connector and task labels, and that metrics.listener serves the
// same scrape.
func TestDashboardsAgainstPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Kafka clients, a worker, plugins and Prometheus; skipped with -short")
	}
	prometheus := promTool(t, "prometheus")
	promtool := promTool(t, "promtool")
	bootstrap := kafkatest.Bootstrap(t)
	dir := t.TempDir()

	// Binaries, built from this tree.
	for _, b := range []struct{ out, pkg string }{
		{"connectd", "./cmd/connectd"},
		{"connectd-dev", "./cmd/connectd-dev"},
		{"connectd-datagen", "./connectors/datagen/cmd/connectd-datagen"},
		{"connectd-aerospike-sink", "./connectors/aerospike/cmd/connectd-aerospike-sink"},
		{"connectd-kafka-replication", "./connectors/kafka/cmd/connectd-kafka-replication"},
	} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, b.out), b.pkg)
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	connectd := filepath.Join(dir, "connectd")
	plugins := filepath.Join(dir, "plugins")
	if out, err := exec.Command(connectd, "plugin", "install", "--plugin-path", plugins,
		filepath.Join(dir, "connectd-datagen"), filepath.Join(dir, "connectd-aerospike-sink"),
		filepath.Join(dir, "connectd-kafka-replication")).CombinedOutput(); err != nil {
		t.Fatalf("plugin install: %v\n%s", err, out)
	}

	// The Aerospike test server.
	aero := start(t, dir, "aerospike", filepath.Join(dir, "connectd-dev"), "aerospike", "--listen", "127.0.0.1:0", "--namespaces", "test")
	aeroAddr := waitLine(t, aero, "AEROSPIKE_ADDR=")

	// The worker, with /metrics on its REST listener and on metrics.listener.
	group := kafkatest.UniqueName(t, "obs")
	internal := []string{group + "-configs", group + "-offsets", group + "-status"}
	t.Cleanup(func() { kafkatest.DeleteTopics(t, internal...) })
	restAddr, metricsAddr, promAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	props := strings.Join([]string{
		"bootstrap.servers=" + bootstrap,
		"group.id=" + group,
		"config.storage.topic=" + internal[0],
		"offset.storage.topic=" + internal[1],
		"status.storage.topic=" + internal[2],
		"config.storage.replication.factor=1",
		"offset.storage.replication.factor=1",
		"status.storage.replication.factor=1",
		"offset.storage.partitions=2",
		"status.storage.partitions=1",
		"key.converter=org.apache.kafka.connect.storage.StringConverter",
		"value.converter=org.apache.kafka.connect.json.JsonConverter",
		"plugin.path=" + plugins,
		"listeners=http://" + restAddr,
		"metrics.listener=http://" + metricsAddr,
		"exactly.once.source.support=enabled",
		"offset.flush.interval.ms=1000",
		"consumer.statistics.interval.ms=1000",
		"session.timeout.ms=6000",
		"heartbeat.interval.ms=1000",
		"log.format=json",
	}, "\n") + "\n"
	propsPath := filepath.Join(dir, "worker.properties")
	if err := os.WriteFile(propsPath, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	worker := start(t, dir, "worker", connectd, "worker", propsPath)
	rest := "http://" + restAddr
	kafkatest.Eventually(t, 90*time.Second, func() (bool, string) {
		code, body := get(rest + "/health")
		return code == 200, fmt.Sprintf("GET /health: %d %s; worker log:\n%s", code, body, worker.tail())
	})

	topic := kafkatest.Topic(t, kafkatest.Partitions(2))
	common := map[string]string{
		"key.converter":                  "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable": "false",
	}
	putConnector(t, rest, "orders-datagen", common, map[string]string{
		"connector.class":                  "DatagenSource",
		"tasks.max":                        "1",
		"kafka.topic":                      topic,
		"quickstart":                       "counter",
		"key.cardinality":                  "50",
		"iterations":                       "100000000",
		"max.interval":                     "2",
		"transaction.boundary":             "interval",
		"transaction.boundary.interval.ms": "500",
	})
	putConnector(t, rest, "orders-aerospike", common, map[string]string{
		"connector.class":     "AerospikeSink",
		"tasks.max":           "2",
		"topics":              topic,
		"aerospike.hosts":     aeroAddr,
		"aerospike.namespace": "test",
		"aerospike.set":       "orders",
	})

	// A sink whose value converter fails on every record (JsonConverter with
	// schemas.enable reading bytes that are not JSON), so the converter
	// error panels have failures to show, under the converter's class.
	badTopic := kafkatest.Topic(t, kafkatest.Partitions(1))
	produce(t, kafkatest.Bootstrap(t), badTopic, 50, func(i int) []byte { return []byte(fmt.Sprintf("not json %d", i)) })
	putConnector(t, rest, "bad-json", nil, map[string]string{
		"connector.class":                "AerospikeSink",
		"tasks.max":                      "1",
		"topics":                         badTopic,
		"aerospike.hosts":                aeroAddr,
		"aerospike.namespace":            "test",
		"aerospike.set":                  "bad",
		"key.converter":                  "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable": "true",
		"errors.tolerance":               "all",
	})

	// KafkaReplicationSource copying a topic of cluster B into this
	// worker's cluster (A), for the replication panels.
	b := kafkatest.B()
	replTopic := b.Topic(t, kafkatest.Partitions(2))
	produce(t, b.Bootstrap(t), replTopic, 500, func(i int) []byte { return []byte(fmt.Sprintf(`{"n":%d}`, i)) })
	t.Cleanup(func() { kafkatest.DeleteTopics(t, "b."+replTopic) })
	putConnector(t, rest, "b-to-a", nil, map[string]string{
		"connector.class":           "KafkaReplicationSource",
		"tasks.max":                 "1",
		"source.bootstrap.servers":  b.Bootstrap(t),
		"target.bootstrap.servers":  bootstrap,
		"topics":                    replTopic,
		"replication.policy.class":  "org.apache.kafka.connect.mirror.DefaultReplicationPolicy",
		"source.cluster.alias":      "b",
		"target.cluster.alias":      "a",
		"topic.refresh.interval.ms": "1000",
		"poll.timeout.ms":           "200",
	})

	// Prometheus, scraping the REST listener every second, with the rules.
	rules, err := filepath.Abs("alerts/connectd.yml")
	if err != nil {
		t.Fatal(err)
	}
	promCfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(promCfg, []byte(fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: connectd
    static_configs: [{targets: [%q]}]
`, rules, restAddr)), 0o644); err != nil {
		t.Fatal(err)
	}
	promProc := start(t, dir, "prometheus", prometheus, "--config.file="+promCfg, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	prom := "http://" + promAddr
	kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
		code, _ := get(prom + "/-/ready")
		return code == 200, "Prometheus not ready; its log:\n" + promProc.tail()
	})

	// Wait until the pipeline flows end to end and the sink reported its lag
	// (librdkafka statistics every second), then until the rate windows
	// hold enough samples.
	kafkatest.Eventually(t, 90*time.Second, func() (bool, string) {
		var missing []string
		for _, q := range []string{
			`sum(connectd_source_records_written_total) > 0`,
			`sum(connectd_aerospike_sink_records_written_total) > 0`,
			`count(connectd_sink_lag_records)`,
			`sum(connectd_task_state{state="RUNNING"}) == 5`,
			`sum(connectd_replication_records_total{connector="b-to-a"}) == 500`,
			`sum(connectd_task_record_errors_total{connector="bad-json", stage="VALUE_CONVERTER", class="org.apache.kafka.connect.json.JsonConverter"}) == 50`,
		} {
			if n, err := instant(prom, q); err != nil || n == 0 {
				missing = append(missing, fmt.Sprintf("%s (%v)", q, err))
			}
		}
		return len(missing) == 0, fmt.Sprintf("waiting for %v; worker log:\n%s", missing, worker.tail())
	})
	time.Sleep(12 * time.Second) // a 10 s rate window of data after the flow started

	// Every dashboard query returns data.
	queries := dashboardQueries(t)
	var empty []string
	for _, q := range queries {
		expr := grafanaVars.Replace(q.expr)
		if strings.Contains(expr, "$") {
			t.Errorf("%s: unsubstituted variable in %s", q.where, expr)
			continue
		}
		var n int
		var err error
		if q.labelValues {
			n, err = labelValues(prom, expr)
		} else {
			n, err = instant(prom, expr)
		}
		switch {
		case err != nil:
			t.Errorf("%s: %s: %v", q.where, expr, err)
		case n == 0:
			empty = append(empty, q.where+": "+expr)
		}
	}
	if len(empty) > 0 {
		t.Errorf("%d of %d dashboard queries returned no data:\n%s", len(empty), len(queries), strings.Join(empty, "\n"))
	}
	t.Logf("%d dashboard queries checked against Prometheus", len(queries))

	// Values that must hold in a healthy pipeline.
	for _, q := range []string{
		`sum(rate(connectd_source_records_written_total[10s])) > 0`,
		`sum(rate(connectd_sink_records_sent_total[10s])) > 0`,
		`sum(connectd_task_state{state="FAILED"}) == 0`,
		`sum(connectd_connector_state{state="RUNNING"}) == 4`,
		`connectd_worker_leader == 1`,
		`connectd_cluster_workers == 1`,
		`sum(connectd_plugin_process_up) == 4`,
		`sum(rate(connectd_rest_requests_total{handler="metrics", code="200"}[10s])) > 0`,
	} {
		if n, err := instant(prom, q); err != nil || n == 0 {
			t.Errorf("healthy pipeline: %s is false (%v)", q, err)
		}
	}

	// The alert rules load in the real Prometheus and evaluate cleanly.
	var rulesResp struct {
		Data struct {
			Groups []struct {
				Rules []struct {
					Name, Health, LastError string
				}
			}
		}
	}
	getJSON(t, prom+"/api/v1/rules", &rulesResp)
	nRules := 0
	for _, g := range rulesResp.Data.Groups {
		for _, r := range g.Rules {
			nRules++
			if r.Health != "ok" {
				t.Errorf("rule %s: health %q %s", r.Name, r.Health, r.LastError)
			}
		}
	}
	if nRules < 8 {
		t.Errorf("Prometheus loaded %d rules", nRules)
	}

	// The worker's scrape: promlint and promtool check metrics find
	// nothing; the Aerospike sink's plugin-side metrics carry connector
	// and task; metrics.listener serves the same families.
	_, scrape := get(rest + "/metrics")
	fams := parseScrape(t, scrape)
	problems, err := promlint.NewWithMetricFamilies(fams).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = strings.NewReader(scrape)
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
	for _, name := range []string{"connectd_aerospike_sink_duplicates_skipped_total", "connectd_aerospike_sink_records_written_total", "connectd_plugin_source_poll_duration_seconds"} {
		tasks := labelled(fams, name)
		if len(tasks) == 0 {
			t.Errorf("%s: no series with connector and task labels in the worker's scrape", name)
		}
		t.Logf("%s: %v", name, tasks)
	}
	checkKindFamilies(t, fams, map[string]string{
		"orders-datagen": "source", "b-to-a": "source", "orders-aerospike": "sink", "bad-json": "sink",
	})
	_, other := get("http://" + metricsAddr + "/metrics")
	if a, b := familyNames(fams), familyNames(parseScrape(t, other)); strings.Join(a, ",") != strings.Join(b, ",") {
		t.Errorf("metrics.listener serves other families:\nREST:     %v\nlistener: %v", a, b)
	}
	if code, _ := get("http://" + metricsAddr + "/connectors"); code != http.StatusNotFound {
		t.Errorf("metrics.listener serves GET /connectors with %d; it must serve /metrics only", code)
	}

	checkLogs(t, rest, worker)
}

// checkKindFamilies requires every connectd_source_* series of the scrape
// to belong to a source connector and every connectd_sink_* one to a sink
// connector, and each connector to have series of its own kind: a task
// exports only its kind's families.
func checkKindFamilies(t *testing.T, fams []*dto.MetricFamily, kinds map[string]string) {
	t.Helper()
	own := map[string]int{}
	for _, f := range fams {
		var kind string
		switch {
		case strings.HasPrefix(f.GetName(), "connectd_source_"):
			kind = "source"
		case strings.HasPrefix(f.GetName(), "connectd_sink_"):
			kind = "sink"
		default:
			continue
		}
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() != "connector" {
					continue
				}
				c := lp.GetValue()
				if kinds[c] != kind {
					t.Errorf("%s has a series of connector %s, a %s connector", f.GetName(), c, kinds[c])
				} else {
					own[c]++
				}
			}
		}
	}
	for c, kind := range kinds {
		if own[c] == 0 {
			t.Errorf("connector %s has no connectd_%s_* series", c, kind)
		}
	}
}

// produce writes n records with values value(i) to topic and waits for
// their delivery.
func produce(t *testing.T, bootstrap, topic string, n int, value func(int) []byte) {
	t.Helper()
	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": bootstrap, "linger.ms": 5})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	delivered := make(chan kafka.Event, n)
	for i := range n {
		if err := p.Produce(&kafka.Message{
			TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny},
			Key:            []byte(fmt.Sprintf("k%d", i)),
			Value:          value(i),
		}, delivered); err != nil {
			t.Fatal(err)
		}
	}
	timeout := time.After(30 * time.Second)
	for range n {
		select {
		case e := <-delivered:
			if m, ok := e.(*kafka.Message); ok && m.TopicPartition.Error != nil {
				t.Fatalf("produce to %s: %v", topic, m.TopicPartition.Error)
			}
		case <-timeout:
			t.Fatalf("records to %s not delivered within 30 s", topic)
		}
	}
}

// checkLogs reads the worker's JSON log (log.format=json): task lines
// carry connector and task, merged plugin lines carry plugin and
// connector, and /admin/loggers changes a logger's level at run time
// (REST requests are logged at DEBUG by connectd.rest) and refuses
// invalid levels and names with the allowed values.
func checkLogs(t *testing.T, rest string, worker *proc) {
	t.Helper()
	lines := func() []map[string]any {
		raw, err := os.ReadFile(worker.log)
		if err != nil {
			t.Fatal(err)
		}
		var out []map[string]any
		for _, l := range strings.Split(string(raw), "\n") {
			var m map[string]any
			if strings.HasPrefix(l, "{") {
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Errorf("log.format=json wrote a line that is not JSON: %s", l)
					continue
				}
				out = append(out, m)
			}
		}
		return out
	}
	taskLines, pluginLines := 0, 0
	for _, m := range lines() {
		if m["logger"] == "connectd.worker" && m["connector"] != nil && m["task"] != nil {
			taskLines++
		}
		if m["plugin"] != nil {
			pluginLines++
			if m["connector"] == nil {
				t.Errorf("merged plugin line without its connector: %v", m)
			}
		}
	}
	if taskLines == 0 || pluginLines == 0 {
		t.Errorf("log has %d task lines with connector and task, %d merged plugin lines; want both", taskLines, pluginLines)
	}

	restDebug := func() int {
		n := 0
		for _, m := range lines() {
			if m["logger"] == "connectd.rest" && m["level"] == "DEBUG" && m["msg"] == "REST request" {
				n++
			}
		}
		return n
	}
	if n := restDebug(); n != 0 {
		t.Fatalf("%d DEBUG lines of connectd.rest at level INFO", n)
	}
	put := func(logger, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPut, rest+"/admin/loggers/"+logger, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		res, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := put("connectd.rest", `{"level":"DEBUG"}`); code != 200 {
		t.Fatalf("PUT /admin/loggers/connectd.rest: %d %s", code, body)
	}
	kafkatest.Eventually(t, 15*time.Second, func() (bool, string) {
		return restDebug() > 0, "no DEBUG REST request lines after raising connectd.rest to DEBUG"
	})
	if code, body := put("connectd.rest", `{"level":"CHATTY"}`); code != 404 || !strings.Contains(body, "Allowed levels: OFF, FATAL, ERROR, WARN, INFO, DEBUG, TRACE") {
		t.Errorf("invalid level: %d %s", code, body)
	}
	if code, body := put("no%20such..logger", `{"level":"DEBUG"}`); code != 400 || !strings.Contains(body, "invalid logger name") || !strings.Contains(body, "connectd.rest") {
		t.Errorf("invalid logger name: %d %s", code, body)
	}
}

// proc is a child process whose output goes to a file in the test's dir.
type proc struct {
	cmd *exec.Cmd
	log string
}

func (p *proc) tail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// start runs a process until the test ends (SIGTERM, then SIGKILL).
func start(t *testing.T, dir, name, bin string, args ...string) *proc {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); f.Close(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	return &proc{cmd: cmd, log: logPath}
}

// waitLine waits for a line starting with prefix in p's output and
// returns the rest of it.
func waitLine(t *testing.T, p *proc, prefix string) string {
	t.Helper()
	var val string
	kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
		f, err := os.Open(p.log)
		if err != nil {
			return false, err.Error()
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), prefix); ok {
				val = v
				return true, ""
			}
		}
		return false, "no " + prefix + " line yet: " + p.tail()
	})
	return val
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

var httpClient = &http.Client{Timeout: 10 * time.Second}

func get(u string) (int, string) {
	res, err := httpClient.Get(u)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	code, body := get(u)
	if code != 200 {
		t.Fatalf("GET %s: %d %s", u, code, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

func putConnector(t *testing.T, rest, name string, common, cfg map[string]string) {
	t.Helper()
	all := map[string]string{}
	for k, v := range common {
		all[k] = v
	}
	for k, v := range cfg {
		all[k] = v
	}
	body, _ := json.Marshal(all)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, rest+"/connectors/"+name+"/config", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
		req.Body = io.NopCloser(bytes.NewReader(body))
		res, err := httpClient.Do(req)
		if err != nil {
			return false, err.Error()
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		// 409: the worker is still joining; retry as kcctl does.
		return res.StatusCode == 201 || res.StatusCode == 200, fmt.Sprintf("PUT %s: %d %s", name, res.StatusCode, b)
	})
}

// instant runs an instant query and returns how many series it returned.
func instant(prom, expr string) (int, error) {
	code, body := get(prom + "/api/v1/query?query=" + url.QueryEscape(expr))
	var r struct {
		Status, Error string
		Data          struct {
			Result []json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return 0, fmt.Errorf("%d %s", code, body)
	}
	if r.Status != "success" {
		return 0, fmt.Errorf("%s", r.Error)
	}
	return len(r.Data.Result), nil
}

var labelValuesCall = regexp.MustCompile(`^label_values\((.+), *([a-z_]+)\)$`)

// labelValues answers Grafana's label_values(selector, label) the way its
// Prometheus datasource does, and returns how many values it found.
func labelValues(prom, expr string) (int, error) {
	m := labelValuesCall.FindStringSubmatch(expr)
	if m == nil {
		return 0, fmt.Errorf("not label_values(selector, label)")
	}
	code, body := get(prom + "/api/v1/label/" + m[2] + "/values?match[]=" + url.QueryEscape(m[1]))
	var r struct {
		Status, Error string
		Data          []string
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.Status != "success" {
		return 0, fmt.Errorf("%d %s", code, body)
	}
	return len(r.Data), nil
}

func parseScrape(t *testing.T, text string) []*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	m, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parse scrape: %v", err)
	}
	out := make([]*dto.MetricFamily, 0, len(m))
	for _, f := range m {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

func familyNames(fams []*dto.MetricFamily) []string {
	var out []string
	for _, f := range fams {
		out = append(out, f.GetName())
	}
	return out
}

// labelled returns connector/task of the family's series that have both.
func labelled(fams []*dto.MetricFamily, name string) []string {
	var out []string
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			if l["connector"] != "" && l["task"] != "" {
				out = append(out, l["connector"]+"/"+l["task"])
			}
		}
	}
	return out
}
