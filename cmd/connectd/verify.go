package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/connectd/connectd/connectors/datagen/datagencheck"
	"github.com/connectd/connectd/framework/properties"
	"github.com/connectd/connectd/framework/verify"
)

// Exit codes of `connectd verify` beyond the common ones: 1 means the check
// ran and found violations.
const exitUnverified = 5 // the topics could not be read to their end

// verifyCommand audits topics a pipeline wrote.
func verifyCommand() *command {
	return &command{
		name:    "verify",
		summary: "audit a pipeline's output: exactly-once copies, datagen sequences (read_committed)",
		children: []*command{
			verifyTopicsCommand(),
			verifyDatagenCommand(),
		},
	}
}

// verifyFlags are the flags both verify commands share.
type verifyFlags struct {
	bootstrap       string
	commandConfig   string
	readUncommitted bool
	timeout         time.Duration
	output          string
	examples        int
}

func (f *verifyFlags) declare(fs *flag.FlagSet) {
	fs.StringVar(&f.bootstrap, "bootstrap-server", os.Getenv("KAFKA_BOOTSTRAP"), "Kafka bootstrap servers (env KAFKA_BOOTSTRAP)")
	fs.StringVar(&f.commandConfig, "command-config", "", "properties file of extra librdkafka client settings (security.protocol, sasl.*, ssl.*)")
	fs.BoolVar(&f.readUncommitted, "read-uncommitted", false, "also read aborted and open transactions (default: read_committed, as exactly-once consumers do)")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Minute, "bound for reading each topic to its end")
	fs.StringVar(&f.output, "output", "text", "text or json")
	fs.IntVar(&f.examples, "examples", 10, "examples listed per kind of violation")
}

func (f *verifyFlags) readOptions() (verify.ReadOptions, error) {
	if f.bootstrap == "" {
		return verify.ReadOptions{}, usageError("--bootstrap-server (or env KAFKA_BOOTSTRAP) is required")
	}
	if f.output != "text" && f.output != "json" {
		return verify.ReadOptions{}, usageError("--output must be text or json, got %q", f.output)
	}
	if f.timeout <= 0 {
		return verify.ReadOptions{}, usageError("--timeout must be positive")
	}
	o := verify.ReadOptions{Bootstrap: f.bootstrap, ReadUncommitted: f.readUncommitted, Timeout: f.timeout}
	if f.commandConfig != "" {
		file, err := os.Open(f.commandConfig)
		if err != nil {
			return o, usageError("--command-config: %v", err)
		}
		defer file.Close()
		props, err := properties.Parse(file)
		if err != nil {
			return o, usageError("--command-config %s: %v", f.commandConfig, err)
		}
		o.ClientProps = props
	}
	return o, nil
}

// readError maps a failure to read the topics to its exit code.
func readError(err error) error {
	code := exitUnverified
	if errors.Is(err, verify.ErrTopicNotFound) {
		code = exitNotFound
	}
	return &exitError{code: code, msg: err.Error()}
}

