#!/usr/bin/env bash
# bench/scale/run.sh — the scale benchmark (make bench-scale).
#
# N idle source connectors (tasks.max=1) on one worker: connectd with
# examples/linesource (LinesSource) on an empty file, then Kafka Connect
# 4.1.1 (connect-distributed, resolved from Maven Central by
# bench/kafkaconnect/pom.xml) with FileStreamSourceConnector on an empty
# file, on the same local broker (make kafka-up), each with internal topics
# of its own. See bench/scale/cmd/scalebench for what is measured.
#
#   bench/scale/run.sh [scalebench flags] [-baseline COMMIT]     e.g. -n 0,10,25 -systems connectd
#
# -baseline COMMIT builds connectd at COMMIT too (from `git archive`) and
# runs it as the system "baseline" right after connectd in every
# repetition (add it to -systems, e.g. -systems connectd,baseline): a
# side-by-side measurement of a change, with a connectd / baseline table.
#
# Defaults: -n 0,100,250,500,1000 -systems connectd,kc -reps 1 -window 30s.
# Environment: BENCH_ARGS (extra flags). Results: bench/out/scale/<time>/
# (results.json, summary.md, per-pass logs).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
out=bench/out/scale
bin=$out/bin
mkdir -p "$bin"

# shellcheck source=bench/lib.sh
. bench/lib.sh
bootstrap=$(bench_bootstrap)
cp_file=$(kc_classpath "$out")

go build -o "$bin/scalebench" ./bench/scale/cmd/scalebench
go build -o "$bin/connectd" ./cmd/connectd
CGO_ENABLED=0 go build -o "$bin/connectd-lines" ./examples/linesource/cmd/connectd-lines

# BENCH_ARGS joins the arguments (make passes its BENCH_ARGS as arguments
# and clears the variable); -baseline COMMIT may come anywhere among them.
# shellcheck disable=SC2086
set -- "$@" ${BENCH_ARGS:-}
baseline=() args=()
while [[ $# -gt 0 ]]; do
  if [[ $1 == -baseline ]]; then
    sha=$(git rev-parse --verify "${2:?-baseline needs a commit}^{commit}")
    src=$out/baseline-src
    rm -rf "$src" && mkdir -p "$src"
    git archive "$sha" | tar -x -C "$src"
    go build -C "$src" -o "$repo/$bin/connectd-baseline" ./cmd/connectd
    # The plugin of the same commit: the two speak the same plugin protocol.
    CGO_ENABLED=0 go build -C "$src" -o "$repo/$bin/connectd-lines-baseline" ./examples/linesource/cmd/connectd-lines
    rm -rf "$src" # a second module in the tree otherwise
    echo "baseline: connectd and connectd-lines at $sha"
    baseline=(-baseline "$bin/connectd-baseline" -baseline-plugin "$bin/connectd-lines-baseline")
    shift 2
  else
    args+=("$1")
    shift
  fi
done

exec "$bin/scalebench" -bootstrap "$bootstrap" -connectd "$bin/connectd" -plugin "$bin/connectd-lines" \
  -kc-classpath "$cp_file" -out "$out" "${baseline[@]}" "${args[@]}"
