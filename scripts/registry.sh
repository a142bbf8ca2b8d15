#!/usr/bin/env bash
# scripts/registry.sh — a real Schema Registry for tests: Apicurio Registry 2.x,
# built from Maven Central, serving the Confluent-compatible API.
#
#   scripts/registry.sh up       start (or reuse) the registry; prints SCHEMA_REGISTRY_URL=http://127.0.0.1:<port>/apis/ccompat/v7
#   scripts/registry.sh down     stop what this script started
#   scripts/registry.sh status   print the URL if the registry is up (exit 1 if not)
#
# Apicurio publishes its server as a library jar (io.apicurio:apicurio-registry-app),
# so the first `up` runs a Quarkus build over it through scripts/registry/pom.xml
# (a minute or two on a fast link: about 1,400 files come from Maven Central into ~/.m2).
# The built application is cached per registry version and per hash of the pom in
# ${XDG_CACHE_HOME:-~/.cache}/connectd/registry-<version>-<pom hash>, so later
# starts take seconds. Storage is in memory (H2): every start is an empty registry.
#
# State lives in $CONNECTD_RUN_DIR (default: .run/ at the repo root):
#   registry.env          SCHEMA_REGISTRY_URL=... (what tests read)
#   registry/pid, registry/port, registry/app (the cached build the process runs)
#   registry/logs/        registry log, Maven log of the last build
#
# Environment knobs: REGISTRY_PORT (fixed port instead of a free one),
# REGISTRY_HEAP_OPTS (default -Xms32m -Xmx192m), REGISTRY_START_TIMEOUT (s, default 120),
# MAVEN_TIMEOUT (s, default 1200, the first build only).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib.sh
. "$repo/scripts/lib.sh"
run_dir=${CONNECTD_RUN_DIR:-$repo/.run}
state=$run_dir/registry
env_file=$run_dir/registry.env
pom=$repo/scripts/registry/pom.xml
heap=${REGISTRY_HEAP_OPTS:--Xms32m -Xmx192m}
start_timeout=${REGISTRY_START_TIMEOUT:-120}
maven_timeout=${MAVEN_TIMEOUT:-1200}
api_path=/apis/ccompat/v7
# The Quarkus build names the runner after the wrapper pom's artifactId and version.
runner=apicurio-registry-runner-1-runner.jar

die() { echo "registry: $*" >&2; exit 1; }
note() { echo "registry: $*" >&2; }

need_tools() { need_java 11 "Apicurio Registry 2.x"; }

registry_version() { sed -n 's:.*<apicurio.version>\(.*\)</apicurio.version>.*:\1:p' "$pom"; }

# app_dir is where the build for this pom is (or will be) cached.
app_dir() {
  local sum
  sum=$(sha256sum "$pom" | cut -c1-12)
  echo "${XDG_CACHE_HOME:-$HOME/.cache}/connectd/registry-$(registry_version)-$sum"
}

# run_maven runs mvn with a time limit ($1 s) and its output in $2, saying
# every 30 s how far it got, so that a long first build does not look hung.
run_maven() {
  local limit=$1 log=$2 start=$SECONDS
  shift 2
  timeout "$limit" mvn "$@" >"$log" 2>&1 &
  local pid=$! next_note=$((SECONDS + 30))
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if (( SECONDS >= next_note )) && kill -0 "$pid" 2>/dev/null; then
      note "still building: $((SECONDS - start))s, $(grep -c '^\[INFO\] Downloaded from' "$log" || true) files downloaded so far"
      next_note=$((SECONDS + 30))
    fi
  done
  wait "$pid"
}

# build makes sure the cached application exists, running the Quarkus build when not.
build() {
  local dir=$1
  [[ -f $dir/$runner ]] && return
  need_maven "the first start builds Apicurio Registry from Maven Central"
  mkdir -p "$(dirname "$dir")" "$state/logs"
  local work log=$state/logs/maven.log
  work=$(mktemp -d "$dir.build.XXXXXX")
  cp "$pom" "$work/pom.xml"
  # The index-dependency keys are passed here as well as in the pom: without
  # them Quarkus discovers no REST resource and every API path answers 404.
  local args=(-B -f "$work/pom.xml" package -DskipTests
    -Dquarkus.index-dependency.app.group-id=io.apicurio
    -Dquarkus.index-dependency.app.artifact-id=apicurio-registry-app
    -Dmaven.wagon.http.retryHandler.count=3 -Dmaven.wagon.rto=60000)
  local start=$SECONDS rc=0
  # Offline first: with a warm ~/.m2 (another checkout, a changed pom) the
  # build needs no network at all.
  note "building Apicurio Registry $(registry_version) with Quarkus (once per pom change; log: ${log#"$repo"/})"
  if ! run_maven 600 "$log" -o "${args[@]}"; then
    note "downloading its jars from Maven Central (first run only: a few minutes)"
    run_maven "$maven_timeout" "$log" "${args[@]}" || rc=$?
  fi
  if [[ $rc != 0 ]]; then
    rm -rf -- "$work"
    if [[ $rc == 124 ]]; then
      die "Maven did not finish building the registry within ${maven_timeout}s: is Maven Central (repo.maven.apache.org) reachable? log: ${log#"$repo"/}"
    fi
    if ! grep -q 'Downloaded from central' "$log" && grep -qiE 'unknown host|could not transfer|connect timed out|connection refused|network is unreachable|Could not resolve|Failed to read artifact descriptor|plugin .* could not be resolved' "$log"; then
      die "cannot download Apicurio Registry: Maven Central (repo.maven.apache.org) is unreachable; log: ${log#"$repo"/}"
    fi
    die "the Quarkus build of Apicurio Registry failed: $(grep -m1 '^\[ERROR\]' "$log" || true); log: ${log#"$repo"/}"
  fi
  note "built in $((SECONDS - start))s; cached in $dir"
  # Keep only what runs: the legacy-jar runner and its lib/ directory. The
  # rename is atomic; when another checkout finished the same build first,
  # its copy (which may be running) stays and this one is dropped.
  mkdir -p "$work/app"
  mv "$work/target/$runner" "$work/target/lib" "$work/app/" \
    || die "the build left no runner jar; log: ${log#"$repo"/}"
  [[ -f $dir/$runner ]] || { rm -rf -- "$dir"; mv -T "$work/app" "$dir" 2>/dev/null || true; }
  rm -rf -- "$work"
  [[ -f $dir/$runner ]] || die "could not store the build in $dir"
}


