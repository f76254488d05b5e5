// Package operators reads the operators file: the operators (tenants,
// brands) a deployment serves and each one's configuration, per
// docs/operators.md:
//
//	operators:
//	  - id: casino-a                  # 1 to 64 of a-z, 0-9, '.', '_', '-'
//	    jwt:                          # optional: the operator's identity provider
//	      issuer: https://idp.casino-a.example/
//	      jwks_url: https://idp.casino-a.example/jwks.json  # or jwks_file: /path
//	      audience: chemmy            # optional: the gateway's -jwt-audience
//	    wallet:                       # optional: its seamless wallet
//	      url: https://wallet.casino-a.example/chemmy
//	      secret_files: [/run/secrets/casino-a/current, /run/secrets/casino-a/previous]
//	      ca_file: /etc/chemmy/casino-a-ca.pem  # optional
//	    currencies: [EUR, CHIPS]      # optional: a subset of the deployment's
//
// The gateway reads the ids and the jwt sections (-operators): a JWT's
// iss names its operator. wallet-svc reads the wallet sections (in
// seamless mode, each operator's own wallet; ReadSecrets) and the
// currencies (CheckCurrencies; an account in another is refused).
//
// Parsing is strict: an unknown key, a key given twice, an id or an
// issuer listed twice are errors, each naming the entry. A file that fails
// to parse is never half taken: the caller keeps the last good one.
package operators

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/chemmy/chemmy/services/kit/currency"
)

// File is an operators file.
type File struct {
	// Operators in the file's order; at least one, ids and JWT issuers
	// unique.
	Operators []Operator `json:"operators"`
}

// Operator is one operator's entry.
type Operator struct {
	// ID is the operator's id (ValidID), as auth.Caller.Operator and the
	// table record's operator_id carry it.
	ID string `json:"id"`
	// JWT is the operator's identity provider; nil: no JWT names this
	// operator (its callers come from the token file or launch sessions).
	JWT *JWT `json:"jwt,omitempty"`
	// Wallet is the operator's seamless wallet; nil: none. Read by
	// wallet-svc, not by the gateway.
	Wallet *Wallet `json:"wallet,omitempty"`
	// Currencies the operator's tables and accounts may be in: codes of
	// 3 to 12 of A-Z, 0-9, each once; a subset of the deployment's
	// (CheckCurrencies). Empty: every currency of the deployment. Read by
	// wallet-svc.
	Currencies []string `json:"currencies,omitempty"`
}

// JWT is an operator's identity provider: the JWTs it signs name the
// operator by their iss.
type JWT struct {
	// Issuer is the iss of the operator's JWTs; no two operators share
	// one. Required.
	Issuer string `json:"issuer"`
	// JWKSURL is the URL (http or https) of the provider's JSON Web Key
	// Set; JWKSFile a file holding it (offline use, tests). Exactly one.
	// Whether plain http is allowed is the reader's rule (the gateway:
	// loopback hosts only, or -insecure).
	JWKSURL  string `json:"jwks_url,omitempty"`
	JWKSFile string `json:"jwks_file,omitempty"`
	// Audience is an aud the operator's JWTs must carry; empty: the
	// gateway's -jwt-audience.
	Audience string `json:"audience,omitempty"`
}

// JWKS is where the key set is: JWKSURL or JWKSFile.
func (j JWT) JWKS() string {
	if j.JWKSURL != "" {
		return j.JWKSURL
	}
	return j.JWKSFile
}

// Wallet is an operator's seamless wallet (opwallet's HTTP protocol).
type Wallet struct {
	// URL is the wallet's base URL, http or https, no query nor
	// fragment. Required.
	URL string `json:"url"`
	// SecretFiles are the files holding the HMAC secrets shared with the
	// operator: the current one, then optionally the previous one, both
	// accepted on the operator's answers during a rotation (the current
	// one signs). One or two, distinct. Not read here (the gateway has no
	// business with them): ReadSecrets reads them.
	SecretFiles []string `json:"secret_files"`
	// CAFile is a PEM file of the CAs signing the wallet's https
	// certificate; empty: the system roots.
	CAFile string `json:"ca_file,omitempty"`
}

// ReadSecrets reads the wallet's secrets, the current one first, each
// file's contents with surrounding white space trimmed. Errors: a file
// that cannot be read or holds nothing.
func (w Wallet) ReadSecrets() ([][]byte, error) {
	out := make([][]byte, 0, len(w.SecretFiles))
	for _, f := range w.SecretFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("operators: wallet secret: %w", err)
		}
		s := strings.TrimSpace(string(b))
		if s == "" {
			return nil, fmt.Errorf("operators: wallet secret file %s is empty", f)
		}
		out = append(out, []byte(s))
	}
	return out, nil
}

// idPattern is what an operator id looks like.
var idPattern = regexp.MustCompile(`^[a-z0-9._-]{1,64}$`)

