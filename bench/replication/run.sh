#!/usr/bin/env bash
# bench/replication/run.sh — the Kafka replication benchmark (make bench-replication).
#
# KafkaReplicationSource (connectd worker, exactly-once) vs MirrorMaker 2's
# MirrorSourceConnector (one connect-distributed worker of Kafka Connect 4.1.1,
# exactly.once.source.support=enabled) vs a raw Go transactional
# consume→produce loop, side by side on the local broker (make kafka-up).
#
#   bench/replication/run.sh [-baseline COMMIT] [replbench run flags]
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
  -plugin "$bin/connectd-kafka-replication" "${variant[@]}" \
  -out "$out" "$@" ${BENCH_ARGS:-}
