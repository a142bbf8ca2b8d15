package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The subset of OpenAPI 3 the REST document uses.
type openAPI struct {
	Paths      orderedPaths `json:"paths"`
	Components struct {
		Schemas map[string]*schema `json:"schemas"`
	} `json:"components"`
}

type pathItem struct {
	Parameters []parameter `json:"parameters"`
	Get        *operation  `json:"get"`
	Post       *operation  `json:"post"`
	Put        *operation  `json:"put"`
	Patch      *operation  `json:"patch"`
	Delete     *operation  `json:"delete"`
}

type operation struct {
	OperationID string               `json:"operationId"`
	Summary     string               `json:"summary"`
	Description string               `json:"description"`
	Parameters  []parameter          `json:"parameters"`
	RequestBody *requestBody         `json:"requestBody"`
	Responses   map[string]*response `json:"responses"`
}

type parameter struct {
	Name        string  `json:"name"`
	In          string  `json:"in"`
	Required    bool    `json:"required"`
	Description string  `json:"description"`
	Schema      *schema `json:"schema"`
}

type requestBody struct {
	Required bool                 `json:"required"`
	Content  map[string]mediaType `json:"content"`
}

type mediaType struct {
	Schema *schema `json:"schema"`
}

type response struct {
	Description string               `json:"description"`
	Content     map[string]mediaType `json:"content"`
}

