package checkpoint

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/connectors/kafka/mirrorformat"
	"github.com/connectd/connectd/internal/kafkatest"
	"github.com/connectd/connectd/internal/mirrortest"
	"github.com/connectd/connectd/internal/proctest"
	"github.com/connectd/connectd/plugins/plugintest"
)

const (
	testWorkerPkg  = "github.com/connectd/connectd/framework/worker/internal/testworker"
	replicationPkg = "github.com/connectd/connectd/connectors/kafka/cmd/connectd-kafka-replication"
	checkpointPkg  = "github.com/connectd/connectd/connectors/kafka/cmd/connectd-kafka-checkpoint"
	alias          = "A"
	lagMax         = 100
)

var builder *plugintest.Builder

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "checkpoint-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	builder = plugintest.NewBuilder(dir)
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// env is the failover topology: source cluster A, a worker writing to
// target cluster B that runs KafkaReplicationSource (exactly-once) and
// KafkaCheckpointSource, each in a worker process of its own.
type env struct {
	t          *testing.T
	a, b       string // bootstraps
	worker     string
	plugins    string
	src        string // source topic on A
	remote     string // its replica on B
	partitions int
	repl, cp   workerSetup
}

type workerSetup struct {
	name, group, offsets, config string
}

func newEnv(t *testing.T, partitions int) *env {
	t.Helper()
	e := &env{t: t, a: kafkatest.A().Bootstrap(t), b: kafkatest.B().Bootstrap(t), partitions: partitions}
	e.worker = builder.Build(t, testWorkerPkg)
	e.plugins = t.TempDir()
	if err := builder.InstallAll(t, e.plugins, replicationPkg, checkpointPkg); err != nil {
		t.Fatal(err)
	}
	e.src = kafkatest.A().Topic(t, kafkatest.Partitions(partitions))
	e.remote = alias + "." + e.src
	t.Cleanup(func() {
		kafkatest.B().DeleteTopics(t, e.remote, "mm2-offset-syncs."+alias+".internal", alias+".checkpoints.internal")
	})
	return e
}

// setup writes a connector config and names the worker's group and offsets topic.
func (e *env) setup(name string, props map[string]string) workerSetup {
	e.t.Helper()
	ws := workerSetup{name: name, group: kafkatest.UniqueName(e.t, "g-"+name)}
	ws.offsets = kafkatest.B().Topic(e.t, kafkatest.Partitions(5), kafkatest.Config("cleanup.policy", "compact"))
	props["name"] = name
	raw, _ := json.Marshal(props)
	ws.config = filepath.Join(e.t.TempDir(), name+".json")
	if err := os.WriteFile(ws.config, raw, 0o644); err != nil {
		e.t.Fatal(err)
	}
	return ws
}

func (e *env) configure(pollMax int) {
	e.repl = e.setup("repl", map[string]string{
		"connector.class": "KafkaReplicationSource", "tasks.max": "2",
		"source.bootstrap.servers": e.a, "target.bootstrap.servers": e.b,
		"source.cluster.alias": alias, "topics": e.src, "replication.policy.class": "DefaultReplicationPolicy",
		"offset.lag.max": strconv.Itoa(lagMax), "poll.max.records": strconv.Itoa(pollMax),
	})
	e.cp = e.setup("cp", map[string]string{
		"connector.class": Class, "tasks.max": "1",
		"source.bootstrap.servers": e.a, "target.bootstrap.servers": e.b, "source.cluster.alias": alias,
		"groups": "failover-.*", "emit.checkpoints.interval.seconds": "1", "refresh.groups.interval.seconds": "1",
		"sync.group.offsets.enabled": "true", "sync.group.offsets.interval.seconds": "1",
	})
}

type proc = proctest.Proc

