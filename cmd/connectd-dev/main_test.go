package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestDispatch(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		code       int
		stdout     string // a substring of stdout
		stderrText string // a substring of stderr
	}{
		{args: nil, code: exitUsage, stdout: "quickstart watch"},
		{args: []string{"--help"}, code: exitOK, stdout: "aerospike"},
		{args: []string{"kafka"}, code: exitUsage, stderrText: `unknown command "kafka"`},
		{args: []string{"quickstart"}, code: exitUsage, stdout: "\n  cleanup "},
		{args: []string{"quickstart", "--help"}, code: exitOK, stdout: "usage: connectd-dev quickstart <command>"},
		{args: []string{"quickstart", "kafka"}, code: exitUsage, stderrText: `unknown command "quickstart kafka"`},
		{args: []string{"quickstart", "prepare", "extra"}, code: exitUsage, stderrText: "quickstart prepare takes no arguments"},
		{args: []string{"quickstart", "watch", "--help"}, code: exitOK, stderrText: "usage: connectd-dev quickstart watch"},
		{args: []string{"quickstart", "prepare", "--bootstrap", ""}, code: exitUsage, stderrText: "no Kafka broker"},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), tc.args, &out, &errOut)
		if code != tc.code || !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errOut.String(), tc.stderrText) {
			t.Errorf("%q: exit %d, want %d\nstdout %q\nstderr %q", tc.args, code, tc.code, out.String(), errOut.String())
		}
	}
}
