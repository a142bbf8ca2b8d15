#!/usr/bin/env bash
# scripts/release.sh — what `make release` runs: connectd and every connector
# plugin for linux/amd64 and linux/arm64, as static as the platform allows,
# packed per platform with SHA-256 checksums.
#
#   scripts/release.sh [--arch amd64|arm64|all] [--out DIR]
#
# Output (default dist/): connectd-<version>-linux-<arch>.tar.gz holding
# bin/connectd, plugins/<plugin binaries>, README.md and docs/, plus SHA256SUMS
# over the archives and every binary in them (verify: sha256sum -c SHA256SUMS).
#
# How each binary is linked:
#   - binaries that do not use librdkafka (most plugins): CGO_ENABLED=0,
#     fully static, for both architectures;
#   - binaries that use librdkafka (connectd, the Kafka replication plugin)
#     need cgo. confluent-kafka-go ships librdkafka prebuilt as static archives
#     for glibc and musl on amd64 and arm64, so librdkafka is always linked in:
#       amd64 with musl-gcc (Debian: apt-get install -y musl-tools): fully static;
#       amd64 without musl-gcc: dynamically linked to glibc only;
#       arm64 with aarch64-linux-gnu-gcc (apt-get install -y gcc-aarch64-linux-gnu):
#         dynamically linked to glibc only (there is no packaged aarch64 musl
#         cross compiler; set CC_ARM64_MUSL to one to get a static binary).
#   A platform whose C compiler is missing is skipped with a message saying
#   what to install; the script fails if nothing could be built.
#
# VERSION (default: git describe) and COMMIT are stamped into `connectd version`.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

arches=(amd64 arm64)
out=dist
while [[ $# -gt 0 ]]; do
  case $1 in
    --arch) case ${2:-} in all) arches=(amd64 arm64) ;; amd64|arm64) arches=("$2") ;; *) echo "release: --arch amd64|arm64|all" >&2; exit 2 ;; esac; shift ;;
    --out) out=${2:?--out needs a directory}; shift ;;
    -h|--help) sed -n '2,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "release: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
commit=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
ldflags="-s -w -X main.version=$version -X main.commit=$commit"
mkdir -p "$out"
out=$(cd "$out" && pwd)

# Binaries: connectd, then every plugin main.
mains=(./cmd/connectd)
for m in connectors/*/cmd/*/; do mains+=("./${m%/}"); done

uses_librdkafka() {
  go list -deps "$1" | grep -qx 'github.com/confluentinc/confluent-kafka-go/v2/kafka'
}

built=()
skipped=()
for arch in "${arches[@]}"; do
  cc= tags= extld= link= need=
  case $arch in
    amd64)
      if command -v musl-gcc >/dev/null; then
        cc=musl-gcc tags=musl extld='-static' link="static (musl)"
      elif command -v gcc >/dev/null; then
        cc=gcc link="glibc-dynamic (install musl-tools for a static build)"
      fi
      need="apt-get install -y musl-tools (or gcc)" ;;
    arm64)
      if [[ -n ${CC_ARM64_MUSL:-} ]]; then
        cc=$CC_ARM64_MUSL tags=musl extld='-static' link="static (musl)"
      elif command -v aarch64-linux-gnu-gcc >/dev/null; then
        cc=aarch64-linux-gnu-gcc link="glibc-dynamic"
      fi
      need="apt-get install -y gcc-aarch64-linux-gnu" ;;
  esac
  name=connectd-$version-linux-$arch
  stage=$out/$name
  rm -rf "$stage"
  mkdir -p "$stage/bin" "$stage/plugins"
  ok=yes
  for main in "${mains[@]}"; do
    bin=$(basename "$main")
    dest=$stage/plugins/$bin
    [[ $main == ./cmd/connectd ]] && dest=$stage/bin/connectd
    if uses_librdkafka "$main"; then
      if [[ -z $cc ]]; then
        skipped+=("linux/$arch: no C compiler for linux/$arch to build $bin with librdkafka ($need)")
        ok=no; break
      fi
      echo "release: linux/$arch $bin (cgo, librdkafka static, $link)"
      flags=$ldflags
      [[ -n $extld ]] && flags="$flags -linkmode external -extldflags $extld"
      CGO_ENABLED=1 GOOS=linux GOARCH=$arch CC=$cc go build -trimpath ${tags:+-tags $tags} -ldflags "$flags" -o "$dest" "$main"
    else
      echo "release: linux/$arch $bin (pure Go, static)"
      CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath -ldflags "$ldflags" -o "$dest" "$main"
    fi
  done
  if [[ $ok == no ]]; then rm -rf "$stage"; continue; fi
  cp README.md "$stage/"
  cp -r docs "$stage/docs"
  tar -C "$out" -czf "$out/$name.tar.gz" "$name"
  built+=("$name")
done

if ((${#built[@]} == 0)); then
  printf 'release: nothing could be built: %s\n' "${skipped[*]}" >&2
  exit 1
fi

# Checksums of the archives and of every binary in them.
(
  cd "$out"
  rm -f SHA256SUMS
  for name in "${built[@]}"; do
    sha256sum "$name.tar.gz" "$name"/bin/* "$name"/plugins/* >>SHA256SUMS
  done
)

echo
for name in "${built[@]}"; do
  echo "release: $out/$name.tar.gz"
  for f in "$out/$name"/bin/* "$out/$name"/plugins/*; do
    kind=
    command -v file >/dev/null && kind=$(file -b "$f" | grep -oE 'statically linked|dynamically linked|static-pie linked' | head -n1)
    printf '  %-40s %s\n' "${f#"$out/$name/"}" "$kind"
  done
done
for s in "${skipped[@]}"; do echo "release: skipped $s" >&2; done
echo "release: checksums in $out/SHA256SUMS"