# ready reports whether the Confluent-compatible API answers 200 on the port.
# Plain bash, so that no HTTP client has to be installed.
ready() {
  local status
  status=$(timeout 5 bash -c '
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf "GET %s/subjects HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" "$2" >&3
    head -n1 <&3' _ "$1" "$api_path" 2>/dev/null) || return 1
  [[ $status == *" 200"* ]]
}

# is_ours reports whether the recorded pid is alive and is the registry this
# run dir started, so that a recycled pid never gets signalled.
is_ours() {
  [[ -f $state/pid ]] || return 1
  local pid
  pid=$(cat "$state/pid")
  [[ -r /proc/$pid/cmdline ]] || return 1
  tr '\0' '\n' <"/proc/$pid/cmdline" | grep -qxF -- "-Dconnectd.registry.state=$state"
}

write_env() {
  local url
  url="http://127.0.0.1:$(cat "$state/port")$api_path"
  echo "SCHEMA_REGISTRY_URL=$url" >"$env_file"
  echo "SCHEMA_REGISTRY_URL=$url"
}

stop_registry() {
  is_ours || return 0
  local pid
  pid=$(cat "$state/pid")
  terminate "$pid" 20 "the registry"
  rm -f "$state/pid"
}

clean_stale() { rm -f "$state/pid" "$state/port" "$state/app" "$env_file"; }

cmd_up() {
  need_tools
  mkdir -p "$state/logs"
  if is_ours; then
    if ready "$(cat "$state/port")"; then
      note "reusing the running registry (pid $(cat "$state/pid"))"
      write_env
      return
    fi
    note "the recorded registry does not answer; restarting it"
    stop_registry
  fi
  clean_stale
  local dir port
  dir=$(app_dir)
  build "$dir"
  port=${REGISTRY_PORT:-$(free_port)}
  port_open "$port" && die "port $port on 127.0.0.1 is already in use by another process; set REGISTRY_PORT to a free port or stop that process"
  echo "$port" >"$state/port"
  echo "$dir" >"$state/app"
  note "starting Apicurio Registry $(registry_version) on 127.0.0.1:$port (in-memory storage)"
  # C1 only and a small heap: a test registry serves a few requests, and the
  # C2 compiler, G1, a default-sized heap and a 20-connection pool nearly
  # double its memory (about 280 MB resident instead of 165 MB).
  # setsid: it outlives this script and ignores the caller's Ctrl-C.
  # shellcheck disable=SC2086
  setsid java $heap -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError \
    -Xss512k -XX:ReservedCodeCacheSize=64m -XX:MaxMetaspaceSize=192m \
    -Djava.awt.headless=true -Dconnectd.registry.state="$state" \
    -Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="$port" \
    -Dquarkus.log.file.enable=false -Dquarkus.log.console.color=false \
    -Dquarkus.datasource.jdbc.initial-size=1 -Dquarkus.datasource.jdbc.min-size=1 -Dquarkus.datasource.jdbc.max-size=8 \
    -jar "$dir/$runner" \
    >"$state/logs/registry.log" 2>&1 </dev/null &
  echo $! >"$state/pid"
  local deadline=$((SECONDS + start_timeout)) started=$SECONDS
  until ready "$port"; do
    if ! kill -0 "$(cat "$state/pid")" 2>/dev/null; then
      die "the registry exited during start-up: $(grep -m1 -E 'ERROR|Exception' "$state/logs/registry.log" || tail -n1 "$state/logs/registry.log"); log: ${state#"$repo"/}/logs/registry.log"
    fi
    (( SECONDS < deadline )) || { stop_registry; die "the registry did not answer on $api_path within ${start_timeout}s; log: ${state#"$repo"/}/logs/registry.log"; }
    sleep 0.25
  done
  note "up in $((SECONDS - started))s (pid $(cat "$state/pid"))"
  write_env
}

cmd_down() {
  if ! is_ours; then
    note "no registry started by this script is running"
    clean_stale
    return
  fi
  stop_registry
  clean_stale
  note "stopped"
}

cmd_status() {
  if is_ours && ready "$(cat "$state/port")"; then
    write_env
  else
    echo "registry: not running" >&2
    return 1
  fi
}

main() {
  case "${1:-}" in
    up) cmd_up ;;
    down) cmd_down ;;
    status) cmd_status ;;
    *) echo "usage: $0 up | down | status" >&2; exit 2 ;;
  esac
}

# One line, so that bash has read the exit before it runs main: a script
# edited while an `up` builds must not run the edited file's tail.
main "$@"; exit $?
