// Package mirrortest lets tests read MirrorMaker 2's heartbeat, checkpoint
// and offset-sync records the way MM2 itself does: it builds and runs
// test/mirrorclient, a small Java program that decodes them with MM2
// 4.1.1's own classes (Heartbeat, Checkpoint and OffsetSync from Maven
// Central), and returns what it printed.
//
// The build (the tool's jar and its resolved classpath) is cached under the
// user's cache directory, keyed by the hash of the tool's sources, so only
// the first run after a change pays for Maven. Without Java or Maven a test
// fails when CI=true and is skipped otherwise (internal/citest).
//
// What this package must not do: start or stop brokers, or be imported by
// non-test code.
package mirrortest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/citest"
	"github.com/connectd/connectd/internal/repo"
)

// Formats of MM2's internal records.
const (
	Heartbeat  = "heartbeat"
	Checkpoint = "checkpoint"
	OffsetSync = "offset-sync"
)

// Position is where a record was read.
type Position struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Timestamp int64  `json:"timestamp"` // the Kafka record's, in ms
}

// Record is one record as MM2's deserializeRecord returned it; the fields
// of its Format are set, or Error when MM2 could not decode it.
type Record struct {
	Format string `json:"format"`
	Error  string `json:"error,omitempty"`

	// Heartbeat.
	SourceClusterAlias string `json:"sourceClusterAlias,omitempty"`
	TargetClusterAlias string `json:"targetClusterAlias,omitempty"`
	Timestamp          int64  `json:"timestamp,omitempty"`

	// Checkpoint (ConsumerGroupID, Metadata) and both (the rest).
	ConsumerGroupID  string `json:"consumerGroupId,omitempty"`
	Topic            string `json:"topic,omitempty"`
	Partition        int32  `json:"partition"`
	UpstreamOffset   int64  `json:"upstreamOffset"`
	DownstreamOffset int64  `json:"downstreamOffset"`
	Metadata         string `json:"metadata,omitempty"`

	// At is set by Read.
	At *Position `json:"record,omitempty"`
}

// KV is an encoded record.
type KV struct {
	Key, Value []byte
}

// Tool is a built mirrorclient.
type Tool struct {
	classpath string
}

// toolDir is the tool's source directory, relative to the repository root.
const toolDir = "test/mirrorclient"

// Build returns the tool, building it on first use (cached under the user's
// cache directory). Without Java or Maven the test fails in CI and is
// skipped elsewhere.
func Build(t testing.TB) *Tool {
	t.Helper()
	needTools(t)
	root, err := repo.Root()
	if err != nil {
		t.Fatalf("mirrortest: %v", err)
	}
	src := filepath.Join(root, toolDir)
	key, err := sourceHash(src)
	if err != nil {
		t.Fatalf("mirrortest: hashing %s: %v", src, err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatalf("mirrortest: %v", err)
	}
	dir := filepath.Join(cache, "connectd", "mirrorclient", key[:16])
	if cp, ok := readClasspath(dir); ok {
		return &Tool{classpath: cp}
	}
	if err := build(t, src, dir); err != nil {
		t.Fatalf("mirrortest: building %s: %v", toolDir, err)
	}
	cp, ok := readClasspath(dir)
	if !ok {
		t.Fatalf("mirrortest: %s has no usable build after building it", dir)
	}
	return &Tool{classpath: cp}
}

func needTools(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			citest.Unavailable(t, "mirrortest: %s is not installed: MM2's classes run on Java 17+ and are resolved from Maven Central by Maven (Debian: apt-get install -y openjdk-17-jdk-headless maven)", tool)
		}
	}
}

// sourceHash hashes the tool's pom and sources (names and contents), not
// what a build by hand left beside them (target/, cp.txt).
func sourceHash(src string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() || (rel != "pom.xml" && !strings.HasPrefix(rel, "src"+string(filepath.Separator))) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

// readClasspath returns the cached build's classpath (the jar first) when
// every entry of it exists.
func readClasspath(dir string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "classpath.txt"))
	if err != nil {
		return "", false
	}
	entries := append([]string{filepath.Join(dir, "target", "mirrorclient-1.jar")}, strings.Split(strings.TrimSpace(string(b)), string(os.PathListSeparator))...)
	for _, e := range entries {
		if _, err := os.Stat(e); err != nil {
			return "", false
		}
	}
	return strings.Join(entries, string(os.PathListSeparator)), true
}

// build copies the sources next to dir, builds them there with Maven and
// renames the result to dir, so that concurrent test binaries never see a
// half-built tool.
func build(t testing.TB, src, dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.CopyFS(tmp, os.DirFS(src)); err != nil {
		return err
	}
	_ = os.RemoveAll(filepath.Join(tmp, "target")) // a build by hand in the source tree
	goals := []string{"package", "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath", "-Dmdep.outputFile=classpath.txt"}
	if err := maven(t, tmp, goals); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, ok := readClasspath(dir); ok {
			return nil // another test binary finished first
		}
		return err
	}
	return nil
}