func (e *env) start(ws workerSetup) *proc {
	e.t.Helper()
	return proctest.Start(e.t, exec.Command(e.worker, "-bootstrap", e.b, "-group", ws.group, "-offsets-topic", ws.offsets,
		"-plugins", e.plugins, "-connector", ws.name, "-config", ws.config, "-eos=true",
		"-backoff", "200ms", "-shutdown-timeout", "10s"))
}

// produce writes perPartition records to every partition, values
// "<partition>-<seq>" from seq first. It may run in a goroutine.
func (e *env) produce(first, perPartition int) error {
	p, err := ckafka.NewProducer(&ckafka.ConfigMap{"bootstrap.servers": e.a, "enable.idempotence": true, "linger.ms": 5})
	if err != nil {
		return err
	}
	var failed error
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for ev := range p.Events() {
			if m, ok := ev.(*ckafka.Message); ok && m.TopicPartition.Error != nil && failed == nil {
				failed = m.TopicPartition.Error
			}
		}
	}()
	for part := range int32(e.partitions) {
		for seq := first; seq < first+perPartition; seq++ {
			v := fmt.Appendf(nil, "%d-%d", part, seq)
			for p.Produce(&ckafka.Message{TopicPartition: ckafka.TopicPartition{Topic: &e.src, Partition: part}, Key: v, Value: v}, nil) != nil {
				p.Flush(100)
			}
		}
	}
	left := p.Flush(30000)
	p.Close()
	<-drained
	if left > 0 {
		return fmt.Errorf("%d records not delivered", left)
	}
	return failed
}

// consumeOnA runs group on A: it reads each partition up to stop[p] and
// commits that position, as a consumer that stops there would.
func (e *env) consumeOnA(group string, stop []int64) {
	e.t.Helper()
	c, err := ckafka.NewConsumer(&ckafka.ConfigMap{"bootstrap.servers": e.a, "group.id": group,
		"enable.auto.commit": false, "isolation.level": "read_committed"})
	if err != nil {
		e.t.Fatal(err)
	}
	defer c.Close()
	var tps []ckafka.TopicPartition
	for p := range int32(e.partitions) {
		tps = append(tps, ckafka.TopicPartition{Topic: &e.src, Partition: p, Offset: ckafka.OffsetBeginning})
	}
	if err := c.Assign(tps); err != nil {
		e.t.Fatal(err)
	}
	read := make([]int64, e.partitions)
	done := 0
	for p := range e.partitions {
		if stop[p] == 0 {
			done++
		}
	}
	deadline := time.Now().Add(time.Minute)
	for done < e.partitions && time.Now().Before(deadline) {
		m, err := c.ReadMessage(200 * time.Millisecond)
		if err != nil {
			continue
		}
		p := m.TopicPartition.Partition
		if int64(m.TopicPartition.Offset) >= stop[p] {
			continue
		}
		read[p] = int64(m.TopicPartition.Offset) + 1
		if read[p] == stop[p] {
			done++
		}
	}
	if done < e.partitions {
		e.t.Fatalf("group %s read %v of %v on A", group, read, stop)
	}
	var commit []ckafka.TopicPartition
	for p := range int32(e.partitions) {
		commit = append(commit, ckafka.TopicPartition{Topic: &e.src, Partition: p, Offset: ckafka.Offset(stop[p])})
	}
	if _, err := c.CommitOffsets(commit); err != nil {
		e.t.Fatal(err)
	}
}

// checkpoints reads the checkpoints topic on B: the latest per key.
func (e *env) checkpoints() map[string]mirrorformat.Checkpoint {
	e.t.Helper()
	out := map[string]mirrorformat.Checkpoint{}
	for _, m := range kafkatest.B().ReadAll(e.t, alias+".checkpoints.internal", kafkatest.ReadCommitted, 200*time.Millisecond, time.Minute) {
		cp, err := mirrorformat.DecodeCheckpoint(m.Key, m.Value)
		if err != nil {
			e.t.Fatalf("checkpoints topic holds a record that is not a checkpoint: %v", err)
		}
		out[fmt.Sprintf("%s/%s/%d", cp.Group, cp.Topic, cp.Partition)] = cp
	}
	return out
}

