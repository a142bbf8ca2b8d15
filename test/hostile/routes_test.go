package hostile

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/connectd/connectd/internal/repo"
)

// route is one entry of framework/rest's route table.
type route struct {
	method, pattern string
	internal        bool // needs an inter-worker signature
}

// routeTable reads the route table from framework/rest/router.go's source:
// every composite literal with a method and a pattern field. Reading the
// source (the package keeps the table unexported) makes a new endpoint part
// of the fuzzer's input as soon as it is routed.
func routeTable(t testing.TB) []route {
	t.Helper()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, "framework", "rest", "router.go"), nil, 0)
	if err != nil {
		t.Fatalf("route table: %v", err)
	}
	var out []route
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		var r route
		for _, e := range lit.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			key, ok := kv.Key.(*ast.Ident)
			if !ok {
				continue
			}
			switch val := kv.Value.(type) {
			case *ast.BasicLit:
				s, err := strconv.Unquote(val.Value)
				if err != nil {
					continue
				}
				switch key.Name {
				case "method":
					r.method = s
				case "pattern":
					r.pattern = s
				}
			case *ast.Ident:
				if key.Name == "internal" && val.Name == "true" {
					r.internal = true
				}
			}
		}
		if r.method != "" && r.pattern != "" {
			out = append(out, r)
		}
		return true
	})
	// The table has had over thirty routes since the first release; far
	// fewer means the parsing above no longer understands router.go.
	if len(out) < 30 {
		t.Fatalf("route table: found only %d routes in router.go: %v", len(out), out)
	}
	return out
}
