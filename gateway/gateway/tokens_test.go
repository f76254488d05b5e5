package gateway

import (
	"strings"
	"testing"

	"github.com/chemmy/chemmy/services/kit/auth"
)

func TestParseTokens(t *testing.T) {
	tests := []struct {
		name, yaml, wantErr string
	}{
		{"unknown role", `tokens: [{token: a, subject: s, role: admin}]`, `role "admin"`},
		{"service role", `tokens: [{token: a, subject: s, role: service}]`, `role "service"`},
		{"empty role", `tokens: [{token: a, subject: s}]`, `role ""`},
		{"empty token", `tokens: [{token: "", subject: s, role: player}]`, "empty token"},
		{"empty subject", `tokens: [{token: a, role: player}]`, "empty subject"},
		{"duplicate token", "tokens:\n- {token: a, subject: s, role: player}\n- {token: a, subject: t, role: auditor}", "duplicate token"},
		{"unknown key", `tokens: [{token: a, subject: s, role: player, roles: x}]`, "unknown field"},
		{"not yaml", "tokens: [", "yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseTokens([]byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "token: a") {
				t.Errorf("error leaks a token: %v", err)
			}
		})
	}

	toks, err := parseTokens([]byte(testTokens))
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := toks.lookup("tok-carol"); !ok || c != (auth.Caller{Subject: "carol", Role: auth.RoleCroupier}) {
		t.Errorf("lookup(tok-carol) = %v, %v", c, ok)
	}
	if _, ok := toks.lookup("tok-caro"); ok {
		t.Error("prefix of a token matched")
	}
	if _, err := loadTokens(writeFile(t, testTokens)); err != nil {
		t.Fatal(err)
	}
}

func FuzzParseTokens(f *testing.F) {
	f.Add([]byte(testTokens))
	f.Add([]byte(`tokens: [{token: a, subject: s, role: player}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		toks, err := parseTokens(data)
		if err != nil {
			return
		}
		for _, c := range toks {
			if c.Subject == "" || !assignable(c.Role) {
				t.Fatalf("accepted invalid caller %+v", c)
			}
		}
	})
}
