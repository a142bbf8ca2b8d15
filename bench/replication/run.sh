#!/usr/bin/env bash
# bench/replication/run.sh — the Kafka replication benchmark (make bench-replication).
#
# KafkaReplicationSource (connectd worker, exactly-once) vs MirrorMaker 2's
# MirrorSourceConnector (one connect-distributed worker of Kafka Connect 4.1.1,
# exactly.once.source.support=enabled) vs a raw Go transactional
# consume→produce loop, side by side on the local broker (make kafka-up).
#
#   bench/replication/run.sh [-cross-cluster] [-baseline COMMIT] [replbench run flags]
#
# -cross-cluster (make bench-replication-cross) copies from cluster A
# ($CONNECTD_RUN_DIR/kafka.env) to cluster B (kafka-b.env; started with
# `scripts/kafka.sh up b` when absent), with each system's worker on B:
# connectd vs MirrorMaker 2 (MirrorSourceConnector + MirrorCheckpointConnector),
# replicas named a.<topic>, and the checkpoint lag of a consumer group. The
# checkpoint plugin (connectd-kafka-checkpoint) runs when the tree has it.
# Defaults there: -sizes 1024:1000000 -systems connectd,mm2.
#
# -baseline COMMIT also builds connectd and the plugin at COMMIT (from
# `git archive` into bench/out/baseline/) and runs them beside the working
# tree's build as the variant "baseline", interleaved in the same
# repetitions: the summary gives baseline/default ratios. For a before/after
# comparison of connectd alone: -baseline main -systems connectd.
#
# Defaults: -sizes 1024:1000000,100:5000000 -reps 3 -systems connectd,mm2,mm2-interval,raw.
# Environment: BENCH_ARGS (extra flags). Results: bench/out/replication/<time>/
# (runs.csv, summary.md, per-run logs).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
out=bench/out/replication
bin=$out/bin
mkdir -p "$bin"

# shellcheck source=bench/lib.sh
. bench/lib.sh
run_dir=${CONNECTD_RUN_DIR:-$repo/.run}
bootstrap=$(bench_bootstrap)
broker_pid=$(cat "$run_dir/kafka/pid")

cross=()
if [[ ${1:-} == -cross-cluster ]]; then
  shift
  bootstrap_b=$(bench_bootstrap b)
  cross=(-cross-cluster -bootstrap-b "$bootstrap_b" -broker-b-pid "$(cat "$run_dir/kafka-b/pid")"
    -sizes 1024:1000000 -systems connectd,mm2)
  if [[ -d connectors/kafka/cmd/connectd-kafka-checkpoint ]]; then
    go build -o "$bin/connectd-kafka-checkpoint" ./connectors/kafka/cmd/connectd-kafka-checkpoint
    cross+=(-checkpoint-plugin "$bin/connectd-kafka-checkpoint")
  else
    rm -f "$bin/connectd-kafka-checkpoint"
  fi
fi

# MirrorMaker 2: Kafka Connect 4.1.1 + connect-mirror from Maven Central.
cp_file=$(kc_classpath "$out")

variant=()
if [[ ${1:-} == -baseline ]]; then
  [[ -n ${2:-} ]] || { echo "bench: -baseline needs a commit" >&2; exit 2; }
  sha=$(git rev-parse --verify "$2^{commit}")
  src=bench/out/baseline/$sha
  if [[ ! -x $src/bin/connectd || ! -x $src/bin/connectd-kafka-replication ]]; then
    echo "bench: building the baseline ${sha:0:12} in $src" >&2
    rm -rf "$src" && mkdir -p "$src/tree" "$src/bin"
    git archive "$sha" | tar -x -C "$src/tree"
    (cd "$src/tree" && go build -o ../bin/connectd ./cmd/connectd &&
      go build -o ../bin/connectd-kafka-replication ./connectors/kafka/cmd/connectd-kafka-replication)
    rm -rf "$src/tree"
  fi
  variant=(-connectd-variant "baseline=$repo/$src/bin/connectd,plugin=$repo/$src/bin/connectd-kafka-replication")
  shift 2
fi

go build -o "$bin/replbench" ./bench/replication/cmd/replbench
go build -o "$bin/rawcopy" ./bench/replication/cmd/rawcopy
go build -o "$bin/connectd" ./cmd/connectd
go build -o "$bin/connectd-kafka-replication" ./connectors/kafka/cmd/connectd-kafka-replication

# shellcheck disable=SC2086
exec "$bin/replbench" run -bootstrap "$bootstrap" -broker-pid "$broker_pid" \
  -mm2-classpath "$cp_file" -rawcopy "$bin/rawcopy" -connectd "$bin/connectd" \
  -plugin "$bin/connectd-kafka-replication" "${variant[@]}" "${cross[@]}" \
  -out "$out" "$@" ${BENCH_ARGS:-}
