package gateway

import (
	"log/slog"
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
		{"every operator for staff", `tokens: [{token: a, subject: olga, role: operator, operator: "*"}]`, `(subject "olga"): operator "*" (every operator) is for the role auditor only`},
		{"every operator for a player", `tokens: [{token: a, subject: bob, role: player, operator: "*"}]`, `(subject "bob"): operator "*"`},
		{"operator in capitals", `tokens: [{token: a, subject: s, role: player, operator: Casino}]`, `(subject "s"): operator "Casino" is not an operator id`},
		{"operator too long", `tokens: [{token: a, subject: s, role: player, operator: ` + strings.Repeat("x", 65) + `}]`, "is not an operator id"},
		{"operator with a slash", `tokens: [{token: a, subject: s, role: player, operator: "a/b"}]`, "is not an operator id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseTokens([]byte(tt.yaml), DefaultOperatorID)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "token: a") {
				t.Errorf("error leaks a token: %v", err)
			}
		})
	}

	toks, err := parseTokens([]byte(testTokens), DefaultOperatorID)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := toks.lookup("tok-carol"); !ok || c != (auth.Caller{Subject: "carol", Role: auth.RoleCroupier, Operator: DefaultOperatorID}) {
		t.Errorf("lookup(tok-carol) = %v, %v", c, ok)
	}
	if _, ok := toks.lookup("tok-caro"); ok {
		t.Error("prefix of a token matched")
	}
	if _, err := loadTokens(writeFile(t, testTokens), DefaultOperatorID); err != nil {
		t.Fatal(err)
	}
}

// TestTokenOperators: an entry's operator is its own, or else the
// default operator; "*" (every operator) is an auditor's only.
func TestTokenOperators(t *testing.T) {
	toks, err := parseTokens([]byte(`
tokens:
  - {token: t-a, subject: alice, role: player, operator: casino-a}
  - {token: t-b, subject: bob, role: player}
  - {token: t-ceo, subject: ceo, role: auditor, operator: "*"}
  - {token: t-aud, subject: aud, role: auditor, operator: lux.casino_2-b}
`), "house")
	if err != nil {
		t.Fatal(err)
	}
	for tok, want := range map[string]auth.Caller{
		"t-a":   {Subject: "alice", Role: auth.RolePlayer, Operator: "casino-a"},
		"t-b":   {Subject: "bob", Role: auth.RolePlayer, Operator: "house"},
		"t-ceo": {Subject: "ceo", Role: auth.RoleAuditor, Operator: auth.AllOperators},
		"t-aud": {Subject: "aud", Role: auth.RoleAuditor, Operator: "lux.casino_2-b"},
	} {
		if c, ok := toks.lookup(tok); !ok || c != want {
			t.Errorf("lookup(%s) = %v, %v, want %v", tok, c, ok, want)
		}
	}
}

// TestDefaultOperatorChecked: a gateway refuses to start with a default
// operator that is not an operator id (or "*"), and its token entries
// without an operator reach the backends as its default operator's.
func TestDefaultOperatorChecked(t *testing.T) {
	for _, bad := range []string{"*", "Casino", "a b", strings.Repeat("x", 65)} {
		_, err := newIdentities(Config{TokensFile: writeFile(t, testTokens), DefaultOperator: bad}, slog.New(slog.DiscardHandler), nil)
		if err == nil || !strings.Contains(err.Error(), "-default-operator") {
			t.Errorf("default operator %q: %v", bad, err)
		}
	}
	for def, want := range map[string]string{"": DefaultOperatorID, "casino-a": "casino-a"} {
		id, err := newIdentities(Config{TokensFile: writeFile(t, testTokens), DefaultOperator: def}, slog.New(slog.DiscardHandler), nil)
		if err != nil {
			t.Fatal(err)
		}
		if c, err := id.lookup("tok-olga"); err != nil || c.Operator != want {
			t.Errorf("default operator %q: olga = %v, %v, want operator %q", def, c, err, want)
		}
	}
}

func FuzzParseTokens(f *testing.F) {
	f.Add([]byte(testTokens))
	f.Add([]byte(`tokens: [{token: a, subject: s, role: player}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		toks, err := parseTokens(data, DefaultOperatorID)
		if err != nil {
			return
		}
		for _, c := range toks {
			if c.Subject == "" || !assignable(c.Role) || (c.Operator == auth.AllOperators && c.Role != auth.RoleAuditor) ||
				(c.Operator != auth.AllOperators && !validOperatorID(c.Operator)) {
				t.Fatalf("accepted invalid caller %+v", c)
			}
		}
	})
}
