//go:build chaos

package chaos

import (
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/citest"
	"github.com/connectd/connectd/internal/repo"
)

var (
	flagDuration = flag.Duration("chaos.duration", 60*time.Second, "how long to inject faults (make chaos: DURATION)")
	flagSeed     = flag.Int64("chaos.seed", 0, "seed of the fault schedule; 0 picks one from the clock (printed)")
	flagDir      = flag.String("chaos.dir", "", "keep logs, samples and the report here, relative to the repository root (default: a temp dir, removed after a passing run)")
	flagExclude  = flag.String("chaos.exclude", "", "fault kinds never to inject, comma-separated (make chaos EXCLUDE=...)")
	flagSoak     = flag.Bool("chaos.soak", false, "soak mode: missed recovery targets and growing resource trends are violations; samples every 5 s instead of 1 s")
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// need fails (CI=true) or skips when a tool the suite needs is missing.
func need(t *testing.T, tool, how string) {
	if _, err := exec.LookPath(tool); err != nil {
		citest.Unavailable(t, "chaos: %s is not installed: %s", tool, how)
	}
}

// TestChaos runs the pipeline under faults and fails on any violation of
// its promises, printing the seed that reproduces the schedule.
func TestChaos(t *testing.T) {
	need(t, "java", "the suite starts its own Kafka broker (apt-get install -y openjdk-17-jre-headless)")
	need(t, "mvn", "scripts/kafka.sh resolves the Kafka jars with Maven (apt-get install -y maven)")
	need(t, "go", "the suite builds connectd and the plugins")
	repo := repoRoot(t)
	seed := *flagSeed
	if seed == 0 {
		seed = time.Now().UnixNano() % 1_000_000_000
	}
	dir := *flagDir
	keep := dir != ""
	if !keep {
		var err error
		if dir, err = os.MkdirTemp("", "connectd-chaos-"); err != nil {
			t.Fatal(err)
		}
	} else if !filepath.IsAbs(dir) {
		// go test runs in the package directory; a relative -chaos.dir
		// (make chaos CHAOS_DIR=.run/chaos/...) means the repository's.
		dir = filepath.Join(repo, dir)
	}
	t.Logf("chaos seed %d, faults for %v, output in %s", seed, *flagDuration, dir)
	opts := Options{
		Duration:       *flagDuration,
		Seed:           seed,
		Repo:           repo,
		Dir:            dir,
		BrokerRunDir:   filepath.Join(repo, ".run", "chaos-broker"),
		StrictRecovery: *flagSoak,
		JudgeTrends:    *flagSoak,
		SampleEvery:    time.Second,
		Out:            os.Stdout,
	}
	for _, k := range strings.Split(*flagExclude, ",") {
		if k = strings.TrimSpace(k); k != "" {
			opts.Exclude = append(opts.Exclude, k)
		}
	}
	if *flagSoak {
		opts.SampleEvery = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), *flagDuration+25*time.Minute)
	defer cancel()
	rep, err := Run(ctx, opts)
	if err != nil {
		t.Fatalf("chaos harness could not run (seed %d, logs in %s): %v", seed, dir, err)
	}
	rep.WriteText(os.Stdout)
	if werr := rep.WriteFiles(filepath.Join(dir, "report.json"), filepath.Join(dir, "samples.jsonl")); werr != nil {
		t.Errorf("writing the report: %v", werr)
	}
	if !rep.OK() {
		keep = true
		t.Fatalf("chaos run with seed %d found %d violations (first: %s); logs in %s; reproduce: make chaos DURATION=%v SEED=%d",
			seed, len(rep.Violations), rep.Violations[0], dir, *flagDuration, seed)
	}
	if !keep {
		if err := os.RemoveAll(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Logf("removing %s: %v", dir, err)
		}
	}
}
