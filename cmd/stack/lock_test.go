package stack

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneStackPerDataDir: a second stack on a data directory in use fails
// before it touches the first's files (its certificates), and the
// directory is free again once the first stops.
func TestOneStackPerDataDir(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the stack")
	}
	dir := t.TempDir()
	c := Config{DataDir: dir, TokensFile: "../../deploy/local/tokens.yaml", Logger: slog.New(slog.DiscardHandler)}
	first, err := Start(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(filepath.Join(dir, "tls", "ca.crt"))
	if err != nil {
		t.Fatalf("the first stack's CA: %v", err)
	}
	if _, err := Start(context.Background(), c); err == nil || !strings.Contains(err.Error(), "in use by another chemmy") {
		t.Errorf("a second stack on the same data directory: %v", err)
	}
	if now, err := os.ReadFile(filepath.Join(dir, "tls", "ca.crt")); err != nil || string(now) != string(ca) {
		t.Errorf("the second stack changed the first's CA (err %v)", err)
	}
	first.Stop()
	if err := first.Wait(); err != nil {
		t.Fatal(err)
	}
	again, err := Start(context.Background(), c)
	if err != nil {
		t.Fatalf("the data directory is not free after Stop: %v", err)
	}
	again.Stop()
	_ = again.Wait()
}
