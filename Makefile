# connectd — build, test and run targets. `make help` lists them.
#
# The two commands of the README:
#   make quickstart   bring up Kafka, the Aerospike test server and connectd with a demo pipeline
#   make test         install/start what the tests need, lint, run every test, stop what it started

SHELL := /bin/bash
GO ?= go
STATICCHECK_VERSION := v0.8.2
GOCYCLO_VERSION := v0.6.0
# The most independent paths a function may have (CONTRIBUTING.md, "Lint").
GOCYCLO_OVER := 30
BIN := bin
PLUGIN_DIR := $(BIN)/plugins

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

.PHONY: build
build: ## build bin/connectd
	$(GO) build -o $(BIN)/connectd ./cmd/connectd

.PHONY: build-dev
build-dev: ## build bin/connectd-dev: the Aerospike test double and the quickstart's helpers (never deployed)
	$(GO) build -o $(BIN)/connectd-dev ./cmd/connectd-dev

.PHONY: plugins
plugins: ## build every connector plugin into bin/plugins/
	@mkdir -p $(PLUGIN_DIR)
	@for main in $$(ls -d connectors/*/cmd/*/ 2>/dev/null); do \
		name=$$(basename $$main); \
		echo "go build -o $(PLUGIN_DIR)/$$name ./$$main"; \
		$(GO) build -o $(PLUGIN_DIR)/$$name ./$$main || exit 1; \
	done

.PHONY: test
test: ## install/start what tests need, lint, run all tests, stop what it started
	scripts/test.sh

.PHONY: lint
lint: ## gofmt check, go vet, staticcheck, gocyclo
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	@# The chaos tag only adds files (test/chaos's suite), so one pass with it covers every package.
	$(GO) vet -tags chaos ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) -tags chaos ./...
	GO=$(GO) GOCYCLO_VERSION=$(GOCYCLO_VERSION) GOCYCLO_OVER=$(GOCYCLO_OVER) scripts/gocyclo.sh

# What a connector plugin imports (docs/writing-a-connector.md): it must
# build without cgo, so that plugins are static binaries that need no
# librdkafka; examples/linesource is the worked example built that way.
# framework/convert without its subpackages: convert/schemaregistry is an
# optional cgo package (confluent-kafka-go's serde) that plugins opt into
# with plugins.WithConverters; the SDK itself must not need cgo.
SDK_PACKAGES := ./framework/sdk/... ./framework/configdef/... ./framework/data/... \
	./framework/convert ./framework/transform/... ./plugins ./plugins/plugintest/... \
	./examples/linesource/...

.PHONY: sdk-check
sdk-check: ## build the plugin SDK (sdk, configdef, data, convert, transform, plugins, plugintest) and examples/linesource with CGO_ENABLED=0
	CGO_ENABLED=0 $(GO) build $(SDK_PACKAGES)
	CGO_ENABLED=0 $(GO) build -o /dev/null ./examples/linesource/cmd/connectd-lines

.PHONY: kafka-up
kafka-up: ## start (or reuse) the two local Kafka clusters; prints KAFKA_BOOTSTRAP and KAFKA_BOOTSTRAP_B
	@scripts/kafka.sh up all

.PHONY: kafka-down
kafka-down: ## stop the local Kafka clusters started by kafka-up
	@scripts/kafka.sh down all

.PHONY: registry-up
registry-up: ## start (or reuse) the test Schema Registry (Apicurio, built from Maven Central on first use); prints SCHEMA_REGISTRY_URL
	@scripts/registry.sh up

.PHONY: registry-down
registry-down: ## stop the Schema Registry started by registry-up
	@scripts/registry.sh down

.PHONY: quickstart
quickstart: ## run the demo pipeline locally (Kafka, Aerospike test server, connectd)
	scripts/quickstart.sh $(QUICKSTART_ARGS)

# Pinned code generators; protoc itself comes from Debian (apt-get install -y protobuf-compiler).
PROTOC_GEN_GO      := google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
PROTOC_GEN_GO_GRPC := google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1

.PHONY: generate
generate: ## regenerate plugins/pluginpb from plugin.proto (Debian protoc, pinned Go plugins)
	@command -v protoc >/dev/null || { echo "protoc missing: apt-get install -y protobuf-compiler"; exit 1; }
	@mkdir -p .run/protoc-bin
	GOBIN=$(CURDIR)/.run/protoc-bin $(GO) install $(PROTOC_GEN_GO)
	GOBIN=$(CURDIR)/.run/protoc-bin $(GO) install $(PROTOC_GEN_GO_GRPC)
	PATH=$(CURDIR)/.run/protoc-bin:$$PATH protoc \
		-I . \
		-I $$($(GO) list -m -f '{{.Dir}}' github.com/prometheus/client_model) \
		--go_out=. --go_opt=paths=source_relative \
		--go-grpc_out=. --go-grpc_opt=paths=source_relative \
		plugins/pluginpb/plugin.proto

.PHONY: bench-replication
bench-replication: ## KafkaReplicationSource vs MirrorMaker 2 vs a raw Go EOS loop (EOS, side by side; BENCH_ARGS for replbench flags)
	bench/replication/run.sh $(BENCH_ARGS)

.PHONY: bench-replication-cross
bench-replication-cross: ## connectd vs MirrorMaker 2 from cluster A to cluster B: throughput, exactly-once, checkpoint lag (BENCH_ARGS for replbench flags)
	bench/replication/run.sh -cross-cluster $(BENCH_ARGS)

.PHONY: bench-scale
bench-scale: ## N idle source connectors on one worker, connectd vs Kafka Connect 4.1.1: start time, RSS/PSS, threads, CPU, REST latency, restart, delete (BENCH_ARGS for scalebench flags)
	BENCH_ARGS= bench/scale/run.sh $(BENCH_ARGS)

# The chaos suite (test/chaos, build tag "chaos") starts its own Kafka broker
# in .run/chaos-broker because it restarts it. DURATION is how long faults are
# injected; SEED reproduces a schedule (0 = from the clock, printed).
# EXCLUDE lists fault kinds to leave out, e.g. the worker faults for a soak
# whose worker processes live throughout:
# EXCLUDE=worker-sigkill,worker-sigkill-restart,worker-sigstop,worker-add
DURATION ?= 30m
SEED ?= 0
EXCLUDE ?=
CHAOS_DIR ?= .run/chaos/$(shell date +%Y%m%dT%H%M%S)

.PHONY: chaos
chaos: ## soak: faults for DURATION (default 30m) across the whole pipeline; SEED=n reproduces; report in CHAOS_DIR
	$(GO) test -tags chaos -count=1 -timeout 0 -run '^TestChaos$$' -v ./test/chaos/ \
		-args -chaos.soak -chaos.duration=$(DURATION) -chaos.seed=$(SEED) -chaos.dir=$(CHAOS_DIR) -chaos.exclude=$(EXCLUDE)

.PHONY: chaos-short
chaos-short: ## the short chaos run of `make test` (about a minute of faults, under 5 minutes)
	$(GO) test -tags chaos -count=1 -timeout 15m -run '^TestChaos$$' -v ./test/chaos/ -args -chaos.seed=$(SEED)

.PHONY: docs
docs: ## regenerate the docs' reference sections from the code (worker keys, connector keys, REST endpoints)
	$(GO) run ./internal/docgen

.PHONY: release
release: ## build static-where-possible linux/amd64 and linux/arm64 archives with SHA-256 checksums into dist/
	scripts/release.sh
