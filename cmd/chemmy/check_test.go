package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	"github.com/chemmy/chemmy/services/kit/natsauth"
)

// TestCheck plays a little on a two-shard stack, then `chemmy check`
// finds it whole; asked for a third shard that does not exist, it fails
// and says which.
func TestCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the stack")
	}
	tokens := filepath.Join(t.TempDir(), "tokens.yaml")
	if code := loadMain([]string{"-write-tokens", tokens, "-write-tokens-from", "../../deploy/local/tokens.yaml",
		"-player-token", "%s-token", "-prefix", "ck", "-tables", "4"}, io.Discard, io.Discard); code != 0 {
		t.Fatalf("-write-tokens: exit %d", code)
	}
	st, err := stack.Start(context.Background(), stack.Config{DataDir: t.TempDir(), TokensFile: tokens, Shards: 2, Limits: gateway.LimitConfig{Rate: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { st.Stop(); _ = st.Wait() }()
	var out, errOut bytes.Buffer
	if code := loadMain([]string{"-gateway", st.GatewayAddr, "-tables", "4", "-duration", "2s", "-noop", "0",
		"-prefix", "ck", "-player-token", "%s-token"}, &out, &errOut); code != 0 {
		t.Fatalf("load: exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	base := []string{"-gateway", st.GatewayAddr, "-nats-url", st.NATSURL, "-nats-nkey", st.NATSKeys.SeedFile(natsauth.Reader)}
	out.Reset()
	if code := checkMain(append(base, "-shards", "2", "-timeout", "60s"), &out, &errOut); code != 0 {
		t.Fatalf("check: exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "check: ledger balanced, escrow ") || !strings.HasSuffix(last, "events in order, 2 shards serving") ||
		strings.Contains(last, " 0 events") {
		t.Errorf("last line %q", last)
	}
	if !strings.Contains(out.String(), "shard 0 (") || !strings.Contains(out.String(), "shard 1 (") {
		t.Errorf("shards:\n%s", out.String())
	}
	t.Log(out.String())
	out.Reset()
	if code := checkMain(append(base, "-shards", "3", "-timeout", "3s"), &out, &errOut); code != 1 ||
		!strings.Contains(out.String(), "no table of shard(s) 2 answered") {
		t.Errorf("a missing shard: exit %d\n%s", code, out.String())
	}
	if code := checkMain([]string{"-gateway", st.GatewayAddr}, io.Discard, io.Discard); code != 2 {
		t.Errorf("without -nats-url: exit %d, want 2", code)
	}
}
