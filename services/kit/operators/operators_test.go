package operators

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/chemmy/chemmy/services/kit/currency"
)

const example = `
operators:
  - id: casino-a
    jwt:
      issuer: https://idp.casino-a.example/
      jwks_url: https://idp.casino-a.example/jwks.json
      audience: chemmy-a
    wallet:
      url: https://wallet.casino-a.example/chemmy
      secret_files: [/run/secrets/a/current, /run/secrets/a/previous]
      ca_file: /etc/chemmy/a-ca.pem
    currencies: [EUR, CHIPS]
  - id: casino_b.2
    jwt:
      issuer: b-issuer
      jwks_file: /etc/chemmy/b-jwks.json
  - id: operator
`

// TestParse: every field of a full file is read as written.
func TestParse(t *testing.T) {
	f, err := Parse([]byte(example))
	if err != nil {
		t.Fatal(err)
	}
	want := &File{Operators: []Operator{
		{
			ID:         "casino-a",
			JWT:        &JWT{Issuer: "https://idp.casino-a.example/", JWKSURL: "https://idp.casino-a.example/jwks.json", Audience: "chemmy-a"},
			Wallet:     &Wallet{URL: "https://wallet.casino-a.example/chemmy", SecretFiles: []string{"/run/secrets/a/current", "/run/secrets/a/previous"}, CAFile: "/etc/chemmy/a-ca.pem"},
			Currencies: []string{"EUR", "CHIPS"},
		},
		{ID: "casino_b.2", JWT: &JWT{Issuer: "b-issuer", JWKSFile: "/etc/chemmy/b-jwks.json"}},
		{ID: "operator"},
	}}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("got %+v\nwant %+v", f, want)
	}
	if f.Operators[0].JWT.JWKS() != "https://idp.casino-a.example/jwks.json" || f.Operators[1].JWT.JWKS() != "/etc/chemmy/b-jwks.json" {
		t.Fatalf("JWKS: %q %q", f.Operators[0].JWT.JWKS(), f.Operators[1].JWT.JWKS())
	}
	if o, ok := f.Operator("casino_b.2"); !ok || o.JWT.Issuer != "b-issuer" {
		t.Fatalf("Operator(casino_b.2): %+v %v", o, ok)
	}
	if _, ok := f.Operator("nobody"); ok {
		t.Fatal("Operator(nobody) found")
	}
}

// TestParseRefuses: each bad file is refused with a message naming the
// entry and the fault.
func TestParseRefuses(t *testing.T) {
	for name, c := range map[string]struct{ file, want string }{
		"unknown top key":     {"operators: [{id: a}]\nextra: 1\n", `unknown field "extra"`},
		"unknown entry key":   {"operators: [{id: a, colour: red}]\n", `unknown field "colour"`},
		"unknown jwt key":     {"operators: [{id: a, jwt: {issuer: i, jwks_file: f, kid: x}}]\n", `unknown field "kid"`},
		"unknown wallet key":  {"operators: [{id: a, wallet: {url: 'https://w', secret_files: [s], secret: x}}]\n", `unknown field "secret"`},
		"repeated key":        {"operators: [{id: a, id: b}]\n", `"id" already set`},
		"empty":               {"operators: []\n", "lists no operators"},
		"nothing":             {"", "lists no operators"},
		"no id":               {"operators: [{jwt: {issuer: i, jwks_file: f}}]\n", `operator 1: id "" is not an operator id`},
		"bad id":              {"operators: [{id: a}, {id: Casino}]\n", `operator 2 ("Casino"): id "Casino" is not an operator id`},
		"star id":             {"operators: [{id: '*'}]\n", `id "*" is not an operator id`},
		"long id":             {"operators: [{id: " + strings.Repeat("a", 65) + "}]\n", "is not an operator id"},
		"duplicate id":        {"operators: [{id: a}, {id: b}, {id: a}]\n", `operator 3 ("a"): id listed twice (also operator 1)`},
		"no issuer":           {"operators: [{id: a, jwt: {jwks_file: f}}]\n", `operator 1 ("a"): jwt: no issuer`},
		"no jwks":             {"operators: [{id: a, jwt: {issuer: i}}]\n", `operator 1 ("a"): jwt: give jwks_url or jwks_file`},
		"both jwks":           {"operators: [{id: a, jwt: {issuer: i, jwks_file: f, jwks_url: 'https://x/j'}}]\n", "not both"},
		"jwks not http":       {"operators: [{id: a, jwt: {issuer: i, jwks_url: 'ftp://x/j'}}]\n", `jwks_url "ftp://x/j" is not an http(s) URL`},
		"duplicate issuer":    {"operators: [{id: a, jwt: {issuer: i, jwks_file: f}}, {id: b, jwt: {issuer: i, jwks_file: g}}]\n", `operator 2 ("b"): jwt: issuer "i" is operator "a"'s too`},
		"wallet no url":       {"operators: [{id: a, wallet: {secret_files: [s]}}]\n", `operator 1 ("a"): wallet: no url`},
		"wallet bad url":      {"operators: [{id: a, wallet: {url: 'wallet.example', secret_files: [s]}}]\n", "is not an http(s) URL"},
		"wallet query":        {"operators: [{id: a, wallet: {url: 'https://w/x?y=1', secret_files: [s]}}]\n", "has a query or a fragment"},
		"wallet no secret":    {"operators: [{id: a, wallet: {url: 'https://w'}}]\n", "secret_files: 0 files, want 1 or 2"},
		"wallet 3 secrets":    {"operators: [{id: a, wallet: {url: 'https://w', secret_files: [s, t, u]}}]\n", "secret_files: 3 files, want 1 or 2"},
		"wallet same secret":  {"operators: [{id: a, wallet: {url: 'https://w', secret_files: [s, s]}}]\n", "secret_files: s listed twice"},
		"wallet empty secret": {"operators: [{id: a, wallet: {url: 'https://w', secret_files: [s, '']}}]\n", "an empty file name"},
		"bad currency":        {"operators: [{id: a, currencies: [eur]}]\n", `operator 1 ("a"): currency "eur": want 3 to 12 of A-Z, 0-9`},
		"duplicate currency":  {"operators: [{id: a, currencies: [EUR, EUR]}]\n", "currency EUR listed twice"},
		"not yaml":            {"operators: [\n", "yaml"},
	} {
		_, err := Parse([]byte(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, c.want)
		}
	}
}

