package worker_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/framework/worker"
	"github.com/connectd/connectd/internal/kafkatest"
	"github.com/connectd/connectd/offsets"
)

// produceInput writes n records to topic, record i to partition i%parts
// with key k<i> and value value(i), and waits for all of them.
func produceInput(t *testing.T, topic string, parts, n int, value func(i int) []byte) {
	t.Helper()
	// Batches of at most 250 records, so that a consumer with a small
	// max.partition.fetch.bytes interleaves the partitions.
	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": kafkatest.Bootstrap(t), "linger.ms": 5, "batch.num.messages": 250, "go.delivery.reports": false})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i := range n {
		m := &kafka.Message{
			TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: int32(i % parts)},
			Key:            []byte("k" + strconv.Itoa(i)), Value: value(i),
		}
		for {
			err := p.Produce(m, nil)
			if ke, ok := err.(kafka.Error); ok && ke.Code() == kafka.ErrQueueFull {
				p.Flush(100)
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if left := p.Flush(60_000); left != 0 {
		t.Fatalf("%d input records not delivered", left)
	}
}

func jsonValue(i int) []byte { return []byte(fmt.Sprintf(`{"n":%d}`, i)) }

func sinkProps(topic, file string, tasks int) map[string]string {
	return map[string]string{
		"connector.class":                "TestFileSink",
		"tasks.max":                      strconv.Itoa(tasks),
		"topics":                         topic,
		"file":                           file,
		"key.converter":                  "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable": "false",
	}
}

// applied reads the file sink's output: per partition, how often each
// offset was applied. A torn last line (a kill mid-write) is ignored.
func applied(t *testing.T, file string) map[sdk.TopicPartition]map[int64]int {
	t.Helper()
	out := map[sdk.TopicPartition]map[int64]int{}
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return out
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != 5 {
			continue
		}
		p, err1 := strconv.Atoi(fields[1])
		o, err2 := strconv.ParseInt(fields[2], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		tp := sdk.TopicPartition{Topic: fields[0], Partition: int32(p)}
		if out[tp] == nil {
			out[tp] = map[int64]int{}
		}
		out[tp][o]++
	}
	return out
}

func committedSink(t *testing.T, connector string) map[sdk.TopicPartition]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := offsets.SinkOffsets(ctx, kafkatest.Admin(t), connector)
	if err != nil {
		t.Fatal(err)
	}
	out := map[sdk.TopicPartition]int64{}
	for _, o := range list {
		out[o.TopicPartition] = o.Offset
	}
	return out
}

// checkCommittedApplied checks the sink's promise: no committed consumer
// offset passes a record the sink has not applied.
func checkCommittedApplied(t *testing.T, connector, file string) {
	t.Helper()
	committed := committedSink(t, connector)
	app := applied(t, file)
	for tp, c := range committed {
		for o := int64(0); o < c; o++ {
			if app[tp][o] == 0 && !skipped(tp, o) {
				t.Fatalf("committed offset %d of %s passes offset %d, which the sink never applied", c, tp, o)
			}
		}
	}
}

// skipped lets tests mark records that legitimately never reach the file
// (dead-lettered ones); none by default.
var skipped = func(sdk.TopicPartition, int64) bool { return false }

// waitCommittedTo waits until the connector's committed offsets reach n
// records per partition.
func waitCommittedTo(t *testing.T, connector, topic string, parts, perPart int, timeout time.Duration) {
	t.Helper()
	kafkatest.Eventually(t, timeout, func() (bool, string) {
		c := committedSink(t, connector)
		for p := range parts {
			if got := c[sdk.TopicPartition{Topic: topic, Partition: int32(p)}]; got < int64(perPart) {
				return false, fmt.Sprintf("partition %d committed to %d of %d (all: %v)", p, got, perPart, c)
			}
		}
		return true, ""
	})
}

