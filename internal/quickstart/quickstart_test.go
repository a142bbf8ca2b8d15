package quickstart

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connectd/connectd/connectors/datagen"
	"github.com/connectd/connectd/framework/configprovider"
)

type env map[string]string

func (e env) Get(_, key string) (string, error) {
	if v, ok := e[key]; ok {
		return v, nil
	}
	return "", os.ErrNotExist
}

var quickstartEnv = env{
	"KAFKA_BOOTSTRAP": "127.0.0.1:9092", "AEROSPIKE_ADDR": "127.0.0.1:3000",
	"QUICKSTART_ORDERS_TOPIC": "orders", "QUICKSTART_ITERATIONS": "100", "QUICKSTART_MAX_INTERVAL_MS": "0",
}

func resolver(e env) *configprovider.Resolver {
	return configprovider.NewResolver(map[string]configprovider.Provider{"env": e})
}

var repoFiles = Files{
	Source:      "../../quickstart/connectors/orders-datagen.json",
	Replication: "../../quickstart/connectors/orders-replication.json",
	Sink:        "../../quickstart/connectors/orders-aerospike.json",
}

var repoAvroFiles = Files{
	Source:      "../../quickstart/connectors/avro/orders-datagen.json",
	Replication: repoFiles.Replication,
	Sink:        "../../quickstart/connectors/avro/orders-aerospike.json",
}

// The repository's connector files, JSON and Avro (--format avro), form
// the pipeline the watcher checks, and the expected totals are the
// generator's.
func TestLoadRepositoryPipeline(t *testing.T) {
	avroEnv := maps.Clone(quickstartEnv)
	avroEnv["SCHEMA_REGISTRY_URL"] = "http://127.0.0.1:8081"
	for _, tc := range []struct {
		name           string
		files          Files
		env            env
		valueConverter string
	}{
		{"json", repoFiles, quickstartEnv, "org.apache.kafka.connect.json.JsonConverter"},
		{"avro", repoAvroFiles, avroEnv, "io.confluent.connect.avro.AvroConverter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Load(tc.files, resolver(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			if p.OrdersTopic != "orders" || p.ReplicaTopic != "orders.replica" || p.SinkTopic != "orders.replica" {
				t.Fatalf("topics %q %q %q", p.OrdersTopic, p.ReplicaTopic, p.SinkTopic)
			}
			if p.SinkGroup() != "connect-quickstart-aerospike" || p.Namespace != "test" || p.Set != "orders" {
				t.Fatalf("sink %q %q %q", p.SinkGroup(), p.Namespace, p.Set)
			}
			sums, _ := datagen.ExpectedSums(p.Seed, p.Cardinality, p.Tasks, p.Iterations)
			if !maps.Equal(sums, p.ExpectedAmounts) || p.ExpectedRecords != int64(p.Tasks)*100 {
				t.Fatalf("expected totals %v / %d", p.ExpectedAmounts, p.ExpectedRecords)
			}
			if len(p.Connectors()) != 3 {
				t.Fatalf("connectors %v", p.Connectors())
			}
			// Both ends use the format's converter; the replication copies bytes.
			if p.Source.Config["value.converter"] != tc.valueConverter || p.Sink.Config["value.converter"] != tc.valueConverter ||
				p.Replication.Config["value.converter"] != "org.apache.kafka.connect.converters.ByteArrayConverter" {
				t.Fatalf("value converters %q → %q → %q", p.Source.Config["value.converter"],
					p.Replication.Config["value.converter"], p.Sink.Config["value.converter"])
			}
			if tc.name == "avro" && (p.Source.Config[datagen.KeyValueStruct] != "true" ||
				p.Source.Config["value.converter.schema.registry.url"] != "http://127.0.0.1:8081" ||
				p.Sink.Config["value.converter.schema.registry.url"] != "http://127.0.0.1:8081") {
				t.Fatalf("avro files: value.struct %q, registry %q / %q", p.Source.Config[datagen.KeyValueStruct],
					p.Source.Config["value.converter.schema.registry.url"], p.Sink.Config["value.converter.schema.registry.url"])
			}
		})
	}
}

