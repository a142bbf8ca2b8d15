#!/usr/bin/env bash
# scripts/test.sh — what `make test` runs: check and install what the tests need,
# start the local Kafka clusters and the Schema Registry unless they are already
# up, lint, run every test, and stop again what this script started.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n==> %s\n' "$*"; }

step "checking tools"
command -v go >/dev/null || { echo "test: Go is not installed (need Go 1.26)" >&2; exit 1; }
command -v gcc >/dev/null || { echo "test: gcc is not installed: confluent-kafka-go needs cgo (apt-get install -y gcc)" >&2; exit 1; }
go version

step "Prometheus (grafana/ tests run every dashboard query and alert test with it)"
if command -v prometheus >/dev/null && command -v promtool >/dev/null; then
  prometheus --version 2>&1 | head -n1
else
  sudo=
  [[ $(id -u) == 0 ]] || sudo=sudo
  if command -v apt-get >/dev/null; then
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    # The package's service start may be refused in containers; harmless.
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus
  else
    echo "test: prometheus/promtool missing and no apt-get: install Debian's prometheus package (the grafana/ tests skip without it, or fail with CI=true)" >&2
  fi
fi

started=()
registry_started=
cleanup() {
  if [[ -n $registry_started ]]; then
    step "stopping the Schema Registry, which this run started"
    scripts/registry.sh down || true
  fi
  for c in "${started[@]}"; do
    step "stopping Kafka cluster $c, which this run started"
    scripts/kafka.sh down "$c" || true
  done
}
trap cleanup EXIT

# Cluster a serves every test; cluster b is the target of the cross-cluster
# replication tests.
for c in a b; do
  step "starting Kafka cluster $c"
  if scripts/kafka.sh status "$c" >/dev/null 2>&1; then
    echo "reusing the running cluster: $(scripts/kafka.sh status "$c")"
  else
    scripts/kafka.sh up "$c"
    started+=("$c")
  fi
done

# The serde and compatibility tests (internal/registrytest) need a Schema
# Registry; the first start builds it from Maven Central (a minute or two).
step "starting the Schema Registry"
if scripts/registry.sh status >/dev/null 2>&1; then
  echo "reusing the running registry: $(scripts/registry.sh status)"
else
  scripts/registry.sh up
  registry_started=yes
fi

step "lint"
make --no-print-directory lint

step "the plugin SDK builds without cgo"
make --no-print-directory sdk-check

step "go test"
# Integration tests need the broker; with CI=true a missing one fails them.
# Three packages at a time on two cores: the slow packages spend most of
# their time waiting (session timeouts, SIGKILLed workers restarting,
# transaction commits), so a third keeps the CPUs busy.
go test -count=1 -p "${TEST_PARALLEL_PACKAGES:-3}" -timeout 25m ./...

step "chaos (short run: the whole pipeline under faults, its own broker)"
make --no-print-directory chaos-short

step "fuzz (short runs; the seed corpora already ran as unit tests above)"
# Each line: package, fuzz target, and an execution budget of about ten
# seconds on a 2-core machine. Budgets are counts, not durations: with a
# duration, Go 1.26's fuzz coordinator can fail a target with a bare
# "context deadline exceeded" when the time runs out while a worker is
# mid-call (golang/go#75804, fixed in Go 1.27). FUZZTIME overrides every
# budget (a count like 100000x or a duration like 30s).
while read -r pkg target budget; do
  [[ -z $pkg ]] && continue
  go test -run '^$' -fuzz "^${target}\$" -fuzztime "${FUZZTIME:-$budget}" "$pkg"
done <<'FUZZ'
./connectors/aerospike/aerofake/ FuzzServeConn 30000x
./plugins/internal/wire/ FuzzDecoder 30000x
./framework/rest/ FuzzHandlers 20000x
./plugins/internal/wire/ FuzzTaskFrames 80000x
./plugins/internal/datachan/ FuzzFrameReader 400000x
FUZZ

echo
echo "make test: all passed"