func checkAllApplied(t *testing.T, file, topic string, parts, perPart int) (dups int) {
	t.Helper()
	app := applied(t, file)
	for p := range parts {
		tp := sdk.TopicPartition{Topic: topic, Partition: int32(p)}
		for o := int64(0); o < int64(perPart); o++ {
			switch n := app[tp][o]; {
			case n == 0 && !skipped(tp, o):
				t.Fatalf("%s offset %d was never applied", tp, o)
			case n > 1:
				dups += n - 1
			}
		}
		for o := range app[tp] {
			if o >= int64(perPart) {
				t.Fatalf("%s offset %d applied but never produced", tp, o)
			}
		}
	}
	return dups
}

func TestSinkDeliversAndCommits(t *testing.T) {
	e := newEnv(t)
	const parts, n = 3, 6000
	topic := kafkatest.Topic(t, kafkatest.Partitions(parts))
	produceInput(t, topic, parts, n, jsonValue)
	file := filepath.Join(t.TempDir(), "applied.tsv")
	w, st := e.start(e.config(true))
	name := kafkatest.UniqueName(t, "s")
	e.run(w, name, sinkProps(topic, file, 2))
	st.waitFor(t, name+"-0", worker.StateRunning, 30*time.Second)
	waitCommittedTo(t, name, topic, parts, n/parts, time.Minute)
	checkCommittedApplied(t, name, file)
	if dups := checkAllApplied(t, file, topic, parts, n/parts); dups != 0 {
		t.Errorf("%d records applied twice without any crash", dups)
	}
}

// TestSinkCrashKillWorker SIGKILLs a sink worker at random moments. After
// every kill the committed consumer offsets must not pass a record the
// sink did not apply; at the end every input offset is applied at least
// once.
func TestSinkCrashKillWorker(t *testing.T) {
	e := newEnv(t)
	const parts, n = 3, 60_000
	topic := kafkatest.Topic(t, kafkatest.Partitions(parts))
	produceInput(t, topic, parts, n, jsonValue)
	file := filepath.Join(t.TempDir(), "applied.tsv")
	props := sinkProps(topic, file, 2)
	// Puts of 100 records taking 20 ms: slow enough that every kill
	// lands in the middle of the work.
	props["put.delay.ms"] = "20"
	name := kafkatest.UniqueName(t, "s")

	kills := crashKills()
	began := time.Now()
	for i := range kills {
		p := e.spawn(name, props, true, "-sink-batch", "100")
		p.waitRunning(name, 2, time.Minute)
		// Kill only once this worker makes progress (the killed worker's
		// group members must time out first), at a random moment.
		before := sum(committedSink(t, name))
		kafkatest.Eventually(t, time.Minute, func() (bool, string) {
			now := sum(committedSink(t, name))
			return now > before, fmt.Sprintf("no commit beyond %d records", now)
		})
		time.Sleep(randomDelay(100*time.Millisecond, 1500*time.Millisecond))
		p.kill()
		checkCommittedApplied(t, name, file)
		t.Logf("%v kill %d/%d: %d records committed, committed offsets cover only applied records", time.Since(began).Round(time.Second), i+1, kills, sum(committedSink(t, name)))
	}
	p := e.spawn(name, props, true, "-sink-batch", "100")
	p.waitRunning(name, 2, time.Minute)
	t.Logf("%v final worker running", time.Since(began).Round(time.Second))
	waitCommittedTo(t, name, topic, parts, n/parts, 3*time.Minute)
	t.Logf("%v all committed", time.Since(began).Round(time.Second))
	p.stop()
	checkCommittedApplied(t, name, file)
	dups := checkAllApplied(t, file, topic, parts, n/parts)
	t.Logf("every one of %d records applied at least once after %d kills (%d applied again after a crash)", n, kills, dups)
}

func sum(m map[sdk.TopicPartition]int64) int64 {
	var s int64
	for _, v := range m {
		s += v
	}
	return s
}

