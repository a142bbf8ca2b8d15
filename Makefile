# Pinned code generators; protoc itself comes from Debian (apt-get install -y protobuf-compiler).
PROTOC_GEN_GO      := google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
PROTOC_GEN_GO_GRPC := google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1

.PHONY: generate plugins

# generate regenerates the plugin protocol's Go code from plugins/pluginpb/*.proto.
generate:
	@command -v protoc >/dev/null || { echo "protoc missing: apt-get install -y protobuf-compiler"; exit 1; }
	@mkdir -p .run/protoc-bin
	GOBIN=$(CURDIR)/.run/protoc-bin go install $(PROTOC_GEN_GO)
	GOBIN=$(CURDIR)/.run/protoc-bin go install $(PROTOC_GEN_GO_GRPC)
	PATH=$(CURDIR)/.run/protoc-bin:$$PATH protoc \
		-I . \
		-I $$(go list -m -f '{{.Dir}}' github.com/prometheus/client_model) \
		--go_out=. --go_opt=paths=source_relative \
		--go-grpc_out=. --go-grpc_opt=paths=source_relative \
		plugins/pluginpb/plugin.proto

# plugins builds every connector main (connectors/*/cmd/*) into bin/plugins/.
plugins:
	@mkdir -p bin/plugins
	@for d in connectors/*/cmd/*/; do \
		[ -f "$$d/main.go" ] || continue; \
		echo "go build -o bin/plugins/$$(basename $$d) ./$$d"; \
		go build -o bin/plugins/$$(basename $$d) ./$$d || exit 1; \
	done
