#!/usr/bin/env bash
# scripts/quickstart.sh — what `make quickstart` runs.
#
# Builds connectd, connectd-dev and the plugins, starts the local Kafka broker
# (scripts/kafka.sh), the Aerospike test server (`connectd-dev aerospike`),
# Prometheus when it is installed, and one connectd worker
# (quickstart/worker.properties); installs the plugins with
# `connectd plugin install`; deploys the demo pipeline from
# quickstart/connectors/*.json through the REST API
#
#   DatagenSource (counter, exactly-once) → KafkaReplicationSource (exactly-once)
#     → AerospikeSink (increment, effectively-once)
#
# and shows its progress until the Aerospike counters equal the totals the
# generator's seed predicts. Ctrl-C stops everything this script started,
# and nothing else.
#
#   scripts/quickstart.sh [--once] [--format json|avro] [--rest-port N] [--prometheus-port N]
#                         [--no-prometheus] [--records N] [--timeout SECONDS] [--keep-topics]
#
#   --once             run a short pipeline to completion, verify the totals, stop, exit 0
#                      (exit 1 if a total is wrong or it does not complete in time)
#   --format F         json (default): JSON values without schemas;
#                      avro: Avro values in the Confluent wire format through a Schema
#                      Registry (quickstart/connectors/avro/: DatagenSource and
#                      AerospikeSink with io.confluent.connect.avro.AvroConverter; the
#                      replication copies the bytes, schema id and all)
#   --rest-port N      REST port of the worker (default 8083; 0 picks a free port)
#   --prometheus-port N  (default 9090; 0 picks a free port)
#   --no-prometheus    do not start Prometheus even if it is installed
#   --records N        records per generator task (default 20000, with --once 1500)
#   --timeout SECONDS  with --once: how long the pipeline may take (default 300)
#   --keep-topics      leave this run's topics and groups (and its Avro subject) on a
#                      broker (registry) the quickstart did not start
#
# With KAFKA_BOOTSTRAP set, that broker is used (and left running) instead
# of starting one. With --format avro and SCHEMA_REGISTRY_URL set, that
# registry is used (and left running); otherwise a registry that
# scripts/registry.sh runs is reused, or one is started and stopped again.
# State and logs live in .run/quickstart/.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib.sh
. "$repo/scripts/lib.sh"
cd "$repo"
run_dir=${CONNECTD_RUN_DIR:-$repo/.run}
# Fixed under the repository: quickstart/worker.properties names the plugin
# directory relative to it.
qs=$repo/.run/quickstart
connectd=$repo/bin/connectd
# The development tools (Aerospike test double, the pipeline display): not
# part of the connectd binary.
connectd_dev=$repo/bin/connectd-dev

once=no
format=json
rest_port=8083
prom_port=9090
use_prometheus=yes
records=
timeout_s=300
keep_topics=no

say() { printf '%s\n' "$*"; }
step() { printf '\n==> %s  [%ss]\n' "$*" "$SECONDS"; }
# die prints one line saying what is wrong and how to fix it; the EXIT trap
# stops whatever was started.
die() { printf 'quickstart: %s\n' "$*" >&2; exit 1; }
note() { say "quickstart: $*"; }

usage() { sed -n '2,42p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
  case $1 in
    --once) once=yes ;;
    --format) format=${2:?--format needs json or avro}; shift ;;
    --rest-port) rest_port=${2:?--rest-port needs a port}; shift ;;
    --prometheus-port) prom_port=${2:?--prometheus-port needs a port}; shift ;;
    --no-prometheus) use_prometheus=no ;;
    --records) records=${2:?--records needs a number}; shift ;;
    --timeout) timeout_s=${2:?--timeout needs seconds}; shift ;;
    --keep-topics) keep_topics=yes ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option $1 (see: scripts/quickstart.sh --help)" ;;
  esac
  shift
done
[[ $format == json || $format == avro ]] || die "--format must be json or avro, not '$format' (see: scripts/quickstart.sh --help)"
for n in "$rest_port" "$prom_port" "$timeout_s" ${records:+"$records"}; do
  [[ $n =~ ^[0-9]+$ ]] || die "'$n' is not a number (see: scripts/quickstart.sh --help)"
