#!/usr/bin/env bash
# scripts/kafka.sh — a real, single-node Apache Kafka broker for tests, benchmarks
# and the quickstart.
#
#   scripts/kafka.sh up [a|b|all]     start (or reuse) a cluster; prints KAFKA_BOOTSTRAP=127.0.0.1:<port>
#                                     (cluster b: KAFKA_BOOTSTRAP_B=...); default a
#   scripts/kafka.sh down [a|b|all]   stop what this script started and delete its data; default all
#   scripts/kafka.sh status [a|b]     print the bootstrap address if the cluster is up (exit 1 if not)
#   scripts/kafka.sh restart [a|b]    stop and start again with the same data and port (fault tests)
#   scripts/kafka.sh classpath        print the broker classpath (for the benchmark tools)
#
# Cluster a is the one every test uses. Cluster b is a second, independent
# single-node KRaft cluster (own ports, data dir and cluster id) for the
# cross-cluster replication tests and benchmarks.
#
# The broker jars come from Maven Central through scripts/kafka/pom.xml; the local
# Maven cache (~/.m2) makes every run after the first one fast. The broker runs
# KRaft mode (combined broker+controller) on 127.0.0.1, with one-node settings for
# transactions and compacted topics, its data in a fresh temp dir.
#
# State lives in $CONNECTD_RUN_DIR (default: .run/ at the repo root):
#   kafka.env            KAFKA_BOOTSTRAP=... (what tests read)
#   kafka-b.env          KAFKA_BOOTSTRAP_B=... (cluster b)
#   kafka/pid, kafka/port, kafka/controller.port, kafka/datadir, kafka/server.properties
#   kafka/logs/          broker log, Maven log (cluster b: the same under kafka-b/)
#
# Environment knobs: KAFKA_HEAP_OPTS (default -Xms256m -Xmx768m), KAFKA_PORT (fixed
# port instead of a free one), KAFKA_START_TIMEOUT (s, default 120), MAVEN_TIMEOUT
# (s, default 600).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib.sh
. "$repo/scripts/lib.sh"
run_dir=${CONNECTD_RUN_DIR:-$repo/.run}
cache=$run_dir/kafka
pom=$repo/scripts/kafka/pom.xml
heap=${KAFKA_HEAP_OPTS:--Xms256m -Xmx768m}
start_timeout=${KAFKA_START_TIMEOUT:-120}
maven_timeout=${MAVEN_TIMEOUT:-600}

cluster=a
die() { echo "kafka($cluster): $*" >&2; exit 1; }
note() { echo "kafka($cluster): $*" >&2; }

# use_cluster points state, env_file and env_var at cluster a or b.
use_cluster() {
  cluster=$1
  case "$cluster" in
    a) state=$run_dir/kafka env_file=$run_dir/kafka.env env_var=KAFKA_BOOTSTRAP ;;
    b) state=$run_dir/kafka-b env_file=$run_dir/kafka-b.env env_var=KAFKA_BOOTSTRAP_B ;;
    *) echo "kafka: unknown cluster '$cluster': use a or b" >&2; exit 2 ;;
  esac
}
use_cluster a

need_tools() {
  need_java 17 "Kafka 4"
  need_maven "it resolves the Kafka jars from Maven Central"
}

# classpath resolves the broker jars, reusing the cached classpath while the pom is unchanged.
classpath() {
  mkdir -p "$cache/logs"
  local cp_file=$cache/classpath.txt sum_file=$cache/classpath.sum sum
  sum=$(sha256sum "$pom" | cut -d' ' -f1)
  if [[ -f $cp_file && -f $sum_file && $(cat "$sum_file") == "$sum" ]] && all_jars_exist "$cp_file"; then
    cat "$cp_file"; return
  fi
  local log=$cache/logs/maven.log
  # Offline first: fast and works without network once ~/.m2 has the jars.
  if ! timeout 120 mvn -o -q -B -f "$pom" org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath -Dmdep.outputFile="$cp_file" >"$log" 2>&1; then
    note "resolving Apache Kafka jars from Maven Central (first run only; log: ${log#"$repo"/})"
    local rc=0
    timeout "$maven_timeout" mvn -q -B -f "$pom" \
      -Dmaven.wagon.http.retryHandler.count=3 -Dmaven.wagon.rto=60000 \
      org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath -Dmdep.outputFile="$cp_file" >"$log" 2>&1 || rc=$?
    if [[ $rc != 0 ]]; then
      if [[ $rc == 124 ]]; then
        die "Maven did not finish resolving the Kafka jars within ${maven_timeout}s: is Maven Central (repo.maven.apache.org) reachable? log: ${log#"$repo"/}"
      fi
      if grep -qiE 'unknown host|could not transfer|connect timed out|connection refused|network is unreachable|resolve dependencies|No plugin found|Could not resolve|Connection refused|Failed to read artifact descriptor' "$log"; then
        die "cannot download the Kafka jars: Maven Central (repo.maven.apache.org) is unreachable; log: ${log#"$repo"/}"
      fi
      die "Maven failed to resolve the Kafka jars; log: ${log#"$repo"/}"
    fi
  fi
  echo "$sum" >"$sum_file"
  cat "$cp_file"
}

