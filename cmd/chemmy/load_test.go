package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
)

// TestLoad runs `chemmy load` briefly against a real stack: tables play
// coups and the report counts them.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the stack")
	}
	st, err := stack.Start(context.Background(), stack.Config{DataDir: t.TempDir(), TokensFile: "../../deploy/local/tokens.yaml", Limits: gateway.LimitConfig{Rate: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { st.Stop(); _ = st.Wait() }()
	var out, errOut bytes.Buffer
	code := loadMain([]string{"-gateway", st.GatewayAddr, "-tables", "2", "-duration", "2s"}, &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), "coups settled") || strings.Contains(out.String(), " 0 coups settled") ||
		!strings.Contains(out.String(), "tables given up: 0") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	t.Log(out.String())
	if code := loadMain([]string{"-tables", "0"}, &out, &errOut); code != 2 {
		t.Errorf("-tables 0: exit %d, want 2", code)
	}
	if code := loadMain([]string{"-max-attempts", "0"}, &out, &errOut); code != 2 {
		t.Errorf("-max-attempts 0: exit %d, want 2", code)
	}
}
