package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// Set by the release build with -ldflags "-X main.version=... -X main.commit=...".
var (
	version = "dev"
	commit  = ""
)

func versionCommand() *command {
	return &command{
		name:    "version",
		summary: "print connectd's version, commit, Go and librdkafka versions",
		run: func(_ context.Context, env *cliEnv, _ *flag.FlagSet, _ []string) error {
			rev := commit
			if rev == "" {
				rev = vcsRevision()
			}
			_, rdkafka := kafka.LibraryVersion()
			fmt.Fprintf(env.stdout, "connectd %s\ncommit     %s\ngo         %s\nlibrdkafka %s\n",
				version, rev, runtime.Version(), rdkafka)
			return nil
		},
	}
}

func vcsRevision() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}
