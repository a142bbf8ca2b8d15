package rest

import _ "embed"

// openAPIDocument is served at GET /openapi.json. It is written by hand;
// TestOpenAPIMatchesRoutes keeps it and the route table in step.
//
//go:embed openapi.json
var openAPIDocument []byte

// OpenAPI returns the OpenAPI 3 document of the API.
func OpenAPI() []byte { return append([]byte(nil), openAPIDocument...) }
