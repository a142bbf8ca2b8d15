package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// broker is the suite's own Kafka broker, run by scripts/kafka.sh with a
// separate state directory so that restarting it disturbs no one else.
type broker struct {
	script    string
	runDir    string // CONNECTD_RUN_DIR for the script
	heap      string
	Bootstrap string
}

func (b *broker) run(ctx context.Context, arg string) (string, error) {
	cmd := exec.CommandContext(ctx, b.script, arg)
	cmd.Env = append(os.Environ(), "CONNECTD_RUN_DIR="+b.runDir, "KAFKA_HEAP_OPTS="+b.heap)
	out, err := cmd.Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg = strings.TrimSpace(string(ee.Stderr))
		}
		return "", fmt.Errorf("scripts/kafka.sh %s: %s", arg, msg)
	}
	return string(out), nil
}

// startBroker starts (or reuses, after an interrupted run) the broker of
// runDir.
func startBroker(ctx context.Context, repo, runDir string) (*broker, error) {
	b := &broker{script: filepath.Join(repo, "scripts", "kafka.sh"), runDir: runDir, heap: "-Xms128m -Xmx512m"}
	out, err := b.run(ctx, "up")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "KAFKA_BOOTSTRAP="); ok {
			b.Bootstrap = strings.TrimSpace(v)
		}
	}
	if b.Bootstrap == "" {
		return nil, fmt.Errorf("scripts/kafka.sh up printed no KAFKA_BOOTSTRAP line: %q", out)
	}
	return b, nil
}

// restart stops the broker and starts it again on the same data and port.
func (b *broker) restart(ctx context.Context) error {
	_, err := b.run(ctx, "restart")
	return err
}

func (b *broker) stop(ctx context.Context) error {
	_, err := b.run(ctx, "down")
	return err
}

// pid is the broker JVM's pid, 0 if unknown.
func (b *broker) pid() int {
	s, err := os.ReadFile(filepath.Join(b.runDir, "kafka", "pid"))
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(s)))
	return n
}