done
if [[ -z $records ]]; then
  if [[ $once == yes ]]; then records=1500; else records=20000; fi
fi
[[ $records -gt 0 ]] || die "--records must be at least 1"

# ---------------------------------------------------------------- processes

# Every process this script starts is recorded in $qs/pids/<name> with the
# absolute command line it was started with, so that a later run can tell a
# leftover of a killed run from an unrelated process that reuses the pid.
mkdir -p "$qs/pids" "$qs/logs"

is_ours() { # is_ours NAME: the recorded process is alive and is ours
  local f=$qs/pids/$1 pid
  [[ -f $f ]] || return 1
  pid=$(head -n1 "$f")
  [[ -r /proc/$pid/cmdline ]] || return 1
  local cmdline want
  cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline")
  want=$(sed -n 2p "$f")
  # Right after the start it may still be setsid, about to exec.
  [[ $cmdline == "$want"* || $cmdline == "setsid $want"* ]]
}

alive() { # alive NAME: the process this run started is still running
  [[ -f $qs/pids/$1 ]] && kill -0 "$(head -n1 "$qs/pids/$1")" 2>/dev/null
}

record_pid() { # record_pid NAME PID CMDLINE...
  local name=$1 pid=$2; shift 2
  printf '%s\n%s\n' "$pid" "$*" >"$qs/pids/$name"
}

stop_proc() { # stop_proc NAME [SECONDS]: SIGTERM, then SIGKILL after SECONDS
  local name=$1 grace=${2:-20} pid
  is_ours "$name" || { rm -f "$qs/pids/$name"; return 0; }
  pid=$(head -n1 "$qs/pids/$name")
  terminate "$pid" "$grace" "$name (pid $pid)"
  rm -f "$qs/pids/$name"
}

# start_bg NAME LOG CMD...: start CMD in its own session (so the terminal's
# Ctrl-C reaches only this script, which then stops things in order).
start_bg() {
  local name=$1 log=$2; shift 2
  started_any=yes
  setsid "$@" >"$log" 2>&1 </dev/null &
  record_pid "$name" $! "$@"
}

who_listens() { # best effort: "pid N (name)" of the process on a port
  command -v ss >/dev/null 2>&1 || return 0
  ss -ltnpH "sport = :$1" 2>/dev/null | sed -n 's/.*users:((("\([^"]*\)",pid=\([0-9]*\).*/ (pid \2, \1)/p' | head -n1
}

