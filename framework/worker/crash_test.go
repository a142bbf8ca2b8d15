package worker_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/worker"
	"github.com/connectd/connectd/internal/kafkatest"
)

// crashKills is how many times the crash tests kill a worker or plugin:
// 5 by default (the minimum the project's rules ask for), 3 with -short,
// CONNECTD_CRASH_KILLS to run longer.
func crashKills() int {
	if v, err := strconv.Atoi(os.Getenv("CONNECTD_CRASH_KILLS")); err == nil && v > 0 {
		return v
	}
	if testing.Short() {
		return 3
	}
	return 5
}

// randomDelay is a random moment in [lo, hi).
func randomDelay(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rand.Int64N(int64(hi-lo)))
}

// TestSourceCrashKillWorker SIGKILLs an exactly-once worker process at
// random moments while its tasks produce, restarts it each time, and
// checks that a read_committed consumer sees every generated record once,
// in order per partition. Aborted records in the topic prove that kills
// hit open transactions.
func TestSourceCrashKillWorker(t *testing.T) {
	e := newEnv(t)
	topic := kafkatest.Topic(t, kafkatest.Partitions(3))
	const tasks, perTask = 2, 30_000
	props := datagenProps(topic, tasks, perTask)
	props["transaction.boundary"] = "interval"
	props["transaction.boundary.interval.ms"] = "200"
	// Paced at about a record per millisecond per task, so the generation
	// outlasts the kills whatever the machine's speed: unpaced, a fast
	// worker finished every record before the later kills, and no kill
	// hit an open transaction.
	props["max.interval"] = "1"
	name := kafkatest.UniqueName(t, "c")

	kills := crashKills()
	for i := range kills {
		p := e.spawn(name, props, true)
		p.waitRunning(name, tasks, time.Minute)
		time.Sleep(randomDelay(300*time.Millisecond, 1500*time.Millisecond))
		p.kill()
		t.Logf("kill %d/%d: worker %d killed", i+1, kills, p.pid())
	}
	p := e.spawn(name, props, true)
	p.waitRunning(name, tasks, time.Minute)
	msgs := readCommitted(t, topic, tasks*perTask, 3*time.Minute)
	p.stop()
	checkExactlyOnce(t, msgs, tasks, perTask)

	all := kafkatest.ReadAll(t, topic, kafkatest.ReadUncommitted, 200*time.Millisecond, 2*time.Minute)
	if len(all) <= len(msgs) {
		t.Errorf("read_uncommitted sees %d records, read_committed %d: no kill hit an open transaction", len(all), len(msgs))
	}
	t.Logf("%d records exactly once after %d kills; %d aborted records left behind by the kills", len(msgs), kills, len(all)-len(msgs))
}

// TestSourceCrashKillPlugin SIGKILLs the plugin process instead: the
// worker runs two datagen connectors, which share one plugin process, and
// a file sink, a plugin of its own. Every task of the killed process fails
// with the plugin's exit as trace, is restarted automatically with a new
// plugin process, and resumes from the committed offsets; the sink's task
// and process are untouched.
func TestSourceCrashKillPlugin(t *testing.T) {
	e := newEnv(t)
	const tasks, perTask = 2, 150_000
	names := []string{kafkatest.UniqueName(t, "c"), kafkatest.UniqueName(t, "d")}
	topics := []string{kafkatest.Topic(t, kafkatest.Partitions(3)), kafkatest.Topic(t, kafkatest.Partitions(3))}
	sink := kafkatest.UniqueName(t, "sink")
	p := e.spawn(names[0], datagenProps(topics[0], tasks, perTask), true,
		append(e.also(names[1], datagenProps(topics[1], tasks, perTask)),
			e.also(sink, sinkProps(topics[0], filepath.Join(t.TempDir(), "out"), 1))...)...)
	for _, name := range names {
		p.waitRunning(name, tasks, time.Minute)
	}
	p.waitRunning(sink, 1, time.Minute)
	sinkPids := p.pluginChildren("filesink")
	var taskNames []string
	for _, name := range names {
		for task := range tasks {
			taskNames = append(taskNames, fmt.Sprintf("%s-%d", name, task))
		}
	}
	kills := crashKills()
	for i := range kills {
		// Wait for the tasks to run again after the previous kill.
		if i > 0 {
			kafkatest.Eventually(t, time.Minute, func() (bool, string) {
				n := 0
				for _, task := range taskNames {
					if ev, _, ok := lastTaskEvent(p.status, task); ok && ev.state == worker.StateRunning {
						n++
					}
				}
				return n == len(taskNames), "tasks not RUNNING again after the plugin was killed; events:" + p.status.String()
			})
		}
		time.Sleep(randomDelay(300*time.Millisecond, 1500*time.Millisecond))
		kids := p.pluginChildren("datagen")
		if len(kids) != 1 {
			t.Fatalf("kill %d: worker %d has datagen plugin processes %v, want one shared by both connectors", i+1, p.pid(), kids)
		}
		mark := p.status.count()
		_ = syscall.Kill(kids[0], syscall.SIGKILL)
		t.Logf("kill %d/%d: plugin process %d killed", i+1, kills, kids[0])
		// Every task of the process must notice and fail. It may be
		// RUNNING again by the time this looks (a restart reads its
		// offsets from the worker's follower at once), so the check is
		// a FAILED after the kill, not the latest state.
		kafkatest.Eventually(t, time.Minute, func() (bool, string) {
			for _, task := range taskNames {
				if _, _, ok := p.status.find(task, worker.StateFailed, mark); !ok {
					return false, task + " did not notice the dead plugin; events:" + p.status.String()
				}
			}
			return true, ""
		})
	}
	var all [][]*kafka.Message
	for _, topic := range topics {
		all = append(all, readCommitted(t, topic, tasks*perTask, 3*time.Minute))
	}
	for _, task := range taskNames {
		failed, _, ok := p.status.find(task, worker.StateFailed, 0)
		if !ok || !strings.Contains(failed.trace, "exited unexpectedly: signal: killed") {
			t.Errorf("task %s never reported FAILED with the plugin's exit as trace; events:%s", task, p.status)
		}
	}
	failed, _, _ := p.status.find(taskNames[0], worker.StateFailed, 0)
	t.Logf("trace of a failure: %s", failed.trace)
	if _, _, ok := p.status.find(sink+"-0", worker.StateFailed, 0); ok {
		t.Errorf("the other plugin's task failed; events:%s", p.status)
	}
	if now := p.pluginChildren("filesink"); len(sinkPids) != 1 || !slices.Equal(now, sinkPids) {
		t.Errorf("file sink plugin processes %v before the kills, %v after: want one, untouched", sinkPids, now)
	}
	p.stop()
	for _, msgs := range all {
		checkExactlyOnce(t, msgs, tasks, perTask)
	}
}

