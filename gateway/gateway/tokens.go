package gateway

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/operators"
)

// tokenFile is the YAML layout of the token file:
//
//	tokens:
//	  - token: "s3cr3t-alice"
//	    subject: alice
//	    role: player
//	    operator: casino-a # optional: the gateway's default operator
type tokenFile struct {
	Tokens []tokenEntry `json:"tokens"`
}

type tokenEntry struct {
	Token    string `json:"token"`
	Subject  string `json:"subject"`
	Role     string `json:"role"`
	Operator string `json:"operator"`
}

// DefaultOperatorID is Config.DefaultOperator's default: the operator of
// token-file entries that name none and of the JWT issuer (the wallet's
// -operator-id default too).
const DefaultOperatorID = "operator"

// validOperatorID reports whether id is an operator id: 1 to 64 of
// a-z, 0-9, '.', '_' and '-'. ("*", every operator, is not one.)
func validOperatorID(id string) bool { return operators.ValidID(id) }

// tokens maps the SHA-256 of a bearer token to its caller. Keying by the
// digest keeps the lookup from comparing secrets byte by byte.
type tokens map[[sha256.Size]byte]auth.Caller

// assignable are the roles a token may carry; "service" is for chemmy's
// own services and never given out by the gateway.
func assignable(r auth.Role) bool {
	switch r {
	case auth.RolePlayer, auth.RoleCroupier, auth.RoleOperator, auth.RoleAuditor:
		return true
	}
	return false
}

// loadTokens reads and validates the token file at path; an entry that
// names no operator belongs to defaultOperator.
func loadTokens(path, defaultOperator string) (tokens, error) {
	if path == "" {
		return nil, errors.New("tokens: no token file given")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokens: %w", err)
	}
	t, err := parseTokens(data, defaultOperator)
	if err != nil {
		return nil, fmt.Errorf("tokens: %s: %w", path, err)
	}
	return t, nil
}

// parseTokens parses a token file; an entry that names no operator
// belongs to defaultOperator. Unknown keys, an empty token or subject, a
// role other than player, croupier, operator or auditor, an operator that
// is not an operator id (validOperatorID) or "*", "*" (every operator)
// for a role other than auditor, and a token listed twice are errors.
// Messages never contain a token.
func parseTokens(data []byte, defaultOperator string) (tokens, error) {
	var f tokenFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, err
	}
	t := make(tokens, len(f.Tokens))
	for i, e := range f.Tokens {
		switch {
		case e.Token == "":
			return nil, fmt.Errorf("entry %d: empty token", i+1)
		case e.Subject == "":
			return nil, fmt.Errorf("entry %d: empty subject", i+1)
		case !assignable(auth.Role(e.Role)):
			return nil, fmt.Errorf("entry %d (subject %q): role %q is not one of player, croupier, operator, auditor", i+1, e.Subject, e.Role)
		case e.Operator == auth.AllOperators && auth.Role(e.Role) != auth.RoleAuditor:
			return nil, fmt.Errorf("entry %d (subject %q): operator \"*\" (every operator) is for the role auditor only, not %s", i+1, e.Subject, e.Role)
		case e.Operator != "" && e.Operator != auth.AllOperators && !validOperatorID(e.Operator):
			return nil, fmt.Errorf("entry %d (subject %q): operator %q is not an operator id (1 to 64 of a-z, 0-9, '.', '_', '-') or \"*\"", i+1, e.Subject, e.Operator)
		}
		op := e.Operator
		if op == "" {
			op = defaultOperator
		}
		k := sha256.Sum256([]byte(e.Token))
		if prev, dup := t[k]; dup {
			return nil, fmt.Errorf("entry %d (subject %q): duplicate token (also given to subject %q)", i+1, e.Subject, prev.Subject)
		}
		t[k] = auth.Caller{Subject: e.Subject, Role: auth.Role(e.Role), Operator: op}
	}
	return t, nil
}

// lookup returns the caller of token.
func (t tokens) lookup(token string) (auth.Caller, bool) {
	c, ok := t[sha256.Sum256([]byte(token))]
	return c, ok
}
