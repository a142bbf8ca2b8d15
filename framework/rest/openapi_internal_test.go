package rest

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
)

// TestOpenAPIMatchesRoutes: every documented path/method is routed and
// every route is documented, with the same operationId (which is also the
// metrics handler label), and path parameters are declared.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi = %q", doc.OpenAPI)
	}
	documented := map[string]string{}
	for path, item := range doc.Paths {
		var pathParams []struct{ Name, In string }
		if raw, ok := item["parameters"]; ok {
			json.Unmarshal(raw, &pathParams)
		}
		for method, raw := range item {
			if method == "parameters" {
				continue
			}
			var op struct {
				OperationID string `json:"operationId"`
				Parameters  []struct{ Name, In string }
				Responses   map[string]json.RawMessage
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			if len(op.Responses) == 0 {
				t.Errorf("%s %s documents no responses", method, path)
			}
			for _, seg := range strings.Split(path, "/") {
				if !strings.HasPrefix(seg, "{") {
					continue
				}
				name := strings.Trim(seg, "{}")
				found := false
				for _, p := range append(pathParams, op.Parameters...) {
					found = found || (p.Name == name && p.In == "path")
				}
				if !found {
					t.Errorf("%s %s: path parameter %s not declared", method, path, name)
				}
			}
			documented[strings.ToUpper(method)+" "+path] = op.OperationID
		}
	}
	routed := map[string]string{}
	for _, r := range routes() {
		routed[r.method+" "+r.pattern] = r.op
	}
	for k, op := range routed {
		if d, ok := documented[k]; !ok {
			t.Errorf("route %s is not documented", k)
		} else if d != op {
			t.Errorf("route %s: operationId %q in the document, %q in the route table", k, d, op)
		}
	}
	for k := range documented {
		if _, ok := routed[k]; !ok {
			t.Errorf("documented %s is not routed", k)
		}
	}
	// Every documented method/path actually dispatches to its route.
	var keys []string
	for k := range documented {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		method, path, _ := strings.Cut(k, " ")
		concrete := strings.NewReplacer("{connector}", "c", "{task}", "0", "{plugin}", "p", "{logger}", "root").Replace(path)
		rt, _, _, _ := match(routes(), method, concrete)
		if rt == nil || rt.op != documented[k] {
			t.Errorf("%s %s does not dispatch to %s", method, concrete, documented[k])
		}
	}
	if len(routed) < 32 {
		t.Errorf("only %d routes", len(routed))
	}
}