func TestLoadRefusesWhatCannotBeVerified(t *testing.T) {
	write := func(t *testing.T, text string) string {
		path := filepath.Join(t.TempDir(), "c.json")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, tc := range []struct {
		name  string
		files func(t *testing.T) Files
		env   env
		want  string
	}{
		{"unset placeholder", func(*testing.T) Files { return repoFiles },
			env{"KAFKA_BOOTSTRAP": "x"}, "QUICKSTART"},
		{"unbounded generator", func(*testing.T) Files { return repoFiles },
			func() env { e := maps.Clone(quickstartEnv); e["QUICKSTART_ITERATIONS"] = "0"; return e }(), "iterations must be positive"},
		{"not Kafka's shape", func(t *testing.T) Files {
			return Files{Source: write(t, `{"connector.class":"DatagenSource"}`)}
		}, quickstartEnv, "shape"},
		{"another class", func(t *testing.T) Files {
			return Files{Source: write(t, `{"name":"x","config":{"connector.class":"FileSource"}}`)}
		}, quickstartEnv, "want DatagenSource"},
		{"sink without the count bin", func(t *testing.T) Files {
			raw, _ := os.ReadFile(repoFiles.Sink)
			f := repoFiles
			f.Sink = write(t, strings.Replace(string(raw), `"amount,count"`, `"amount"`, 1))
			return f
		}, quickstartEnv, "bins.include"},
		{"sink reading another topic", func(t *testing.T) Files {
			f := repoFiles
			f.Replication = ""
			return f
		}, quickstartEnv, "want \"orders\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.files(t), resolver(tc.env))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	p, err := Load(repoFiles, resolver(quickstartEnv))
	if err != nil {
		t.Fatal(err)
	}
	done := Snapshot{Produced: p.ExpectedRecords, Replicated: p.ExpectedRecords, Applied: p.ExpectedRecords, Amounts: maps.Clone(p.ExpectedAmounts)}
	if v := p.Check(done); !v.Complete || len(v.Wrong) > 0 {
		t.Fatalf("complete pipeline: %+v", v)
	}
	partial := done
	partial.Amounts = maps.Clone(p.ExpectedAmounts)
	partial.Applied--
	partial.Amounts["k0"]--
	if v := p.Check(partial); v.Complete || len(v.Wrong) > 0 {
		t.Fatalf("partial pipeline: %+v", v)
	}
	dup := done
	dup.Amounts = maps.Clone(p.ExpectedAmounts)
	dup.Amounts["k3"]++
	if v := p.Check(dup); v.Complete || len(v.Wrong) != 1 || !strings.Contains(v.Wrong[0], "counter k3") {
		t.Fatalf("a counter above its total: %+v", v)
	}
	extra := done
	extra.Replicated++
	if v := p.Check(extra); v.Complete || len(v.Wrong) != 1 {
		t.Fatalf("a replica with more records: %+v", v)
	}
}

func TestSumSamples(t *testing.T) {
	text := `# HELP connectd_aerospike_sink_duplicates_skipped_total x
# TYPE connectd_aerospike_sink_duplicates_skipped_total counter
connectd_aerospike_sink_duplicates_skipped_total{connector="a",task="0"} 3
connectd_aerospike_sink_duplicates_skipped_total{connector="a",task="1",note="a}b"} 4.5
connectd_aerospike_sink_duplicates_skipped_totally 100
connectd_aerospike_sink_duplicates_skipped_total 1 1700000000000
`
	sum, found, err := sumSamples(strings.NewReader(text), DuplicatesMetric)
	if err != nil || !found || sum != 8.5 {
		t.Fatalf("sum %v found %v err %v, want 8.5", sum, found, err)
	}
	if _, found, _ := sumSamples(strings.NewReader("other 1\n"), DuplicatesMetric); found {
		t.Fatal("found a metric that is not there")
	}
	if _, _, err := sumSamples(strings.NewReader(DuplicatesMetric+"{x=\"1\" 3\n"), DuplicatesMetric); err == nil {
		t.Fatal("malformed sample accepted")
	}
}

func TestFormatting(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4200: "-4,200"} {
		if got := num(n); got != want {
			t.Errorf("num(%d) = %q, want %q", n, got, want)
		}
	}
	if got := bar(5, 10); got != "[##########..........] 50%" {
		t.Errorf("bar = %q", got)
	}
	if got := cut("abcdef\nab\n", 5); got != "abc…\nab\n" {
		t.Errorf("cut = %q", got)
	}
}
