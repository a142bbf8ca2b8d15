#!/usr/bin/env bash
# bench/abtest/run.sh — a Go benchmark at two commits, interleaved.
#
#   bench/abtest/run.sh -baseline COMMIT [-count N] [PACKAGE [BENCH-REGEXP [TEST FLAGS...]]]
#
# Builds PACKAGE's test binary at COMMIT (from `git archive`, under
# bench/out/abtest/) and in the working tree, then runs them in turn N
# times each (default 5; the order alternates), each in its own tree's
# package directory, and prints the median of every reported figure and
# the ratio working-tree/baseline. Defaults: ./connectors/aerospike,
# BenchmarkSinkInterleaved, -test.benchtime 200x. Output (both binaries'
# results, summary.md) in bench/out/abtest/<time>/.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
baseline='' count=5
while [[ $# -gt 0 && $1 == -* ]]; do
  case $1 in
    -baseline) baseline=${2:?-baseline needs a commit}; shift 2 ;;
    -count) count=${2:?-count needs a number}; shift 2 ;;
    *) echo "abtest: unknown flag $1" >&2; exit 2 ;;
  esac
done
[[ -n $baseline ]] || { echo "abtest: -baseline COMMIT is required" >&2; exit 2; }
pkg=${1:-./connectors/aerospike}
re=${2:-BenchmarkSinkInterleaved}
shift $(($# > 2 ? 2 : $#))
flags=("$@")
[[ ${#flags[@]} -gt 0 ]] || flags=(-test.benchtime 200x)

sha=$(git rev-parse --verify "$baseline^{commit}")
out=bench/out/abtest/$(date -u +%Y%m%dT%H%M%S)
src=$out/baseline-src
mkdir -p "$src"
# The baseline's tree is needed while its tests run (they may build from
# their package directory), and not after.
trap 'rm -rf "$repo/$src"' EXIT
git archive "$sha" | tar -x -C "$src"
go test -C "$src" -c -o "$repo/$out/base.test" "$pkg"
go test -c -o "$repo/$out/new.test" "$pkg"

run() { # name tree
  (cd "$2/$pkg" && "$repo/$out/$1.test" -test.run '^$' -test.bench "$re" -test.count 1 "${flags[@]}") >>"$out/$1.txt"
}
echo "abtest: $pkg $re, baseline ${sha:0:12} vs working tree, $count runs each (output: $out)" >&2
for i in $(seq 1 "$count"); do
  if ((i % 2)); then run base "$src"; run new "$repo"; else run new "$repo"; run base "$src"; fi
  echo "abtest: round $i/$count done, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
go run ./bench/abtest "base=$out/base.txt" "new=$out/new.txt" | tee "$out/summary.md"