// targetOffsets lists a group's committed offsets on B for the replica.
func (e *env) targetOffsets(group string) map[int32]int64 {
	e.t.Helper()
	a := kafkatest.B().Admin(e.t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := a.ListConsumerGroupOffsets(ctx, []ckafka.ConsumerGroupTopicPartitions{{Group: group}})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[int32]int64{}
	for _, g := range res.ConsumerGroupsTopicPartitions {
		for _, tp := range g.Partitions {
			if tp.Topic != nil && *tp.Topic == e.remote && tp.Offset >= 0 {
				out[tp.Partition] = int64(tp.Offset)
			}
		}
	}
	return out
}

// awaitSynced waits until group's checkpoints reflect stop translated
// with the final syncs, and B holds those offsets; it returns them.
func (e *env) awaitSynced(group string, stop []int64, syncs [][]mirrorformat.OffsetSync) map[int32]int64 {
	e.t.Helper()
	var got map[int32]int64
	kafkatest.Eventually(e.t, 2*time.Minute, func() (bool, string) {
		cps := e.checkpoints()
		got = e.targetOffsets(group)
		for p := range int32(e.partitions) {
			cp, ok := cps[fmt.Sprintf("%s/%s/%d", group, e.remote, p)]
			want := translate(syncs[p], stop[p])
			if !ok || cp.UpstreamOffset != stop[p] || cp.DownstreamOffset != want {
				return false, fmt.Sprintf("partition %d: checkpoint %+v (found %v), want %d→%d", p, cp, ok, stop[p], want)
			}
			if got[p] != cp.DownstreamOffset {
				return false, fmt.Sprintf("partition %d: target offset %d, checkpoint says %d", p, got[p], cp.DownstreamOffset)
			}
		}
		return true, ""
	})
	return got
}

// resumeOnB runs group on B from its synced offsets to the end of the
// replica and returns the sequence numbers it read per partition.
func (e *env) resumeOnB(group string, perPartition int) [][]int {
	e.t.Helper()
	c, err := ckafka.NewConsumer(&ckafka.ConfigMap{"bootstrap.servers": e.b, "group.id": group,
		"enable.auto.commit": false, "isolation.level": "read_committed",
		// A partition without a synced offset would silently start at
		// the beginning; error makes that visible instead.
		"auto.offset.reset": "error"})
	if err != nil {
		e.t.Fatal(err)
	}
	defer c.Close()
	if err := c.Subscribe(e.remote, nil); err != nil {
		e.t.Fatal(err)
	}
	seqs := make([][]int, e.partitions)
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		m, err := c.ReadMessage(200 * time.Millisecond)
		if err != nil {
			if ke, ok := err.(ckafka.Error); ok && ke.Code() != ckafka.ErrTimedOut {
				e.t.Fatalf("consuming on B: %v", err)
			}
			complete := true
			for p := range e.partitions {
				complete = complete && len(seqs[p]) > 0 && seqs[p][len(seqs[p])-1] == perPartition-1
			}
			if complete {
				break
			}
			continue
		}
		p, seq := parseValue(e.t, m.Value)
		seqs[p] = append(seqs[p], seq)
	}
	return seqs
}

func parseValue(t *testing.T, v []byte) (int, int) {
	a, b, ok := strings.Cut(string(v), "-")
	p, err1 := strconv.Atoi(a)
	s, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("unexpected value %q", v)
	}
	return p, s
}

