package opwallet

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadSecret: the file wins over the environment, whitespace is
// trimmed, and an empty secret or a missing file is an error.
func TestReadSecret(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == SecretEnv {
				return v
			}
			return ""
		}
	}
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte("  from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadSecret(file, env("from-env")); err != nil || string(got) != "from-file" {
		t.Fatalf("file: %q, %v", got, err)
	}
	if got, err := ReadSecret("", env(" from-env \n")); err != nil || string(got) != "from-env" {
		t.Fatalf("env: %q, %v", got, err)
	}
	if _, err := ReadSecret("", env("  \n")); err == nil {
		t.Fatal("an empty secret was accepted")
	}
	if _, err := ReadSecret(filepath.Join(t.TempDir(), "missing"), env("from-env")); err == nil {
		t.Fatal("a missing file was accepted")
	}
}