// maven runs the goals offline first (fast, and works without network once
// ~/.m2 has the jars), then online.
func maven(t testing.TB, dir string, goals []string) error {
	var last error
	for _, offline := range []bool{true, false} {
		args := []string{"-q", "-B"}
		if offline {
			args = append(args, "-o")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		cmd := exec.CommandContext(ctx, "mvn", append(args, goals...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		cancel()
		if err == nil {
			return nil
		}
		last = fmt.Errorf("mvn %s: %w\n%s", strings.Join(goals, " "), err, tail(out))
		if !offline {
			break
		}
		t.Logf("mirrortest: resolving MirrorMaker 2's client jars from Maven Central (first run only)")
	}
	return last
}

func tail(b []byte) string {
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// run runs the tool with args and stdin and returns its stdout lines.
func (tl *Tool) run(t testing.TB, timeout time.Duration, stdin []byte, args ...string) [][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", append([]string{"-cp", tl.classpath, "io.connectd.mirrorclient.Main"}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mirrortest: mirrorclient %s: %v\n%s", strings.Join(args, " "), err, tail(stderr.Bytes()))
	}
	var lines [][]byte
	for l := range bytes.Lines(stdout.Bytes()) {
		if l = bytes.TrimSpace(l); len(l) > 0 {
			lines = append(lines, l)
		}
	}
	return lines
}

func decodeLines[T any](t testing.TB, lines [][]byte) []T {
	t.Helper()
	out := make([]T, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal(l, &out[i]); err != nil {
			t.Fatalf("mirrortest: mirrorclient printed %q: %v", l, err)
		}
	}
	return out
}

// Read returns every committed record of topic on the cluster at bootstrap,
// up to the end offsets when the tool started, decoded as format by MM2's
// deserializeRecord.
func (tl *Tool) Read(t testing.TB, bootstrap, topic, format string) []Record {
	t.Helper()
	const timeout = 60 * time.Second
	lines := tl.run(t, timeout+10*time.Second, nil, "read", "--bootstrap", bootstrap, "--topic", topic,
		"--format", format, "--timeout-ms", fmt.Sprint(timeout.Milliseconds()))
	return decodeLines[Record](t, lines)
}

// Decode decodes records by MM2's deserializeRecord, one result per input.
func (tl *Tool) Decode(t testing.TB, format string, kvs ...KV) []Record {
	t.Helper()
	var in bytes.Buffer
	for _, kv := range kvs {
		line, _ := json.Marshal(map[string]any{"format": format, "key": hexOrNil(kv.Key), "value": hexOrNil(kv.Value)})
		in.Write(append(line, '\n'))
	}
	out := decodeLines[Record](t, tl.run(t, time.Minute, in.Bytes(), "decode"))
	if len(out) != len(kvs) {
		t.Fatalf("mirrortest: %d results for %d records", len(out), len(kvs))
	}
	return out
}

func hexOrNil(b []byte) any {
	if b == nil {
		return nil
	}
	return hex.EncodeToString(b)
}

// Encode returns the bytes MM2's own encoders (recordKey, recordValue)
// write for each record; only the fields of its Format are used.
func (tl *Tool) Encode(t testing.TB, recs ...Record) []KV {
	t.Helper()
	var in bytes.Buffer
	for _, r := range recs {
		r.At = nil
		line, _ := json.Marshal(r)
		in.Write(append(line, '\n'))
	}
	raw := decodeLines[struct{ Key, Value string }](t, tl.run(t, time.Minute, in.Bytes(), "encode"))
	if len(raw) != len(recs) {
		t.Fatalf("mirrortest: %d results for %d records", len(raw), len(recs))
	}
	out := make([]KV, len(raw))
	for i, r := range raw {
		k, err1 := hex.DecodeString(r.Key)
		v, err2 := hex.DecodeString(r.Value)
		if err := errors.Join(err1, err2); err != nil {
			t.Fatalf("mirrortest: encode printed %+v: %v", r, err)
		}
		out[i] = KV{Key: k, Value: v}
	}
	return out
}

// Heartbeats returns the heartbeat records of the flow source→target among
// recs, in read order.
func Heartbeats(recs []Record, source, target string) []Record {
	return slices.DeleteFunc(slices.Clone(recs), func(r Record) bool {
		return r.Format != Heartbeat || r.Error != "" || r.SourceClusterAlias != source || r.TargetClusterAlias != target
	})
}

// Upstream is what MM2's MirrorClient reads from a cluster's topic names.
type Upstream struct {
	// Clusters is MirrorClient.upstreamClusters(): the aliases of the
	// clusters whose heartbeats reach this one.
	Clusters []string `json:"upstreamClusters"`
	// Hops is MirrorClient.replicationHops of each.
	Hops map[string]int `json:"hops"`
}

// Upstream asks MM2's MirrorClient (DefaultReplicationPolicy with the
// default separator) which clusters replicate into the cluster at
// bootstrap.
func (tl *Tool) Upstream(t testing.TB, bootstrap string) Upstream {
	t.Helper()
	out := decodeLines[Upstream](t, tl.run(t, time.Minute, nil, "upstream", "--bootstrap", bootstrap))
	if len(out) != 1 {
		t.Fatalf("mirrortest: upstream printed %d lines", len(out))
	}
	return out[0]
}

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// Translate returns group's offsets on the cluster at bootstrap translated
// from the checkpoints of cluster source, by MM2's
// MirrorClient.remoteConsumerOffsets (what RemoteClusterUtils.translateOffsets
// runs).
func (tl *Tool) Translate(t testing.TB, bootstrap, group, source string) map[TopicPartition]int64 {
	t.Helper()
	lines := tl.run(t, 90*time.Second, nil, "translate", "--bootstrap", bootstrap, "--group", group, "--source", source, "--timeout-ms", "60000")
	out := map[TopicPartition]int64{}
	for _, r := range decodeLines[struct {
		TopicPartition
		Offset int64 `json:"offset"`
	}](t, lines) {
		out[r.TopicPartition] = r.Offset
	}
	return out
}