// TestSinkRetriablePutRedelivers: the first Put calls fail with a
// retriable error; the runner backs off and delivers the same batch
// again, nothing is lost and nothing applied twice.
func TestSinkRetriablePutRedelivers(t *testing.T) {
	e := newEnv(t)
	const parts, n = 2, 500
	topic := kafkatest.Topic(t, kafkatest.Partitions(parts))
	produceInput(t, topic, parts, n, jsonValue)
	file := filepath.Join(t.TempDir(), "applied.tsv")
	cfg := e.config(true)
	w, st := e.start(cfg)
	props := sinkProps(topic, file, 1)
	props["retriable.puts"] = "3"
	props["errors.retry.delay.max.ms"] = "400"
	name := kafkatest.UniqueName(t, "s")
	e.run(w, name, props)
	st.waitFor(t, name+"-0", worker.StateRunning, 30*time.Second)
	waitCommittedTo(t, name, topic, parts, n/parts, time.Minute)
	if dups := checkAllApplied(t, file, topic, parts, n/parts); dups != 0 {
		t.Errorf("%d records applied twice", dups)
	}
	if got := metricSum(t, cfg, "connectd_task_retries_total", map[string]string{"connector": name, "stage": "TASK_PUT"}); got != 3 {
		t.Errorf("connectd_task_retries_total{stage=TASK_PUT} = %v, want 3", got)
	}
	if _, _, failed := st.find(name+"-0", worker.StateFailed, 0); failed {
		t.Errorf("retriable put errors failed the task:%s", st)
	}
}

// TestSinkRevocationCommits: when a second task joins the group, the
// cooperative rebalance moves partitions away from the first, which
// flushes and commits them before giving them up. Periodic commits are
// off (a one-minute interval), so without the commit on revocation the
// new owner would apply the moved partitions again from the start.
func TestSinkRevocationCommits(t *testing.T) {
	e := newEnv(t)
	const parts, n = 4, 20_000
	topic := kafkatest.Topic(t, kafkatest.Partitions(parts))
	produceInput(t, topic, parts, n, jsonValue)
	file := filepath.Join(t.TempDir(), "applied.tsv")
	cfg := e.config(true)
	cfg.OffsetFlushInterval = time.Minute
	cfg.SinkBatchRecords = 50
	w, st := e.start(cfg)
	props := sinkProps(topic, file, 2)
	props["put.delay.ms"] = "50" // 1000 records a second: the rebalance happens mid-way
	// Small fetches interleave the partitions; with librdkafka's 1 MiB
	// default one fetch holds a whole partition, and the last partition
	// would start only when three quarters of the records were applied.
	props["consumer.override.max.partition.fetch.bytes"] = "4096"
	name := kafkatest.UniqueName(t, "s")
	ctx := context.Background()
	configs := e.startConnector(w, name, props)
	if err := w.StartTask(ctx, worker.TaskID{Connector: name, Task: 0}, props, configs[0], worker.TargetStarted); err != nil {
		t.Fatal(err)
	}
	// Every partition has applied records before some of them move.
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		app := applied(t, file)
		for p := range parts {
			if len(app[sdk.TopicPartition{Topic: topic, Partition: int32(p)}]) < 50 {
				return false, fmt.Sprintf("task 0 applied %d records of partition %d", len(app[sdk.TopicPartition{Topic: topic, Partition: int32(p)}]), p)
			}
		}
		return true, ""
	})
	if err := w.StartTask(ctx, worker.TaskID{Connector: name, Task: 1}, props, configs[1], worker.TargetStarted); err != nil {
		t.Fatal(err)
	}
	st.waitFor(t, name+"-1", worker.StateRunning, time.Minute)
	// Both tasks share the partitions once the rebalance is over; wait for
	// every record, then stop (the final commit).
	kafkatest.Eventually(t, 2*time.Minute, func() (bool, string) {
		got := 0
		for _, offs := range applied(t, file) {
			got += len(offs)
		}
		return got >= n, fmt.Sprintf("%d of %d records applied", got, n)
	})
	if err := w.StopTasks(ctx, []worker.TaskID{{Connector: name, Task: 0}, {Connector: name, Task: 1}}); err != nil {
		t.Fatal(err)
	}
	if dups := checkAllApplied(t, file, topic, parts, n/parts); dups != 0 {
		t.Errorf("%d records applied twice across the rebalance: the revoked partitions were not committed before they moved", dups)
	}
	if c := sum(committedSink(t, name)); c != n {
		t.Errorf("committed %d records at stop, want %d: %v", c, n, committedSink(t, name))
	}
}