// checkFailover asserts that B's reading continues A's with no record lost
// and at most lagMax re-read per partition; it returns the re-read counts.
func (e *env) checkFailover(stop []int64, seqs [][]int, perPartition int) []int {
	e.t.Helper()
	reread := make([]int, e.partitions)
	for p := range e.partitions {
		seen := map[int]bool{}
		for _, s := range seqs[p] {
			if s < int(stop[p]) {
				reread[p]++
			}
			seen[s] = true
		}
		for s := int(stop[p]); s < perPartition; s++ {
			if !seen[s] {
				e.t.Fatalf("partition %d: record %d (consumed on A up to %d) is missing after failover to B", p, s, stop[p])
			}
		}
		if reread[p] > lagMax {
			e.t.Errorf("partition %d: %d records re-read after failover, offset.lag.max is %d", p, reread[p], lagMax)
		}
	}
	return reread
}

// awaitReplica waits until the replica holds every record, then asserts it
// holds each exactly once, in order, and returns the target offset of
// every source record per partition.
func (e *env) awaitReplica(perPartition int) [][]int64 {
	e.t.Helper()
	want := e.partitions * perPartition
	kafkatest.Eventually(e.t, 3*time.Minute, func() (bool, string) {
		n := len(kafkatest.B().ReadAll(e.t, e.remote, kafkatest.ReadCommitted, 100*time.Millisecond, time.Minute))
		return n >= want, fmt.Sprintf("replica holds %d of %d records", n, want)
	})
	msgs := kafkatest.B().ReadAll(e.t, e.remote, kafkatest.ReadCommitted, time.Second, 2*time.Minute)
	next := make([]int, e.partitions)
	at := make([][]int64, e.partitions)
	for _, m := range msgs {
		p, s := parseValue(e.t, m.Value)
		if int(m.TopicPartition.Partition) != p || s != next[p] {
			e.t.Fatalf("replica partition %d holds %d-%d where %d-%d was expected (duplicate, gap or misplacement)", m.TopicPartition.Partition, p, s, p, next[p])
		}
		next[p]++
		at[p] = append(at[p], int64(m.TopicPartition.Offset))
	}
	for p := range e.partitions {
		if next[p] != perPartition {
			e.t.Fatalf("replica partition %d holds %d records, want %d", p, next[p], perPartition)
		}
	}
	return at
}

// syncs reads the offset syncs of the source topic, per partition, in order.
func (e *env) syncs() [][]mirrorformat.OffsetSync {
	e.t.Helper()
	out := make([][]mirrorformat.OffsetSync, e.partitions)
	for _, m := range kafkatest.B().ReadAll(e.t, "mm2-offset-syncs."+alias+".internal", kafkatest.ReadCommitted, 200*time.Millisecond, time.Minute) {
		s, err := mirrorformat.DecodeOffsetSync(m.Key, m.Value)
		if err != nil {
			e.t.Fatalf("offset-syncs topic holds a record that is not a sync: %v", err)
		}
		if s.Topic == e.src {
			out[s.Partition] = append(out[s.Partition], s)
		}
	}
	return out
}

// checkSyncs asserts that every sync's target offset is at or below the
// true offset of the copy it names (at: target offset of each source
// offset), that syncs are at most lagMax records apart, and returns the
// largest slack (true − claimed).
func (e *env) checkSyncs(syncs [][]mirrorformat.OffsetSync, at [][]int64) int64 {
	e.t.Helper()
	var slack int64
	for p := range e.partitions {
		if len(syncs[p]) == 0 {
			e.t.Fatalf("partition %d has no offset syncs", p)
		}
		var prev int64 = -1
		for _, s := range syncs[p] {
			truth := at[p][s.UpstreamOffset]
			if s.DownstreamOffset > truth {
				e.t.Fatalf("partition %d: sync %d→%d claims past the copy's true offset %d: a failover would skip records", p, s.UpstreamOffset, s.DownstreamOffset, truth)
			}
			slack = max(slack, truth-s.DownstreamOffset)
			if prev >= 0 && s.UpstreamOffset-prev > lagMax {
				e.t.Errorf("partition %d: syncs at %d and %d are more than offset.lag.max apart", p, prev, s.UpstreamOffset)
			}
			prev = s.UpstreamOffset
		}
	}
	return slack
}