all_jars_exist() {
  local jar
  while IFS= read -r jar; do
    [[ -z $jar || -f $jar ]] || return 1
  done < <(tr ':' '\n' <"$1")
}


# is_ours reports whether the recorded pid is alive and is the broker on our data dir,
# so that a recycled pid never gets signalled.
is_ours() {
  [[ -f $state/pid && -f $state/datadir ]] || return 1
  local pid datadir
  pid=$(cat "$state/pid"); datadir=$(cat "$state/datadir")
  [[ -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$datadir/server.properties"
}

write_env() {
  local port
  port=$(cat "$state/port")
  echo "$env_var=127.0.0.1:$port" >"$env_file"
  echo "$env_var=127.0.0.1:$port"
}

probe() {
  local cp=$1 port=$2
  timeout 20 java -Xmx128m -cp "$cp" -Dlog4j2.level=OFF -Dlog4j2.configurationFile=/dev/null \
    org.apache.kafka.tools.ClusterTool cluster-id --bootstrap-server "127.0.0.1:$port" >/dev/null 2>&1
}

write_config() {
  local datadir=$1 port=$2 cport=$3
  cat >"$datadir/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$datadir/data
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=10
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
delete.topic.enable=true
# Let tests observe compaction within seconds.
log.cleaner.backoff.ms=500
log.retention.check.interval.ms=5000
EOF
}

start_broker() {
  local cp=$1 datadir=$2 format=$3
  local port cport
  port=$(cat "$state/port"); cport=$(cat "$state/controller.port")
  if port_open "$port" || port_open "$cport"; then
    die "port $port or $cport on 127.0.0.1 is already in use by another process; set KAFKA_PORT to a free port or stop that process"
  fi
  if [[ $format == yes ]]; then
    local cluster_id
    cluster_id=$(java -cp "$cp" -Dlog4j2.configurationFile=/dev/null kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n1)
    java -cp "$cp" -Dlog4j2.configurationFile=/dev/null kafka.tools.StorageTool format \
      -t "$cluster_id" -c "$datadir/server.properties" >"$state/logs/format.log" 2>&1 \
      || die "formatting KRaft storage failed; log: ${state#"$repo"/}/logs/format.log"
  fi
  # setsid: the broker outlives this script and ignores the caller's Ctrl-C;
  # `down` stops it by pid.
  # shellcheck disable=SC2086
  setsid java $heap -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError \
    -Djava.awt.headless=true -Dkafka.logs.dir="$state/logs" \
    -Dlog4j2.configurationFile="$repo/scripts/kafka/log4j2.properties" \
    -cp "$cp" kafka.Kafka "$datadir/server.properties" \
    >"$state/logs/stdout.log" 2>&1 </dev/null &
  echo $! >"$state/pid"
  local deadline=$((SECONDS + start_timeout))
  until port_open "$port"; do
    if ! kill -0 "$(cat "$state/pid")" 2>/dev/null; then
      die "the broker exited during start-up: $(tail -n 3 "$state/logs/stdout.log" "$state/logs/server.log" 2>/dev/null | grep -v '^==' | tail -n 1)"
    fi
    (( SECONDS < deadline )) || { stop_broker; die "the broker did not open port $port within ${start_timeout}s; see ${state#"$repo"/}/logs/server.log"; }
    sleep 0.2
  done
  until probe "$cp" "$port"; do
    kill -0 "$(cat "$state/pid")" 2>/dev/null || die "the broker exited during start-up; see ${state#"$repo"/}/logs/server.log"
    (( SECONDS < deadline )) || { stop_broker; die "the broker did not answer metadata requests within ${start_timeout}s; see ${state#"$repo"/}/logs/server.log"; }
    sleep 0.5
  done
}

stop_broker() {
  is_ours || return 0
  local pid
  pid=$(cat "$state/pid")
  terminate "$pid" 30 "the broker"
  rm -f "$state/pid"
}

cmd_up() {
  need_tools
  mkdir -p "$state/logs"
  if is_ours; then
    local cp
    cp=$(classpath)
    if probe "$cp" "$(cat "$state/port")"; then
      note "reusing the running broker (pid $(cat "$state/pid"))"
      write_env
      return
    fi
    note "the recorded broker does not answer; restarting it"
    stop_broker
  fi
  clean_stale
  local cp datadir port cport
  cp=$(classpath)
  datadir=$(mktemp -d "${TMPDIR:-/tmp}/connectd-kafka.XXXXXX")
  port=${KAFKA_PORT:-$(free_port)}
  cport=$(free_port)
  while [[ $cport == "$port" ]]; do cport=$(free_port); done
  echo "$datadir" >"$state/datadir"
  echo "$port" >"$state/port"
  echo "$cport" >"$state/controller.port"
  write_config "$datadir" "$port" "$cport"
  note "starting Apache Kafka $(kafka_version) on 127.0.0.1:$port (data: $datadir)"
  start_broker "$cp" "$datadir" yes
  write_env
}

# clean_stale removes state left by a broker that is no longer running (killed run, reboot).
clean_stale() {
  if [[ -f $state/datadir ]]; then
    local old
    old=$(cat "$state/datadir")
    case "$old" in
      */connectd-kafka.*) rm -rf -- "$old" ;;
    esac
  fi
  rm -f "$state/pid" "$state/datadir" "$state/port" "$state/controller.port" "$env_file"
}

cmd_down() {
  if ! is_ours; then
    note "no broker started by this script is running"
    clean_stale
    return
  fi
  stop_broker
  clean_stale
  note "stopped"
}

cmd_restart() {
  is_ours || die "no broker started by this script is running; use: scripts/kafka.sh up"
  need_tools
  local cp
  cp=$(classpath)
  stop_broker
  note "starting the broker again with the same data"
  # A broker killed after a shutdown that hung can fail its first start
  # (Kafka 4.1 then dies in ControllerServer.startup while the old sockets and
  # the data dir lock are released); fault tests must not be left without a
  # broker by that, so a failed start is retried from a clean process state.
  local attempt
  for attempt in 1 2 3; do
    if (start_broker "$cp" "$(cat "$state/datadir")" no); then
      write_env
      return
    fi
    [[ -f $state/pid ]] && stop_pid "$(cat "$state/pid")"
    note "start attempt $attempt failed; see ${state#"$repo"/}/logs/server.log"
    wait_ports_free 30
  done
  die "the broker did not start again after 3 attempts; see ${state#"$repo"/}/logs/server.log"
}

# stop_pid kills a broker process that failed its start and waits until it is gone.
stop_pid() {
  kill -KILL "$1" 2>/dev/null || true
  while kill -0 "$1" 2>/dev/null; do sleep 0.1; done
  rm -f "$state/pid"
}

# wait_ports_free waits up to $1 seconds until nothing listens on the broker's ports.
wait_ports_free() {
  local deadline=$((SECONDS + $1))
  while port_open "$(cat "$state/port")" || port_open "$(cat "$state/controller.port")"; do
    (( SECONDS < deadline )) || return 0
    sleep 0.5
  done
  sleep 1
}

cmd_status() {
  if is_ours && port_open "$(cat "$state/port")"; then
    write_env
  else
    echo "kafka: not running" >&2
    return 1
  fi
}

kafka_version() { sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom"; }

# clusters expands a cluster argument (a, b or all) for up and down.
clusters() {
  case "${1:-}" in
    all) echo a b ;;
    a|b) echo "$1" ;;
    *) echo "kafka: unknown cluster '${1:-}': use a, b or all" >&2; exit 2 ;;
  esac
}

cmd=${1:-}
arg=${2:-}
case "$cmd" in
  up) for c in $(clusters "${arg:-a}"); do use_cluster "$c"; cmd_up; done ;;
  down) for c in $(clusters "${arg:-all}"); do use_cluster "$c"; cmd_down; done ;;
  restart) use_cluster "${arg:-a}"; cmd_restart ;;
  status) use_cluster "${arg:-a}"; cmd_status ;;
  classpath) need_tools; classpath ;;
  *) echo "usage: $0 up [a|b|all] | down [a|b|all] | status [a|b] | restart [a|b] | classpath" >&2; exit 2 ;;
esac
