#!/usr/bin/env bash
# scripts/quickstart.sh — what `make quickstart` runs.
# For now it brings up the local Kafka broker; the demo pipeline
# (DatagenSource → KafkaReplicationSource → AerospikeSink) is added as the
# connectors land.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/kafka.sh up
cat <<MSG

Kafka is up. The demo pipeline is not wired into the quickstart yet:
coming next are the Aerospike test server, a connectd worker and the
DatagenSource → KafkaReplicationSource → AerospikeSink pipeline.
Stop the broker with: make kafka-down
MSG
