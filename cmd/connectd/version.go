package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/plugins/host"
)

// Set by the release build with -ldflags "-X main.version=... -X main.commit=...".
var (
	version = "dev"
	commit  = ""
)

// versionInfo is what `connectd version` reports; the JSON form is for
// scripts and support tickets.
type versionInfo struct {
	Version         string `json:"version"`
	Commit          string `json:"commit"`
	Go              string `json:"go"`
	Platform        string `json:"platform"`
	Librdkafka      string `json:"librdkafka"`
	LibrdkafkaLink  string `json:"librdkafka_link"`
	PluginProtocols []int  `json:"plugin_protocol_versions"`
}

func currentVersion() versionInfo {
	rev := commit
	if rev == "" {
		rev = vcsRevision()
	}
	_, rdkafka := kafka.LibraryVersion()
	return versionInfo{
		Version:         version,
		Commit:          rev,
		Go:              runtime.Version(),
		Platform:        runtime.GOOS + "/" + runtime.GOARCH,
		Librdkafka:      rdkafka,
		LibrdkafkaLink:  kafka.LibrdkafkaLinkInfo,
		PluginProtocols: host.ProtocolVersions(),
	}
}

func versionCommand() *command {
	var output string
	return &command{
		name:    "version",
		usage:   "[--output text|json]",
		summary: "print connectd's version, commit, Go, librdkafka and plugin protocol versions",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&output, "output", "text", "output format: text or json")
		},
		run: func(_ context.Context, env *cliEnv, _ *flag.FlagSet, args []string) error {
			if len(args) > 0 {
				return usageError("version takes no arguments")
			}
			v := currentVersion()
			switch output {
			case "json":
				return printJSON(env.stdout, v)
			case "text":
			default:
				return usageError("--output must be text or json, not %q", output)
			}
			protos := make([]string, len(v.PluginProtocols))
			for i, p := range v.PluginProtocols {
				protos[i] = strconv.Itoa(p)
			}
			fmt.Fprintf(env.stdout, "connectd %s\n", v.Version)
			fmt.Fprintf(env.stdout, "commit            %s\n", v.Commit)
			fmt.Fprintf(env.stdout, "go                %s %s\n", v.Go, v.Platform)
			fmt.Fprintf(env.stdout, "librdkafka        %s (%s)\n", v.Librdkafka, v.LibrdkafkaLink)
			fmt.Fprintf(env.stdout, "plugin protocol   %s\n", strings.Join(protos, ", "))
			return nil
		},
	}
}

func vcsRevision() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			if dirty {
				rev += "-dirty"
			}
			return rev
		}
	}
	return "unknown"
}