// TestLoad: Load names the file in its errors.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.yaml"), filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte(example), 0o600)
	os.WriteFile(bad, []byte("operators: [{id: a}, {id: a}]\n"), 0o600)
	if f, err := Load(good); err != nil || len(f.Operators) != 3 {
		t.Fatalf("good: %v %v", f, err)
	}
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), bad+": operator 2") {
		t.Fatalf("bad: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "none.yaml")); err == nil {
		t.Fatal("a missing file loaded")
	}
}

// TestReadSecrets: the current secret first, trimmed; an empty or missing
// file is an error.
func TestReadSecrets(t *testing.T) {
	dir := t.TempDir()
	cur, prev, empty := filepath.Join(dir, "cur"), filepath.Join(dir, "prev"), filepath.Join(dir, "empty")
	os.WriteFile(cur, []byte("new-secret\n"), 0o600)
	os.WriteFile(prev, []byte("  old-secret "), 0o600)
	os.WriteFile(empty, []byte("\n"), 0o600)
	got, err := Wallet{URL: "https://w", SecretFiles: []string{cur, prev}}.ReadSecrets()
	if err != nil || len(got) != 2 || string(got[0]) != "new-secret" || string(got[1]) != "old-secret" {
		t.Fatalf("%q %v", got, err)
	}
	if _, err := (Wallet{SecretFiles: []string{cur, empty}}).ReadSecrets(); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Fatalf("empty: %v", err)
	}
	if _, err := (Wallet{SecretFiles: []string{filepath.Join(dir, "none")}}).ReadSecrets(); err == nil {
		t.Fatal("a missing secret file read")
	}
}

// TestCheckCurrencies: ISO codes and the deployment's configured ones
// pass; another code is refused naming its operator.
func TestCheckCurrencies(t *testing.T) {
	set, err := currency.ParseSet("CHIPS:0")
	if err != nil {
		t.Fatal(err)
	}
	f, _ := Parse([]byte("operators: [{id: a, currencies: [EUR, CHIPS]}, {id: b, currencies: [JPY]}]\n"))
	if err := f.CheckCurrencies(set); err != nil {
		t.Fatal(err)
	}
	f, _ = Parse([]byte("operators: [{id: a, currencies: [EUR]}, {id: b, currencies: [GOLD]}]\n"))
	if err := f.CheckCurrencies(set); err == nil || !strings.Contains(err.Error(), `operator "b": currency GOLD`) {
		t.Fatalf("GOLD: %v", err)
	}
}

// TestExampleFile: the example of docs/operators.md
// (examples/operators.yaml) parses, with its two operators.
func TestExampleFile(t *testing.T) {
	f, err := Load(filepath.Join("..", "..", "..", "examples", "operators.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Operators) != 2 || f.Operators[0].ID != "operator" || f.Operators[1].Wallet == nil || len(f.Operators[1].Wallet.SecretFiles) != 2 {
		t.Fatalf("%+v", f)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "operators.md"))
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "operators.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(example), "\n") // its first line is a comment
	if !strings.Contains(string(doc), "```yaml\n"+body+"```") {
		t.Fatal("docs/operators.md does not show examples/operators.yaml")
	}
}