// ValidID reports whether id is an operator id: 1 to 64 of a-z, 0-9,
// '.', '_' and '-'. ("*", every operator, is not one.)
func ValidID(id string) bool { return idPattern.MatchString(id) }

// currencyPattern is a currency code's shape (currency.NewSet's).
var currencyPattern = regexp.MustCompile(`^[A-Z0-9]{3,12}$`)

// Load reads and validates the operators file at path (Parse).
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("operators: %w", err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("operators: %s: %w", path, err)
	}
	return f, nil
}

// Parse reads and validates an operators file. Errors name the entry
// (its position and id): an unknown or repeated key, no operators, an id
// that is not ValidID or is listed twice, a jwt without issuer, with
// neither or both of jwks_url and jwks_file, with a jwks_url that is not
// an http(s) URL, an issuer another operator has, a wallet without url or
// with a url that is not http(s) without query nor fragment, other than
// one or two distinct secret_files, a currency code that is not 3 to 12
// of A-Z, 0-9 or is listed twice.
func Parse(data []byte) (*File, error) {
	var f File
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, err
	}
	if len(f.Operators) == 0 {
		return nil, errors.New("lists no operators")
	}
	ids := map[string]int{}
	issuers := map[string]string{}
	for i, o := range f.Operators {
		name := fmt.Sprintf("operator %d", i+1)
		if o.ID != "" {
			name = fmt.Sprintf("operator %d (%q)", i+1, o.ID)
		}
		if !ValidID(o.ID) {
			return nil, fmt.Errorf("%s: id %q is not an operator id (1 to 64 of a-z, 0-9, '.', '_', '-')", name, o.ID)
		}
		if prev, dup := ids[o.ID]; dup {
			return nil, fmt.Errorf("%s: id listed twice (also operator %d)", name, prev)
		}
		ids[o.ID] = i + 1
		if err := o.JWT.check(); err != nil {
			return nil, fmt.Errorf("%s: jwt: %w", name, err)
		}
		if o.JWT != nil {
			if prev, dup := issuers[o.JWT.Issuer]; dup {
				return nil, fmt.Errorf("%s: jwt: issuer %q is operator %q's too (an issuer names one operator)", name, o.JWT.Issuer, prev)
			}
			issuers[o.JWT.Issuer] = o.ID
		}
		if err := o.Wallet.check(); err != nil {
			return nil, fmt.Errorf("%s: wallet: %w", name, err)
		}
		seen := map[string]bool{}
		for _, c := range o.Currencies {
			if !currencyPattern.MatchString(c) {
				return nil, fmt.Errorf("%s: currency %q: want 3 to 12 of A-Z, 0-9", name, c)
			}
			if seen[c] {
				return nil, fmt.Errorf("%s: currency %s listed twice", name, c)
			}
			seen[c] = true
		}
	}
	return &f, nil
}

func (j *JWT) check() error {
	switch {
	case j == nil:
		return nil
	case j.Issuer == "":
		return errors.New("no issuer")
	case j.JWKSURL == "" && j.JWKSFile == "":
		return errors.New("give jwks_url or jwks_file")
	case j.JWKSURL != "" && j.JWKSFile != "":
		return errors.New("give jwks_url or jwks_file, not both")
	case j.JWKSURL != "":
		u, err := url.Parse(j.JWKSURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("jwks_url %q is not an http(s) URL", j.JWKSURL)
		}
	}
	return nil
}

func (w *Wallet) check() error {
	if w == nil {
		return nil
	}
	u, err := url.Parse(w.URL)
	switch {
	case w.URL == "":
		return errors.New("no url")
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
		return fmt.Errorf("url %q is not an http(s) URL", w.URL)
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("url %q has a query or a fragment", w.URL)
	case len(w.SecretFiles) == 0 || len(w.SecretFiles) > 2:
		return fmt.Errorf("secret_files: %d files, want 1 or 2 (the current secret, then the previous one during a rotation)", len(w.SecretFiles))
	case w.SecretFiles[0] == "" || len(w.SecretFiles) == 2 && w.SecretFiles[1] == "":
		return errors.New("secret_files: an empty file name")
	case len(w.SecretFiles) == 2 && w.SecretFiles[0] == w.SecretFiles[1]:
		return fmt.Errorf("secret_files: %s listed twice", w.SecretFiles[0])
	}
	return nil
}

// Operator returns the entry of id, if listed.
func (f *File) Operator(id string) (Operator, bool) {
	for _, o := range f.Operators {
		if o.ID == id {
			return o, true
		}
	}
	return Operator{}, false
}

// CheckCurrencies reports the first operator currency the deployment's
// set does not accept (ISO 4217's and its configured ones), naming the
// operator.
func (f *File) CheckCurrencies(s currency.Set) error {
	for _, o := range f.Operators {
		for _, c := range o.Currencies {
			if _, ok := s.Exponent(c); !ok {
				return fmt.Errorf("operators: operator %q: currency %s is not one of the deployment's (an active ISO 4217 code or one of -currencies)", o.ID, c)
			}
		}
	}
	return nil
}