func lastTaskEvent(s *statusLog, name string) (statusEvent, int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.events) - 1; i >= 0; i-- {
		if s.events[i].name == name {
			return s.events[i], i, true
		}
	}
	return statusEvent{}, 0, false
}

// TestSourceZombieFenced freezes a worker (SIGSTOP) in the middle of its
// work, starts a second worker for the same task, then resumes the first:
// the first is fenced and stops FAILED without restarting, the second
// carries on, and the output is exactly once.
func TestSourceZombieFenced(t *testing.T) {
	e := newEnv(t)
	topic := kafkatest.Topic(t, kafkatest.Partitions(3))
	// One record per poll, 0-1 ms apart, until stopped: the zombie is
	// surely frozen in the middle of its work.
	props := datagenProps(topic, 1, 1_000_000)
	props["max.interval"] = "1"
	props["transaction.boundary"] = "interval"
	props["transaction.boundary.interval.ms"] = "200"
	name := kafkatest.UniqueName(t, "c")

	zombie := e.spawn(name, props, true)
	zombie.waitRunning(name, 1, time.Minute)
	waitMore(t, topic, 0)
	time.Sleep(randomDelay(0, 500*time.Millisecond))
	zombie.signal(syscall.SIGSTOP)
	t.Logf("worker %d frozen", zombie.pid())

	successor := e.spawn(name, props, true)
	successor.waitRunning(name, 1, time.Minute)
	// The successor commits on top of the zombie's last commit.
	waitMore(t, topic, len(committedNow(t, topic)))
	zombie.signal(syscall.SIGCONT)
	t.Logf("worker %d resumed", zombie.pid())

	ev := zombie.status.waitFor(t, name+"-0", worker.StateFailed, time.Minute)
	if !strings.Contains(ev.trace, "fenced") {
		t.Errorf("the zombie failed, but not because it was fenced: %s", ev.trace)
	}
	t.Logf("zombie's trace: %s", ev.trace)
	waitMore(t, topic, len(committedNow(t, topic))+100)
	successor.stop()
	zombie.stop()
	n := checkPrefixOnce(t, kafkatest.ReadAll(t, topic, kafkatest.ReadCommitted, 500*time.Millisecond, time.Minute), 1)
	t.Logf("%d records exactly once", n)
	_, failedAt, _ := zombie.status.find(name+"-0", worker.StateFailed, 0)
	if _, _, again := zombie.status.find(name+"-0", worker.StateRestarting, failedAt); again {
		t.Errorf("the fenced zombie restarted (it must not fight its successor); events:%s", zombie.status)
	}
	if _, _, ok := successor.status.find(name+"-0", worker.StateFailed, 0); ok {
		t.Errorf("the successor failed; events:%s", successor.status)
	}
}
