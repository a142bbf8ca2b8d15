module github.com/connectd/connectd

go 1.26.8

require (
	github.com/aerospike/aerospike-client-go/v7 v7.10.2
	github.com/confluentinc/confluent-kafka-go/v2 v2.11.1
)

require (
	github.com/go-logr/logr v1.4.2 // indirect
	github.com/klauspost/compress v1.20.1 // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	github.com/yuin/gopher-lua v1.1.1 // indirect
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/net v0.59.0 // indirect
	golang.org/x/oauth2 v0.37.0 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20240711142825-46eb208f015d // indirect
	google.golang.org/grpc v1.64.1 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