started_kafka=no
started_registry=no
started_any=no
cleaning=no
cleanup() {
  local rc=$?
  [[ $cleaning == yes ]] && return
  cleaning=yes
  trap '' INT TERM HUP
  # Stopping must go on even if the output is gone (a closed terminal or pipe).
  set +e
  if [[ $started_any == no && $started_kafka == no && $started_registry == no ]]; then
    exit "$rc"
  fi
  step "stopping what the quickstart started"
  touch "$qs/stopping"
  # The display, then the worker (its tasks commit and its plugins exit;
  # the supervisor must not restart it), then the servers.
  stop_proc watch 5
  stop_proc supervisor 5
  stop_proc worker 30
  stop_proc prometheus 10
  stop_proc aerospike 10
  if [[ $started_kafka == no && $keep_topics == no && -n ${QUICKSTART_GROUP:-} && -f $qs/files ]]; then
    # A broker that outlives us: remove this run's topics and groups.
    # shellcheck disable=SC2046
    "$connectd_dev" quickstart cleanup $(cat "$qs/files") --bootstrap "$KAFKA_BOOTSTRAP" \
      --worker-config quickstart/worker.properties >/dev/null 2>&1
  fi
  if [[ $started_registry == no && $keep_topics == no && -n ${SCHEMA_REGISTRY_URL:-} && -n ${QUICKSTART_ORDERS_TOPIC:-} ]]; then
    # A registry that outlives us: remove this run's subject (soft, then
    # permanent delete, as the Confluent API wants).
    subject=$SCHEMA_REGISTRY_URL/subjects/$QUICKSTART_ORDERS_TOPIC-value
    curl -sf -o /dev/null -X DELETE "$subject" 2>/dev/null &&
      curl -sf -o /dev/null -X DELETE "$subject?permanent=true" 2>/dev/null
  fi
  if [[ $started_registry == yes ]]; then
    scripts/registry.sh down 2>/dev/null
    rm -f "$qs/owns-registry"
  fi
  if [[ $started_kafka == yes ]]; then
    scripts/kafka.sh down
    rm -f "$qs/owns-kafka"
  fi
  rm -f "$qs/stopping"
  if [[ $rc == 0 || $rc == 130 ]]; then
    say "quickstart: stopped; logs are in ${qs#"$repo"/}/logs/"
  else
    say "quickstart: stopped after an error; logs are in ${qs#"$repo"/}/logs/" >&2
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
# A closed output pipe makes writes fail (and the script stop through the
# EXIT trap) instead of killing the script before it can clean up.
trap '' PIPE

# ---------------------------------------------------------------- preflight

step "checking the machine"
command -v go >/dev/null || die "Go is not installed: install Go 1.26 or newer (https://go.dev/dl/) and put it on PATH"
command -v gcc >/dev/null || die "gcc is not installed: librdkafka needs cgo (Debian/Ubuntu: apt-get install -y gcc)"
command -v setsid >/dev/null || die "setsid is missing (Debian/Ubuntu: apt-get install -y util-linux)"
command -v curl >/dev/null || die "curl is missing: the quickstart polls the worker's /health with it (Debian/Ubuntu: apt-get install -y curl)"

# Leftovers of a run that was killed (kill -9, a closed terminal): stop them
# and start clean.
left=()
for f in "$qs"/pids/*; do
  [[ -e $f ]] || continue
  name=$(basename "$f")
  if is_ours "$name"; then left+=("$name (pid $(head -n1 "$f"))"); else rm -f "$f"; fi
done
if ((${#left[@]} > 0)); then
  say "found processes of an earlier quickstart run that did not shut down: ${left[*]}; stopping them"
  touch "$qs/stopping"
  for name in watch supervisor worker prometheus aerospike; do stop_proc "$name" 20; done
  rm -f "$qs/stopping"
fi
rm -rf "$qs/prometheus-data" "$qs/aerospike.env" "$qs/files" "$qs/worker-exits" "$qs/stopping"
rm -f "$qs"/logs/*.log

kafka_mode=start
if [[ -n ${KAFKA_BOOTSTRAP:-} ]]; then
  kafka_mode=given
elif scripts/kafka.sh status >/dev/null 2>&1; then
  kafka_mode=reuse
  # A broker a killed quickstart started is ours to stop again.
  [[ -f $qs/owns-kafka ]] && started_kafka=yes
else
  rm -f "$qs/owns-kafka"
fi
if [[ $kafka_mode == start ]]; then
  # The same one-line checks scripts/kafka.sh makes, before a long build.
  command -v java >/dev/null || die "Java is not installed: the Kafka broker needs Java 17 or newer (Debian/Ubuntu: apt-get install -y openjdk-17-jre-headless), or set KAFKA_BOOTSTRAP to a running broker"
  command -v mvn >/dev/null || die "Maven is not installed: it downloads the Kafka broker from Maven Central (Debian/Ubuntu: apt-get install -y maven), or set KAFKA_BOOTSTRAP to a running broker"
fi

registry_mode=none
if [[ $format == json && -f $qs/owns-registry ]]; then
  # A registry a killed --format avro run started: stop it at the end.
  if scripts/registry.sh status >/dev/null 2>&1; then started_registry=yes; else rm -f "$qs/owns-registry"; fi
fi
if [[ $format == avro ]]; then
  if [[ -n ${SCHEMA_REGISTRY_URL:-} ]]; then
    registry_mode=given
  elif scripts/registry.sh status >/dev/null 2>&1; then
    registry_mode=reuse
    # A registry a killed quickstart started is ours to stop again.
    [[ -f $qs/owns-registry ]] && started_registry=yes
  else
    rm -f "$qs/owns-registry"
    registry_mode=start
    command -v java >/dev/null || die "Java is not installed: the Schema Registry (--format avro) needs Java 17 or newer (Debian/Ubuntu: apt-get install -y openjdk-17-jre-headless), or set SCHEMA_REGISTRY_URL to a running registry"
    command -v mvn >/dev/null || die "Maven is not installed: it downloads the Schema Registry (--format avro) from Maven Central (Debian/Ubuntu: apt-get install -y maven), or set SCHEMA_REGISTRY_URL to a running registry"
  fi
fi

[[ $rest_port == 0 ]] && rest_port=$(free_port)
if port_open "$rest_port"; then
  die "port $rest_port is already in use$(who_listens "$rest_port"); stop that process or pick another port: make quickstart QUICKSTART_ARGS='--rest-port 0'"
fi
prometheus_bin=
if [[ $use_prometheus == yes ]]; then
  prometheus_bin=$(command -v prometheus || true)
  if [[ -n $prometheus_bin ]]; then
    [[ $prom_port == 0 ]] && prom_port=$(free_port)
    if port_open "$prom_port"; then
      die "port $prom_port (Prometheus) is already in use$(who_listens "$prom_port"); stop that process or run: make quickstart QUICKSTART_ARGS='--prometheus-port 0' (or --no-prometheus)"
    fi
  fi
fi

# ---------------------------------------------------------------- build

step "building connectd, connectd-dev and the connector plugins"
make --no-print-directory build build-dev plugins >"$qs/logs/build.log" 2>&1 || {
  tail -n 20 "$qs/logs/build.log" >&2
  die "the build failed; the full output is in ${qs#"$repo"/}/logs/build.log"
}
"$connectd" version | sed "s/^/  /"

# The pipeline's stages are the plugins this checkout has. Only the ends
# differ by format: the replication copies bytes either way.
conn_dir=quickstart/connectors
[[ $format == avro ]] && conn_dir=quickstart/connectors/avro
files=(--source $conn_dir/orders-datagen.json)
pipeline="DatagenSource"
if [[ -x bin/plugins/connectd-kafka-replication ]]; then
  files+=(--replication quickstart/connectors/orders-replication.json)
  pipeline+=" → KafkaReplicationSource"
  if [[ -x bin/plugins/connectd-aerospike-sink ]]; then
    files+=(--sink $conn_dir/orders-aerospike.json)
    pipeline+=" → AerospikeSink"
  fi
fi
echo "${files[*]}" >"$qs/files"

# ---------------------------------------------------------------- Kafka

step "Kafka"
case $kafka_mode in
  given) say "using the broker at KAFKA_BOOTSTRAP=$KAFKA_BOOTSTRAP" ;;
  reuse) say "reusing the running broker: $(scripts/kafka.sh status)" ;;
  start)
    touch "$qs/owns-kafka"
    started_kafka=yes
    scripts/kafka.sh up >/dev/null || die "the Kafka broker did not start (see the message above)"
    ;;
esac
if [[ -z ${KAFKA_BOOTSTRAP:-} ]]; then
  KAFKA_BOOTSTRAP=$(sed -n 's/^KAFKA_BOOTSTRAP=//p' "$run_dir/kafka.env")
fi
say "KAFKA_BOOTSTRAP=$KAFKA_BOOTSTRAP"

# Names unique to this run: a broker that is reused or shared never mixes
# two runs' topics, groups or offsets.
run_id=$(date +%Y%m%d-%H%M%S)-$$
export KAFKA_BOOTSTRAP
export QUICKSTART_GROUP=connectd-quickstart-$run_id
export QUICKSTART_ORDERS_TOPIC=quickstart-$run_id-orders
say "QUICKSTART_ORDERS_TOPIC=$QUICKSTART_ORDERS_TOPIC"
export QUICKSTART_REST_PORT=$rest_port
export QUICKSTART_ITERATIONS=$records
if [[ $once == yes ]]; then export QUICKSTART_MAX_INTERVAL_MS=0; else export QUICKSTART_MAX_INTERVAL_MS=10; fi

# ---------------------------------------------------------------- Schema Registry

if [[ $format == avro ]]; then
  step "Schema Registry (--format avro)"
  case $registry_mode in
    given) say "using the registry at SCHEMA_REGISTRY_URL=$SCHEMA_REGISTRY_URL" ;;
    reuse) say "reusing the running registry" ;;
    start)
      touch "$qs/owns-registry"
      started_registry=yes
      say "starting one with scripts/registry.sh (the first start builds it from Maven Central: a few minutes)"
      scripts/registry.sh up >/dev/null 2>"$qs/logs/registry.log" || {
        tail -n 3 "$qs/logs/registry.log" >&2
        die "the Schema Registry did not start; see ${qs#"$repo"/}/logs/registry.log, or set SCHEMA_REGISTRY_URL to a running registry"
      }
      ;;
  esac
  if [[ -z ${SCHEMA_REGISTRY_URL:-} ]]; then
    SCHEMA_REGISTRY_URL=$(sed -n 's/^SCHEMA_REGISTRY_URL=//p' "$run_dir/registry.env")
  fi
  [[ -n $SCHEMA_REGISTRY_URL ]] || die "no SCHEMA_REGISTRY_URL in ${run_dir}/registry.env after scripts/registry.sh"
  curl -sf -o /dev/null "$SCHEMA_REGISTRY_URL/subjects" ||
    die "the Schema Registry at $SCHEMA_REGISTRY_URL does not answer GET /subjects; start one with scripts/registry.sh up or fix SCHEMA_REGISTRY_URL"
  export SCHEMA_REGISTRY_URL
  say "SCHEMA_REGISTRY_URL=$SCHEMA_REGISTRY_URL"
fi

# ---------------------------------------------------------------- Aerospike

step "Aerospike test server (in-memory; a test double, not a database)"
start_bg aerospike "$qs/logs/aerospike.log" "$connectd_dev" aerospike --listen 127.0.0.1:0 --namespaces test
for _ in $(seq 1 100); do
  grep -q '^AEROSPIKE_ADDR=' "$qs/logs/aerospike.log" 2>/dev/null && break
  alive aerospike || die "the Aerospike test server exited: $(tail -n1 "$qs/logs/aerospike.log")"
  sleep 0.1
done
AEROSPIKE_ADDR=$(sed -n 's/^AEROSPIKE_ADDR=//p' "$qs/logs/aerospike.log")
[[ -n $AEROSPIKE_ADDR ]] || die "the Aerospike test server did not report its address; see ${qs#"$repo"/}/logs/aerospike.log"
export AEROSPIKE_ADDR
say "AEROSPIKE_ADDR=$AEROSPIKE_ADDR"

# ---------------------------------------------------------------- plugins

step "installing the connector plugins"
"$connectd" plugin install --plugin-path "$qs/plugins" bin/plugins | sed 's/^/  /'

# ---------------------------------------------------------------- Prometheus

rest_url=http://127.0.0.1:$rest_port
metrics_url=$rest_url/metrics
prometheus_url=
if [[ -n $prometheus_bin ]]; then
  step "Prometheus"
  rules=()
  for f in grafana/alerts/*.yml grafana/alerts/*.yaml grafana/*rules*.yml; do
    [[ -f $f ]] && rules+=("$repo/$f")
  done
  {
    echo "# Generated by scripts/quickstart.sh for this run."
    echo "global: {scrape_interval: 5s, evaluation_interval: 5s}"
    if ((${#rules[@]} > 0)); then
      echo "rule_files:"; for f in "${rules[@]}"; do echo "  - '$f'"; done
    fi
    echo "scrape_configs:"
    echo "  - job_name: connectd"
    echo "    static_configs: [{targets: ['127.0.0.1:$rest_port']}]"
  } >"$qs/prometheus.yml"
  start_bg prometheus "$qs/logs/prometheus.log" "$prometheus_bin" \
    --config.file="$qs/prometheus.yml" --storage.tsdb.path="$qs/prometheus-data" \
    --web.listen-address="127.0.0.1:$prom_port"
  prometheus_url=http://127.0.0.1:$prom_port
  say "Prometheus on $prometheus_url (scraping $metrics_url)"
elif [[ $use_prometheus == yes ]]; then
  step "Prometheus"
  say "Prometheus is not installed, so the quickstart runs without it; to get it: apt-get install -y prometheus"
fi

# ---------------------------------------------------------------- worker

step "connectd worker"
# The supervisor restarts the worker when it dies (kill -9 it to watch the
# pipeline recover without duplicates), until the quickstart stops.
supervise() {
  local n=0
  while [[ ! -e $qs/stopping ]]; do
    n=$((n + 1))
    start_bg worker "$qs/logs/worker.log.$n" "$connectd" worker "$repo/quickstart/worker.properties"
    ln -sf "worker.log.$n" "$qs/logs/worker.log"
    local pid
    pid=$(head -n1 "$qs/pids/worker")
    while kill -0 "$pid" 2>/dev/null; do sleep 0.5; done
    [[ -e $qs/stopping ]] && break
    echo "$(date +%T) worker (pid $pid) exited; restarting it"
    echo "$pid" >>"$qs/worker-exits"
    sleep 1
  done
}
rm -f "$qs/worker-exits"
# Its output (bash's own "Killed" notes included) goes to a log.
supervise >>"$qs/logs/supervisor.log" 2>&1 &
record_pid supervisor $! "$(tr '\0' ' ' </proc/$!/cmdline)"

deadline=$((SECONDS + 120))
until curl -sf -o /dev/null "$rest_url/health" 2>/dev/null; do
  if [[ -s $qs/worker-exits ]]; then
    # The supervisor saw the first worker exit: it could not start.
    die "the worker exited during start-up: $(grep -v '^\s*$' "$qs/logs/worker.log.1" | tail -n1)"
  fi
  ((SECONDS < deadline)) || die "the worker did not become healthy within 120s; see ${qs#"$repo"/}/logs/worker.log"
  sleep 0.5
done
say "worker healthy at $rest_url (pid $(head -n1 "$qs/pids/worker"))"

# ---------------------------------------------------------------- pipeline

step "deploying the pipeline: $pipeline"
"$connectd_dev" quickstart prepare "${files[@]}" --partitions 3 | sed 's/^/  /'
deploy() {
  "$connectd" connectors create -f "$1" --url "$rest_url" | sed 's/^/  /'
}
deploy $conn_dir/orders-datagen.json
[[ " ${files[*]} " == *" --replication "* ]] && deploy quickstart/connectors/orders-replication.json
[[ " ${files[*]} " == *" --sink "* ]] && deploy $conn_dir/orders-aerospike.json

if [[ " ${files[*]} " != *" --sink "* ]]; then
  say "  (this checkout has no KafkaReplicationSource/AerospikeSink plugins yet: the pipeline stops at the topic)"
fi

if [[ -n $prometheus_url ]] && ! alive prometheus; then
  say "  Prometheus exited: $(tail -n1 "$qs/logs/prometheus.log") (the quickstart goes on without it)"
  prometheus_url=
fi

cat <<EOF

  REST API     $rest_url            (Kafka Connect compatible)
  metrics      $metrics_url
  Prometheus   ${prometheus_url:-not running}
  logs         ${qs#"$repo"/}/logs/

  Try, in another terminal:
    bin/connectd connectors list --url $rest_url
    bin/connectd connectors status quickstart-aerospike --url $rest_url
    bin/connectd connectors offsets get quickstart-orders --url $rest_url
    kill -9 \$(head -n1 ${qs#"$repo"/}/pids/worker)   # the worker comes back; no record is applied twice
EOF

step "progress (Ctrl-C stops everything the quickstart started)"
watch_args=("${files[@]}" --bootstrap "$KAFKA_BOOTSTRAP" --url "$rest_url" --metrics-url "$metrics_url")
if [[ $once == yes ]]; then
  watch_args+=(--once --timeout "${timeout_s}s")
fi
# In the background (recorded like every other process, so that a killed
# run's display is cleaned up too); `wait` returns at once on Ctrl-C.
if [[ -t 1 ]]; then live=always; else live=never; fi
[[ $once == yes ]] && live=never
start_bg_fg() { # like start_bg, but keeps the terminal as its output
  started_any=yes
  "$@" &
  record_pid watch $! "$@"
}
start_bg_fg "$connectd_dev" quickstart watch "${watch_args[@]}" --live "$live"
rc=0
wait "$(head -n1 "$qs/pids/watch")" || rc=$?
rm -f "$qs/pids/watch"
[[ $rc == 0 ]] || die "the pipeline did not verify (see above); logs are in ${qs#"$repo"/}/logs/"
[[ $once == yes ]] && say "quickstart: verified"
exit 0