// translate is MM2's translation, done independently of the connector.
func translate(syncs []mirrorformat.OffsetSync, committed int64) int64 {
	best := int64(-1)
	for _, s := range syncs {
		if s.UpstreamOffset == committed {
			return s.DownstreamOffset
		}
		if s.UpstreamOffset < committed {
			best = s.DownstreamOffset + 1
		}
	}
	return best
}

func randomStops(rng *rand.Rand, partitions int, max int) []int64 {
	stop := make([]int64, partitions)
	for p := range stop {
		stop[p] = 1 + rng.Int64N(int64(max-1))
	}
	return stop
}

func TestFailoverResumesOnTargetFromSyncedOffsets(t *testing.T) {
	cases := []struct {
		name  string
		kills int
	}{
		{"undisturbed", 0},
		{"replication worker SIGKILLed", 3},
	}
	// Enough records that the copy takes seconds: the kills land in it.
	const partitions = 3
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			perPartition := 6000
			if tc.kills > 0 {
				perPartition = 30000
			}
			seed := uint64(time.Now().UnixNano())
			rng := rand.New(rand.NewPCG(seed, 22))
			t.Logf("seed %d", seed)
			e := newEnv(t, partitions)
			e.configure(300)
			if err := e.produce(0, perPartition/2); err != nil {
				t.Fatal(err)
			}
			cp := e.start(e.cp)
			repl := e.start(e.repl)
			repl.WaitLine(t, 2*time.Minute, "task repl-", "RUNNING")
			// The rest arrives while replication runs, and gets killed.
			produced := make(chan error, 1)
			go func() { produced <- e.produce(perPartition/2, perPartition/2) }()
			for i := range tc.kills {
				// Kill at spread points of the copy, each at a random moment
				// of the transaction then in flight.
				threshold := int64((i + 1) * partitions * perPartition / 8)
				kafkatest.Eventually(t, 2*time.Minute, func() (bool, string) {
					n := e.targetEnd()
					return n >= threshold, fmt.Sprintf("target end offsets sum to %d, waiting for %d", n, threshold)
				})
				time.Sleep(time.Duration(rng.IntN(100)) * time.Millisecond)
				repl.Kill()
				n := e.targetEnd()
				t.Logf("kill %d of the replication worker at %d target offsets (of about %d)", i+1, n, partitions*perPartition)
				if n >= int64(partitions*perPartition) {
					t.Fatalf("replication finished before kill %d: the test no longer crashes it mid-flight", i+1)
				}
				repl = e.start(e.repl)
				repl.WaitLine(t, 2*time.Minute, "task repl-", "RUNNING")
			}
			if err := <-produced; err != nil {
				t.Fatal(err)
			}
			group := kafkatest.UniqueName(t, "failover")
			stop := randomStops(rng, partitions, perPartition)
			e.consumeOnA(group, stop)
			at := e.awaitReplica(perPartition)
			syncs := e.syncs()
			slack := e.checkSyncs(syncs, at)
			synced := e.awaitSynced(group, stop, syncs)
			t.Logf("group stopped on A at %v, synced to B at %v; largest sync slack %d", stop, synced, slack)
			if tc.kills == 0 {
				// MM2's own client (RemoteClusterUtils.translateOffsets)
				// reads connectd's checkpoints to the same offsets.
				mm2 := mirrortest.Build(t).Translate(t, e.b, group, alias)
				for p := range int32(partitions) {
					tp := mirrortest.TopicPartition{Topic: e.remote, Partition: p}
					if got, ok := mm2[tp]; !ok || got != synced[p] {
						t.Errorf("MM2's MirrorClient translates %s[%d] of %s to %d (found %v), connectd synced %d", e.remote, p, group, got, ok, synced[p])
					}
				}
			}
			seqs := e.resumeOnB(group, perPartition)
			reread := e.checkFailover(stop, seqs, perPartition)
			t.Logf("re-read per partition after failover: %v (offset.lag.max %d)", reread, lagMax)
			_ = cp
		})
	}
}

