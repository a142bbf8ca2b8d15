package configprovider

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/connectd/connectd/framework/properties"
)

// Provider looks up one value. path is empty for providers that take none
// (env).
type Provider interface {
	Get(path, key string) (string, error)
}

// ErrNotFound is returned (wrapped) when a provider has no value for a key.
var ErrNotFound = errors.New("no such key")

// UnresolvedError reports the placeholders that could not be resolved,
// naming the configuration key each one appears in.
type UnresolvedError struct {
	Problems []Problem
}

// Problem is one unresolved placeholder.
type Problem struct {
	ConfigKey   string // the configuration key whose value holds the placeholder
	Placeholder string // e.g. ${file:/etc/secrets.properties:password}
	Err         error
}

func (e *UnresolvedError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = fmt.Sprintf("%s: %s: %v", p.ConfigKey, p.Placeholder, p.Err)
	}
	return "cannot resolve config placeholders: " + strings.Join(parts, "; ")
}

// Resolver resolves placeholders with a fixed set of providers.
type Resolver struct {
	providers map[string]Provider
}

// NewResolver returns a resolver with the given providers by name.
func NewResolver(providers map[string]Provider) *Resolver {
	return &Resolver{providers: providers}
}

// Default returns the resolver with the env and file providers.
func Default() *Resolver {
	return NewResolver(map[string]Provider{"env": Env{}, "file": File{}})
}

// ${provider:path:key} or ${provider:key}; Kafka's pattern, with the path
// allowed to contain ':' only before the last colon.
var placeholder = regexp.MustCompile(`\$\{([^}:]+):(?:([^}]*):)?([^}:]*)\}`)

// HasPlaceholders reports whether any value contains a placeholder for a
// known provider.
func (r *Resolver) HasPlaceholders(props map[string]string) bool {
	for _, v := range props {
		for _, m := range placeholder.FindAllStringSubmatch(v, -1) {
			if _, ok := r.providers[m[1]]; ok {
				return true
			}
		}
	}
	return false
}

// Resolve returns a copy of props with every placeholder of a known provider
// replaced by its value. Placeholders naming unknown providers are left as
// they are, as Kafka does. All failures are reported together.
func (r *Resolver) Resolve(props map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(props))
	var problems []Problem
	for k, v := range props {
		resolved := placeholder.ReplaceAllStringFunc(v, func(ph string) string {
			m := placeholder.FindStringSubmatch(ph)
			p, ok := r.providers[m[1]]
			if !ok {
				return ph
			}
			val, err := p.Get(m[2], m[3])
			if err != nil {
				problems = append(problems, Problem{ConfigKey: k, Placeholder: ph, Err: err})
				return ph
			}
			return val
		})
		out[k] = resolved
	}
	if len(problems) > 0 {
		sort.Slice(problems, func(i, j int) bool { return problems[i].ConfigKey < problems[j].ConfigKey })
		return nil, &UnresolvedError{Problems: problems}
	}
	return out, nil
}

// Env reads environment variables: ${env:VAR}.
type Env struct{}

// Get returns the variable key; path must be empty.
func (Env) Get(path, key string) (string, error) {
	if path != "" {
		return "", fmt.Errorf("the env provider takes no path (use ${env:VAR}), got path %q", path)
	}
	v, ok := os.LookupEnv(key)
	if !ok {
		return "", fmt.Errorf("environment variable %s: %w", key, ErrNotFound)
	}
	return v, nil
}

// File reads a key of a Java properties file: ${file:path:key}. The file is
// read at every lookup, so rotated secrets are picked up when a task
// restarts.
type File struct{}

// Get returns key from the properties file at path.
func (File) Get(path, key string) (string, error) {
	if path == "" {
		return "", errors.New("the file provider needs a path: ${file:/path/to/file.properties:key}")
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("file provider: %w", err)
	}
	defer f.Close()
	props, err := properties.Parse(f)
	if err != nil {
		return "", fmt.Errorf("file provider: %s: %w", path, err)
	}
	v, ok := props[key]
	if !ok {
		return "", fmt.Errorf("key %q in %s: %w", key, path, ErrNotFound)
	}
	return v, nil
}