func writeJSON(env *cliEnv, v any) error {
	enc := json.NewEncoder(env.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func verifyTopicsCommand() *command {
	var (
		f               verifyFlags
		source, target  string
		targetBootstrap string
		mapping         string
		allowPending    bool
	)
	return &command{
		name:  "topics",
		usage: "--source TOPIC --target TOPIC [--bootstrap-server HOST:PORT] [--target-bootstrap-server HOST:PORT] [--mapping preserve|any] [--allow-pending] [--output text|json]",
		summary: "check that a target topic holds every record of a source topic exactly once, in order " +
			"(exit 0 ok, 1 violations, 2 usage, 3 topic not found, 5 could not read)",
		flags: func(fs *flag.FlagSet) {
			f.declare(fs)
			fs.StringVar(&source, "source", "", "source topic")
			fs.StringVar(&target, "target", "", "target topic")
			fs.StringVar(&targetBootstrap, "target-bootstrap-server", "", "bootstrap servers of the target cluster (default: --bootstrap-server)")
			fs.StringVar(&mapping, "mapping", string(verify.MappingPreserve), "partition mapping: preserve (record stays in its partition number) or any")
			fs.BoolVar(&allowPending, "allow-pending", false, "do not fail on source records missing only at the tail of a partition (a pipeline still catching up)")
		},
		run: func(ctx context.Context, env *cliEnv, _ *flag.FlagSet, args []string) error {
			if len(args) > 0 {
				return usageError("verify topics takes no arguments, got %q", args)
			}
			if source == "" || target == "" {
				return usageError("--source and --target are required")
			}
			if mapping != string(verify.MappingPreserve) && mapping != string(verify.MappingAny) {
				return usageError("--mapping must be preserve or any, got %q", mapping)
			}
			o, err := f.readOptions()
			if err != nil {
				return err
			}
			to := o
			if targetBootstrap != "" {
				to.Bootstrap = targetBootstrap
			}
			rep, err := verify.CompareTopics(ctx, source, target, verify.CompareOptions{
				Source: o, Target: to, Mapping: verify.Mapping(mapping), MaxExamples: f.examples,
			})
			if err != nil {
				return readError(err)
			}
			if f.output == "json" {
				out := struct {
					OK bool `json:"ok"`
					*verify.CompareReport
				}{rep.OK(allowPending), rep}
				if err := writeJSON(env, out); err != nil {
					return err
				}
			} else if err := rep.WriteText(env.stdout, allowPending); err != nil {
				return err
			}
			if !rep.OK(allowPending) {
				return &exitError{code: exitFailure}
			}
			return nil
		},
	}
}

func verifyDatagenCommand() *command {
	var (
		f            verifyFlags
		topic        string
		tasks        int
		seed         int64
		cardinality  int
		iterations   int64
		ignoreHeader string
		sums         bool
	)
	return &command{
		name:  "datagen",
		usage: "--topic TOPIC --tasks N [--seed S] [--cardinality C] [--iterations I] [--ignore-header NAME] [--sums] [--bootstrap-server HOST:PORT] [--output text|json]",
		summary: "check that a topic holds a DatagenSource counter sequence exactly once, in order " +
			"(exit 0 ok, 1 violations, 2 usage, 3 topic not found, 5 could not read)",
		flags: func(fs *flag.FlagSet) {
			f.declare(fs)
			fs.StringVar(&topic, "topic", "", "topic the DatagenSource counter connector wrote")
			fs.IntVar(&tasks, "tasks", 0, "the connector's task count (tasks.max)")
			fs.Int64Var(&seed, "seed", 0, "the connector's random.seed")
			fs.IntVar(&cardinality, "cardinality", 10, "the connector's key.cardinality")
			fs.Int64Var(&iterations, "iterations", 0, "records each task must have written (the connector's iterations); 0 checks what is there")
			fs.StringVar(&ignoreHeader, "ignore-header", "", "skip records carrying this header (records written on purpose by tests)")
			fs.BoolVar(&sums, "sums", false, "also print the sum of amounts per key (what a counting sink must hold)")
		},
		run: func(ctx context.Context, env *cliEnv, _ *flag.FlagSet, args []string) error {
			if len(args) > 0 {
				return usageError("verify datagen takes no arguments, got %q", args)
			}
			switch {
			case topic == "":
				return usageError("--topic is required")
			case tasks < 1:
				return usageError("--tasks must be at least 1 (the connector's tasks.max)")
			case cardinality < 1:
				return usageError("--cardinality must be at least 1")
			case iterations < 0:
				return usageError("--iterations must not be negative")
			}
			o, err := f.readOptions()
			if err != nil {
				return err
			}
			rep, err := datagencheck.Check(ctx, o, topic, datagencheck.Spec{
				Tasks: tasks, Seed: seed, Cardinality: cardinality, Iterations: iterations,
				IgnoreHeader: ignoreHeader, MaxExamples: f.examples,
			})
			if err != nil {
				return readError(err)
			}
			if f.output == "json" {
				if !sums {
					rep.Sums = nil
				}
				out := struct {
					OK bool `json:"ok"`
					*datagencheck.Report
				}{rep.OK(), rep}
				if err := writeJSON(env, out); err != nil {
					return err
				}
			} else {
				if err := rep.WriteText(env.stdout); err != nil {
					return err
				}
				if sums {
					fmt.Fprintln(env.stdout, "\nsums:")
					if err := rep.WriteSums(env.stdout); err != nil {
						return err
					}
				}
			}
			if !rep.OK() {
				return &exitError{code: exitFailure}
			}
			return nil
		},
	}
}
