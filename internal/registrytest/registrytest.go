// Package registrytest connects tests to the real Schema Registry that
// scripts/registry.sh (make registry-up) runs: Apicurio Registry serving
// the Confluent-compatible API, which confluent-kafka-go's schemaregistry
// client and serde packages speak.
//
// The registry's URL comes from the SCHEMA_REGISTRY_URL environment
// variable or, when that is unset, from registry.env in $CONNECTD_RUN_DIR
// (default .run/ at the repository root), the file the script writes.
// Without a registry that answers, a test fails when CI=true and skips
// with instructions otherwise (internal/citest). Subject gives each test
// its own subjects and deletes them at cleanup, so tests share one
// registry without seeing each other's schemas.
//
// What this package must not do: start or stop the registry (the script
// owns its lifecycle), or be imported by non-test code.
package registrytest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/rest"

	"github.com/connectd/connectd/internal/citest"
	"github.com/connectd/connectd/internal/repo"
)

const envVar = "SCHEMA_REGISTRY_URL"

// URL returns the registry's base URL (…/apis/ccompat/v7), failing
// (CI=true) or skipping the test when no registry answers there.
func URL(t testing.TB) string {
	t.Helper()
	url, err := lookupURL()
	if err == nil {
		err = probe(url)
	}
	if err != nil {
		citest.Unavailable(t, "registrytest: no Schema Registry: %v; start one with `scripts/registry.sh up` (`make registry-up`) or set %s", err, envVar)
	}
	return url
}

func lookupURL() (string, error) {
	if v := os.Getenv(envVar); v != "" {
		return strings.TrimRight(v, "/"), nil
	}
	dir := os.Getenv("CONNECTD_RUN_DIR")
	if dir == "" {
		root, err := repo.Root()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, ".run")
	}
	path := filepath.Join(dir, "registry.env")
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("%s is unset and %s is missing", envVar, path)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), envVar+"="); ok && v != "" {
			return strings.TrimRight(v, "/"), nil
		}
	}
	return "", fmt.Errorf("%s has no %s line", path, envVar)
}

// probe asks the registry for its subjects: a process that merely holds
// the port (or a registry still starting) does not count as available.
func probe(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/subjects", nil)
	if err != nil {
		return fmt.Errorf("registry URL %q: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("registry %s unreachable: %w", url, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("registry %s answered GET /subjects with %s", url, resp.Status)
	}
	return nil
}

// Client returns a confluent-kafka-go schemaregistry client for the
// registry, closed at cleanup.
func Client(t testing.TB) schemaregistry.Client {
	t.Helper()
	c, err := schemaregistry.NewClient(schemaregistry.NewConfig(URL(t)))
	if err != nil {
		t.Fatalf("registrytest: client: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

var unsafeChars = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

// Subject returns a subject name unique to this test and run, ending in
// "-"+suffix, and deletes the subject (soft, then permanently, as the
// Confluent API requires) at cleanup. With suffix "value" the name is what
// the serializers' default TopicNameStrategy derives from the topic
// strings.TrimSuffix(subject, "-value").
func Subject(t testing.TB, suffix string) string {
	t.Helper()
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("registrytest: random: %v", err)
	}
	base := unsafeChars.ReplaceAllString(t.Name(), "_")
	if len(base) > 120 {
		base = base[:120]
	}
	name := "sr-" + base + "-" + hex.EncodeToString(b[:]) + "-" + suffix
	c := Client(t)
	t.Cleanup(func() {
		if err := deleteSubject(c, name); err != nil {
			t.Errorf("registrytest: delete subject %s: %v", name, err)
		}
	})
	return name
}

// deleteSubject removes a subject for good; one the test never registered
// is not an error.
func deleteSubject(c schemaregistry.Client, subject string) error {
	if _, err := c.DeleteSubject(subject, false); err != nil {
		if isNotFound(err) {
			return nil
		}
		return fmt.Errorf("soft delete: %w", err)
	}
	if _, err := c.DeleteSubject(subject, true); err != nil && !isNotFound(err) {
		return fmt.Errorf("permanent delete: %w", err)
	}
	return nil
}

// isNotFound reports a "not found" answer: the Confluent API's 404 and its
// 404xx error codes (40401 subject not found, 40402 version not found).
func isNotFound(err error) bool {
	var re *rest.Error
	if !errors.As(err, &re) {
		return false
	}
	return re.Code == http.StatusNotFound || re.Code/100 == http.StatusNotFound
}