// groupMember is a consumer group member as DescribeConsumerGroups sees it.
type groupMember struct {
	clientID   string
	partitions int
}

// groupMembers describes a consumer group: its members and its state.
func groupMembers(t *testing.T, group string) ([]groupMember, kafka.ConsumerGroupState) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := kafkatest.Admin(t).DescribeConsumerGroups(ctx, []string{group})
	if err != nil {
		t.Fatalf("describe group %s: %v", group, err)
	}
	d := res.ConsumerGroupDescriptions[0]
	if d.Error.Code() != kafka.ErrNoError {
		t.Fatalf("describe group %s: %v", group, d.Error)
	}
	var members []groupMember
	for _, m := range d.Members {
		members = append(members, groupMember{clientID: m.ClientID, partitions: len(m.Assignment.TopicPartitions)})
	}
	return members, d.State
}

// A stopped sink task that holds no partitions must still leave its
// consumer group: librdkafka (2.11) sends no LeaveGroup when a
// cooperative-sticky member with an empty assignment closes, and the
// group then keeps the dead member for session.timeout.ms (45 s), stalling
// the next rebalance of every other task of the connector.
func TestSinkStoppedTaskWithoutPartitionsLeavesTheGroup(t *testing.T) {
	e := newEnv(t)
	topic := kafkatest.Topic(t, kafkatest.Partitions(1))
	produceInput(t, topic, 1, 100, jsonValue)
	file := filepath.Join(t.TempDir(), "applied.tsv")
	w, st := e.start(e.config(true))
	props := sinkProps(topic, file, 2)
	name := kafkatest.UniqueName(t, "s")
	for _, id := range e.run(w, name, props) {
		st.waitFor(t, fmt.Sprintf("%s-%d", name, id.Task), worker.StateRunning, time.Minute)
	}
	group := offsets.SinkGroup(name)
	// One partition, two members: one of them holds nothing. The
	// consumers' client ids end in -<task>.
	idle, busy := -1, -1
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		m, s := groupMembers(t, group)
		if len(m) != 2 || s != kafka.ConsumerGroupStateStable {
			return false, fmt.Sprintf("group %s: %v, members %v", group, s, m)
		}
		for _, mb := range m {
			task := int(mb.clientID[len(mb.clientID)-1] - '0')
			if mb.partitions == 0 {
				idle = task
			} else {
				busy = task
			}
		}
		return idle >= 0 && busy >= 0, fmt.Sprintf("members of %s: %v", group, m)
	})
	waitCommittedTo(t, name, topic, 1, 100, time.Minute)
	if err := w.StopTasks(context.Background(), []worker.TaskID{{Connector: name, Task: idle}}); err != nil {
		t.Fatal(err)
	}
	// Well under the 45-s session timeout that would evict a member that
	// did not leave.
	kafkatest.Eventually(t, 15*time.Second, func() (bool, string) {
		m, _ := groupMembers(t, group)
		return len(m) == 1 && strings.HasSuffix(m[0].clientID, fmt.Sprintf("-%d", busy)), fmt.Sprintf("members of %s after task %d (no partitions) stopped: %v", group, idle, m)
	})
}

func TestSinkTopicsRegex(t *testing.T) {
	e := newEnv(t)
	prefix := kafkatest.UniqueName(t, "rx")
	a, b := prefix+"-a", prefix+"-b"
	kafkatest.CreateTopic(t, a)
	kafkatest.CreateTopic(t, b)
	produceInput(t, a, 1, 100, jsonValue)
	produceInput(t, b, 1, 100, jsonValue)
	file := filepath.Join(t.TempDir(), "applied.tsv")
	w, _ := e.start(e.config(true))
	props := sinkProps("", file, 1)
	delete(props, "topics")
	props["topics.regex"] = strings.ReplaceAll(prefix, ".", `\.`) + "-.*"
	name := kafkatest.UniqueName(t, "s")
	e.run(w, name, props)
	waitCommittedTo(t, name, a, 1, 100, time.Minute)
	waitCommittedTo(t, name, b, 1, 100, time.Minute)
	checkAllApplied(t, file, a, 1, 100)
	checkAllApplied(t, file, b, 1, 100)
}
