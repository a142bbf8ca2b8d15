package configprovider

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	secrets := filepath.Join(dir, "secrets.properties")
	if err := os.WriteFile(secrets, []byte("db.password=s3cr3t\nuser = alice\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CONNECTD_TEST_TOKEN", "tok")

	r := Default()
	in := map[string]string{
		"password":   "${file:" + secrets + ":db.password}",
		"dsn":        "user=${file:" + secrets + ":user};token=${env:CONNECTD_TEST_TOKEN}",
		"untouched":  "plain",
		"unknown":    "${vault:path:key}",
		"bootstrap":  "127.0.0.1:9092",
		"dollarOnly": "$notaplaceholder",
	}
	got, err := r.Resolve(in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"password":   "s3cr3t",
		"dsn":        "user=alice;token=tok",
		"untouched":  "plain",
		"unknown":    "${vault:path:key}",
		"bootstrap":  "127.0.0.1:9092",
		"dollarOnly": "$notaplaceholder",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if in["password"] == "s3cr3t" {
		t.Fatal("Resolve modified its input")
	}
	if !r.HasPlaceholders(in) || r.HasPlaceholders(want) {
		t.Fatal("HasPlaceholders is wrong")
	}
}

func TestResolveReportsEveryProblemByKey(t *testing.T) {
	r := Default()
	_, err := r.Resolve(map[string]string{
		"a": "${env:CONNECTD_DEFINITELY_UNSET_VAR}",
		"b": "${file:" + filepath.Join(t.TempDir(), "missing.properties") + ":k}",
		"c": "${env:some/path:VAR}",
	})
	var ue *UnresolvedError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v, want *UnresolvedError", err)
	}
	if len(ue.Problems) != 3 {
		t.Fatalf("problems = %v, want 3", ue.Problems)
	}
	for i, key := range []string{"a", "b", "c"} {
		if ue.Problems[i].ConfigKey != key {
			t.Errorf("problem %d names key %q, want %q", i, ue.Problems[i].ConfigKey, key)
		}
	}
	if !errors.Is(ue.Problems[0].Err, ErrNotFound) {
		t.Errorf("unset env var error %v does not wrap ErrNotFound", ue.Problems[0].Err)
	}
	if !strings.Contains(err.Error(), "CONNECTD_DEFINITELY_UNSET_VAR") {
		t.Errorf("message %q does not name the variable", err)
	}
}
