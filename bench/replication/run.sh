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

# Reuse a running broker as it is: `kafka.sh up` restarts a broker that is
# slow to answer its probe, which on a loaded machine would kill a broker
# other runs are using.
run_dir=${CONNECTD_RUN_DIR:-$repo/.run}
bootstrap=$(sed -n 's/^KAFKA_BOOTSTRAP=//p' "$run_dir/kafka.env" 2>/dev/null || true)
if [[ -z $bootstrap ]] || ! (exec 3<>"/dev/tcp/${bootstrap%:*}/${bootstrap##*:}") 2>/dev/null; then
  bootstrap=$(scripts/kafka.sh up | sed -n 's/^KAFKA_BOOTSTRAP=//p')
fi
[[ -n $bootstrap ]] || { echo "bench: the Kafka broker did not start (make kafka-up)" >&2; exit 1; }
broker_pid=$(cat "$run_dir/kafka/pid")

cross=()
if [[ ${1:-} == -cross-cluster ]]; then
  shift
  bootstrap_b=$(sed -n 's/^KAFKA_BOOTSTRAP_B=//p' "$run_dir/kafka-b.env" 2>/dev/null || true)
  if [[ -z $bootstrap_b ]] || ! (exec 3<>"/dev/tcp/${bootstrap_b%:*}/${bootstrap_b##*:}") 2>/dev/null; then
    bootstrap_b=$(scripts/kafka.sh up b | sed -n 's/^KAFKA_BOOTSTRAP_B=//p')
  fi
  [[ -n $bootstrap_b ]] || { echo "bench: Kafka cluster b did not start (scripts/kafka.sh up b)" >&2; exit 1; }
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
pom=bench/replication/mm2/pom.xml
cp_file=$out/mm2.classpath
sum=$(sha256sum "$pom" | cut -d' ' -f1)
if [[ ! -s $cp_file || ! -f $cp_file.sum || $(cat "$cp_file.sum") != "$sum" ]]; then
  echo "bench: resolving Kafka Connect + MirrorMaker 2 from Maven Central (log: $out/mm2-maven.log)" >&2
  mvn -q -B -f "$pom" org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath \
    -Dmdep.outputFile="$repo/$cp_file" >"$out/mm2-maven.log" 2>&1 ||
    { echo "bench: Maven could not resolve MirrorMaker 2; see $out/mm2-maven.log" >&2; exit 1; }
  echo "$sum" >"$cp_file.sum"
fi

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