// setOffsets commits offsets of group for topic on a cluster with the admin client.
func setOffsets(t *testing.T, cl kafkatest.Cluster, group, topic string, offs map[int32]int64) {
	t.Helper()
	var parts []ckafka.TopicPartition
	for p, o := range offs {
		parts = append(parts, ckafka.TopicPartition{Topic: &topic, Partition: p, Offset: ckafka.Offset(o)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cl.Admin(t).AlterConsumerGroupOffsets(ctx, []ckafka.ConsumerGroupTopicPartitions{{Group: group, Partitions: parts}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.ConsumerGroupsTopicPartitions {
		for _, tp := range r.Partitions {
			if tp.Error != nil {
				t.Fatalf("setting %s[%d] of %s: %v", topic, tp.Partition, group, tp.Error)
			}
		}
	}
}

// awaitCheckpoint waits for group's checkpoints of every partition to
// carry upstream offset up.
func (e *env) awaitCheckpoint(group string, up int64) {
	e.t.Helper()
	kafkatest.Eventually(e.t, time.Minute, func() (bool, string) {
		cps := e.checkpoints()
		for p := range int32(e.partitions) {
			if cp := cps[fmt.Sprintf("%s/%s/%d", group, e.remote, p)]; cp.UpstreamOffset != up {
				return false, fmt.Sprintf("partition %d: checkpoint %+v, want upstream %d", p, cp, up)
			}
		}
		return true, ""
	})
}

// syncRounds lets the checkpoint task run a few group-sync rounds (1 s
// apart): the assertions after it are about something that must not
// happen, which no condition can await.
func syncRounds() { time.Sleep(3500 * time.Millisecond) }

func TestGroupOffsetSyncRules(t *testing.T) {
	const partitions, perPartition = 2, 2000
	e := newEnv(t, partitions)
	e.configure(500)
	if err := e.produce(0, perPartition); err != nil {
		t.Fatal(err)
	}
	cp := e.start(e.cp)
	e.start(e.repl)
	e.awaitReplica(perPartition)
	syncs := e.syncs()
	stop := []int64{1500, 1500}

	t.Run("never backwards", func(t *testing.T) {
		group := kafkatest.UniqueName(t, "failover-back")
		e.consumeOnA(group, stop)
		synced := e.awaitSynced(group, stop, syncs)
		// The group moved on on B (partition 0), and was reset on A.
		setOffsets(t, kafkatest.B(), group, e.remote, map[int32]int64{0: synced[0] + 300})
		setOffsets(t, kafkatest.A(), group, e.src, map[int32]int64{0: 10, 1: 10})
		e.awaitCheckpoint(group, 10)
		syncRounds()
		got := e.targetOffsets(group)
		if got[0] != synced[0]+300 || got[1] != synced[1] {
			t.Fatalf("target offsets %v after the source went back to 10; want %d and %d (never backwards)", got, synced[0]+300, synced[1])
		}
		// Forward again on A: the target follows where it is behind.
		setOffsets(t, kafkatest.A(), group, e.src, map[int32]int64{0: 1900, 1: 1900})
		e.awaitCheckpoint(group, 1900)
		kafkatest.Eventually(t, time.Minute, func() (bool, string) {
			got = e.targetOffsets(group)
			return got[0] == translate(syncs[0], 1900) && got[1] == translate(syncs[1], 1900),
				fmt.Sprintf("target offsets %v, want %d and %d", got, translate(syncs[0], 1900), translate(syncs[1], 1900))
		})
	})

	t.Run("active on the target", func(t *testing.T) {
		group := kafkatest.UniqueName(t, "failover-active")
		c, err := ckafka.NewConsumer(&ckafka.ConfigMap{"bootstrap.servers": e.b, "group.id": group,
			"enable.auto.commit": false, "auto.offset.reset": "latest"})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Subscribe(e.remote, nil); err != nil {
			t.Fatal(err)
		}
		stopPolling := make(chan struct{})
		polled := make(chan struct{})
		go func() {
			defer close(polled)
			for {
				select {
				case <-stopPolling:
					return
				default:
					c.Poll(100)
				}
			}
		}()
		kafkatest.Eventually(t, time.Minute, func() (bool, string) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			res, err := kafkatest.B().Admin(t).DescribeConsumerGroups(ctx, []string{group})
			if err != nil || len(res.ConsumerGroupDescriptions) == 0 {
				return false, fmt.Sprint(err)
			}
			d := res.ConsumerGroupDescriptions[0]
			return d.State == ckafka.ConsumerGroupStateStable, "group state " + d.State.String()
		})
		e.consumeOnA(group, stop)
		e.awaitCheckpoint(group, stop[0])
		cp.WaitLine(t, time.Minute, "active on the target", group)
		syncRounds()
		if got := e.targetOffsets(group); len(got) != 0 {
			t.Fatalf("offsets %v were committed for a group with members on the target", got)
		}
		close(stopPolling)
		<-polled
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		// Once it left, the group is synced.
		e.awaitSynced(group, stop, syncs)
	})

	t.Run("deleted on the source", func(t *testing.T) {
		group := kafkatest.UniqueName(t, "failover-gone")
		e.consumeOnA(group, stop)
		e.awaitCheckpoint(group, stop[0])
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := kafkatest.A().Admin(t).DeleteConsumerGroups(ctx, []string{group})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.ConsumerGroupResults {
			if r.Error.Code() != ckafka.ErrNoError {
				t.Fatalf("deleting %s: %v", group, r.Error)
			}
		}
		cp.WaitLine(t, time.Minute, "consumer group is gone from the source", group)
		before := len(e.checkpointRecords(group))
		// Its offsets on B must not move any more either: move one back
		// on B and see that it stays.
		setOffsets(t, kafkatest.B(), group, e.remote, map[int32]int64{0: 5})
		syncRounds()
		if n := len(e.checkpointRecords(group)); n != before {
			t.Fatalf("%d checkpoints of the deleted group, %d before it was deleted", n, before)
		}
		if got := e.targetOffsets(group); got[0] != 5 {
			t.Fatalf("the deleted group's target offset moved to %d", got[0])
		}
	})
}

// checkpointRecords lists every checkpoint record of group (not only the latest).
func (e *env) checkpointRecords(group string) []mirrorformat.Checkpoint {
	e.t.Helper()
	var out []mirrorformat.Checkpoint
	for _, m := range kafkatest.B().ReadAll(e.t, alias+".checkpoints.internal", kafkatest.ReadCommitted, 200*time.Millisecond, time.Minute) {
		cp, err := mirrorformat.DecodeCheckpoint(m.Key, m.Value)
		if err == nil && cp.Group == group {
			out = append(out, cp)
		}
	}
	return out
}

// targetEnd sums the replica's end offsets on B (records, markers and
// aborted records): a cheap measure of the copy's progress.
func (e *env) targetEnd() int64 {
	e.t.Helper()
	req := map[ckafka.TopicPartition]ckafka.OffsetSpec{}
	for p := range int32(e.partitions) {
		req[ckafka.TopicPartition{Topic: &e.remote, Partition: p}] = ckafka.LatestOffsetSpec
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := kafkatest.B().Admin(e.t).ListOffsets(ctx, req)
	if err != nil {
		return 0
	}
	var n int64
	for _, info := range res.ResultInfos {
		if info.Error.Code() == ckafka.ErrNoError {
			n += int64(info.Offset)
		}
	}
	return n
}