type schema struct {
	Ref                  string             `json:"$ref"`
	Type                 typeList           `json:"type"`
	Format               string             `json:"format"`
	Description          string             `json:"description"`
	Enum                 []any              `json:"enum"`
	Items                *schema            `json:"items"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
	OneOf                []*schema          `json:"oneOf"`
	Nullable             bool               `json:"nullable"`
	propOrder            []string
}

// typeList is a schema's type: one name, or (OpenAPI 3.1) a list such as
// ["object", "null"].
type typeList []string

func (t *typeList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*t = typeList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("schema type: want a string or a list of strings: %w", err)
	}
	*t = many
	return nil
}

func (t typeList) is(name string) bool { return len(t) == 1 && t[0] == name }

func (t typeList) String() string { return strings.Join(t, " or ") }

// orderedPaths keeps the document's path order (the endpoint catalogue is
// written in a meaningful order).
type orderedPaths struct {
	keys  []string
	items map[string]*pathItem
}

func (o *orderedPaths) UnmarshalJSON(b []byte) error {
	keys, err := objectKeys(b)
	if err != nil {
		return err
	}
	o.keys = keys
	return json.Unmarshal(b, &o.items)
}

func (s *schema) UnmarshalJSON(b []byte) error {
	type plain schema
	if err := json.Unmarshal(b, (*plain)(s)); err != nil {
		return err
	}
	var raw struct {
		Properties json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if len(raw.Properties) > 0 {
		keys, err := objectKeys(raw.Properties)
		if err != nil {
			return err
		}
		s.propOrder = keys
	}
	return nil
}

// objectKeys returns the keys of a JSON object in document order.
func objectKeys(b []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("want a JSON object")
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// openAPIMarkdown renders the endpoint catalogue and the schemas.
func openAPIMarkdown(doc []byte) (string, error) {
	var api openAPI
	if err := json.Unmarshal(doc, &api); err != nil {
		return "", fmt.Errorf("openapi.json: %w", err)
	}
	var b strings.Builder
	b.WriteString("### Endpoints\n\n")
	b.WriteString("| Method | Path | What it does | Parameters | Body | Success | Errors |\n|---|---|---|---|---|---|---|\n")
	for _, path := range api.Paths.keys {
		item := api.Paths.items[path]
		for _, m := range []struct {
			name string
			op   *operation
		}{{"GET", item.Get}, {"POST", item.Post}, {"PUT", item.Put}, {"PATCH", item.Patch}, {"DELETE", item.Delete}} {
			if m.op == nil {
				continue
			}
			op := m.op
			var params []string
			for _, p := range append(slices.Clone(item.Parameters), op.Parameters...) {
				if p.In == "path" {
					continue
				}
				params = append(params, "`"+p.Name+"`"+paramType(p))
			}
			body := ""
			if op.RequestBody != nil {
				for _, mt := range op.RequestBody.Content {
					body = schemaName(mt.Schema)
				}
			}
			var ok, failed []string
			for _, code := range sortedKeys(op.Responses) {
				r := op.Responses[code]
				if strings.HasPrefix(code, "2") || strings.HasPrefix(code, "3") {
					s := code
					for _, mt := range r.Content {
						if n := schemaName(mt.Schema); n != "" {
							s += " " + n
						}
					}
					ok = append(ok, s)
				} else {
					failed = append(failed, code)
				}
			}
			fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s | %s | %s |\n", m.name, path, cell(op.Summary),
				strings.Join(params, ", "), body, strings.Join(ok, ", "), strings.Join(failed, ", "))
		}
	}
	b.WriteString("\nErrors are `{\"error_code\": <HTTP status>, \"message\": \"...\"}` (`ErrorMessage`).\n\n### Schemas\n")
	for _, name := range sortedKeys(api.Components.Schemas) {
		s := api.Components.Schemas[name]
		fmt.Fprintf(&b, "\n#### %s\n\n", name)
		if s.Description != "" {
			b.WriteString(cell(s.Description) + "\n\n")
		}
		if len(s.propOrder) == 0 {
			fmt.Fprintf(&b, "%s\n", typeOf(s))
			continue
		}
		b.WriteString("| Field | Type | Required | Description |\n|---|---|---|---|\n")
		for _, p := range s.propOrder {
			ps := s.Properties[p]
			req := ""
			if slices.Contains(s.Required, p) {
				req = "yes"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", p, typeOf(ps), req, cell(ps.Description))
		}
	}
	return b.String(), nil
}

func paramType(p parameter) string {
	if p.Schema == nil {
		return ""
	}
	t := typeOf(p.Schema)
	if t == "" {
		return ""
	}
	return " (" + t + ")"
}

func schemaName(s *schema) string {
	if s == nil {
		return ""
	}
	if s.Ref != "" {
		return "`" + s.Ref[strings.LastIndexByte(s.Ref, '/')+1:] + "`"
	}
	return typeOf(s)
}

// typeOf renders a schema's type compactly.
func typeOf(s *schema) string {
	if s == nil {
		return ""
	}
	switch {
	case s.Ref != "":
		return "`" + s.Ref[strings.LastIndexByte(s.Ref, '/')+1:] + "`"
	case len(s.OneOf) > 0:
		var alts []string
		for _, o := range s.OneOf {
			alts = append(alts, typeOf(o))
		}
		return strings.Join(alts, " or ")
	case len(s.Enum) > 0:
		vals := make([]string, len(s.Enum))
		for i, v := range s.Enum {
			vals[i] = fmt.Sprint(v)
		}
		return s.Type.String() + " (" + strings.Join(vals, ", ") + ")"
	case s.Type.is("array"):
		return "array of " + typeOf(s.Items)
	case s.Type.is("object") && len(s.AdditionalProperties) > 0 && string(s.AdditionalProperties) != "true" && string(s.AdditionalProperties) != "false":
		var ap schema
		if err := json.Unmarshal(s.AdditionalProperties, &ap); err == nil {
			return "map of " + typeOf(&ap)
		}
		return "object"
	}
	t := s.Type.String()
	if s.Format != "" {
		t += " (" + s.Format + ")"
	}
	if s.Nullable {
		t += ", nullable"
	}
	return t
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func cell(s string) string {
	s = strings.NewReplacer("<", "&lt;", ">", "&gt;", "\n", " ").Replace(s)
	return strings.ReplaceAll(strings.TrimSpace(s), "|", `\|`)
}
