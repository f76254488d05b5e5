package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"

	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/operators"
)

// JWT claims an operator's identity provider puts in a caller's token
// (besides iss, aud, exp, nbf and sub).
const (
	// ClaimRole holds the caller's role: "player", "croupier", "operator"
	// or "auditor". Required.
	ClaimRole = "chemmy_role"
	// ClaimPlayerID holds a player's id at the tables; when absent a
	// player's id is the token's sub. Staff are always their sub.
	ClaimPlayerID = "chemmy_player_id"
	// ClaimOperator names the caller's operator (tenant). Optional: a
	// JWT's issuer names its operator (the operators file's entry of that
	// issuer; -jwks's issuer is the default operator's), and a JWT that
	// has the claim must name that one (else TOKEN_INVALID).
	ClaimOperator = "chemmy_operator"
)

// jwtLeeway is the clock skew tolerated on an operator JWT's exp and nbf.
const jwtLeeway = 30 * time.Second

// DefaultJWTMaxLifetime is Config.JWTMaxLifetime's default: an operator
// JWT may live at most 24 hours (exp - iat).
const DefaultJWTMaxLifetime = 24 * time.Hour

// ReasonTokenLifetimeTooLong: an operator JWT lives longer than the
// gateway allows (Config.JWTMaxLifetime): exp - iat, or exp - now without
// iat (UNAUTHENTICATED).
const ReasonTokenLifetimeTooLong = "TOKEN_LIFETIME_TOO_LONG"

// jwtAlgs are the signature algorithms accepted on operator JWTs
// (asymmetric only: a JWKS holds public keys).
var jwtAlgs = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// identities authenticates bearer tokens: entries of the token file, and
// JWTs signed by a key of their issuer's JWKS: the one issuer of -jwks
// (the default operator's), or each operator's of the operators file
// (-operators), whose iss names the JWT's operator. The token file, the
// operators file and every JWKS are re-read every reload interval
// (polling), so a rotation or a new operator needs no restart; a file
// that fails to load keeps the last good one (and logs why, once).
type identities struct {
	log        *slog.Logger
	tokensFile string
	// defaultOperator is the operator of token-file entries that name
	// none and of the -jwks issuer.
	defaultOperator string
	tokens          atomic.Pointer[tokens]
	// issuers are the JWT issuers and their key sets; nil: no JWTs
	// accepted.
	issuers atomic.Pointer[issuers]
	// operatorsFile is the operators file (-operators); "": the issuers
	// are -jwks's one.
	operatorsFile string
	// audience is -jwt-audience: the aud of -jwks's JWTs, and of an
	// operator's whose entry names none.
	audience string
	// maxLifetime is the longest a JWT may live (negative: no bound).
	maxLifetime time.Duration
	insecure    bool
	now         func() time.Time
	// lastErr is the last reload error logged, so that a broken file is
	// reported once, not at every tick.
	lastErr string
	// reloadErrors counts the reloads that failed (a file or a JWKS not
	// read), by what: tokens, operators, jwks.
	reloadErrors *prometheus.CounterVec
}

// issuers maps a JWT issuer (iss) to its key set and operator.
type issuers map[string]*jwksSource

// jwtClaims are the claims the gateway reads from an operator JWT.
type jwtClaims struct {
	jwt.Claims
	Role     string `json:"chemmy_role"`
	PlayerID string `json:"chemmy_player_id"`
	Operator string `json:"chemmy_operator"`
}

func newIdentities(c Config, log *slog.Logger, now func() time.Time) (*identities, error) {
	if c.TokensFile == "" && c.JWKS == "" && c.OperatorsFile == "" {
		return nil, errors.New("gateway: give a token file (-tokens), a JWKS (-jwks) or an operators file (-operators)")
	}
	if c.OperatorsFile != "" && (c.JWKS != "" || c.JWTIssuer != "") {
		return nil, errors.New("gateway: -operators and -jwks (-jwt-issuer) both given: with an operators file every JWT issuer is an operator's entry; list the default operator's issuer there (its jwt section) and drop -jwks and -jwt-issuer")
	}
	defaultOperator := c.DefaultOperator
	if defaultOperator == "" {
		defaultOperator = DefaultOperatorID
	}
	if !validOperatorID(defaultOperator) {
		return nil, fmt.Errorf("gateway: -default-operator %q is not an operator id (1 to 64 of a-z, 0-9, '.', '_', '-')", defaultOperator)
	}
	maxLife := c.JWTMaxLifetime
	if maxLife == 0 {
		maxLife = DefaultJWTMaxLifetime
	}
	id := &identities{log: log, tokensFile: c.TokensFile, defaultOperator: defaultOperator, now: now,
		operatorsFile: c.OperatorsFile, audience: c.JWTAudience, maxLifetime: maxLife, insecure: c.Trust.Insecure,
		reloadErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chemmy_gateway_reload_errors_total",
			Help: "Reloads of the gateway's identities that failed, by what: tokens (the token file), operators (the operators file), jwks (a JWKS); the last good one is kept."},
			[]string{"what"})}
	for _, w := range []string{"tokens", "operators", "jwks"} {
		id.reloadErrors.WithLabelValues(w)
	}
	if c.TokensFile != "" {
		t, err := loadTokens(c.TokensFile, defaultOperator)
		if err != nil {
			return nil, err
		}
		if len(t) == 0 {
			log.Warn("token file lists no tokens", "file", c.TokensFile)
		}
		id.tokens.Store(&t)
	}
	if c.JWKS != "" {
		if c.JWTIssuer == "" || c.JWTAudience == "" {
			return nil, errors.New("gateway: -jwks needs -jwt-issuer and -jwt-audience")
		}
		if err := checkJWKSLocation(c.JWKS, c.Trust.Insecure); err != nil {
			return nil, err
		}
		s := &jwksSource{location: c.JWKS, issuer: c.JWTIssuer, audience: c.JWTAudience, operator: defaultOperator, maxLifetime: maxLife}
		if err := s.load(context.Background()); err != nil {
			return nil, err
		}
		id.issuers.Store(&issuers{c.JWTIssuer: s})
	}
	if c.OperatorsFile != "" {
		next, jwksErr, err := id.loadOperators(context.Background())
		if err == nil {
			err = jwksErr
		}
		if err != nil {
			return nil, err
		}
		id.issuers.Store(next)
	}
	return id, nil
}

// loadOperators reads the operators file into issuers, each with its key
// set loaded: an issuer already known (same operator, JWKS and audience)
// keeps its keys when its JWKS cannot be read now, a new one has none
// (its JWTs are refused TOKEN_INVALID until a reload reads them). err is
// the file's fault (it is not taken); jwksErr the key sets not read.
func (id *identities) loadOperators(ctx context.Context) (next *issuers, jwksErr, err error) {
	f, err := operators.Load(id.operatorsFile)
	if err != nil {
		return nil, nil, err
	}
	var old issuers
	if p := id.issuers.Load(); p != nil {
		old = *p
	}
	set := issuers{}
	var sources []*jwksSource
	for _, o := range f.Operators {
		if o.JWT == nil {
			continue
		}
		aud := o.JWT.Audience
		if aud == "" {
			aud = id.audience
		}
		if aud == "" {
			return nil, nil, fmt.Errorf("operators: %s: operator %q: jwt: no audience, and the gateway has no -jwt-audience", id.operatorsFile, o.ID)
		}
		if err := checkJWKSLocation(o.JWT.JWKS(), id.insecure); err != nil {
			return nil, nil, fmt.Errorf("operators: %s: operator %q: %w", id.operatorsFile, o.ID, err)
		}
		s := &jwksSource{location: o.JWT.JWKS(), issuer: o.JWT.Issuer, audience: aud, operator: o.ID, maxLifetime: id.maxLifetime}
		if prev := old[o.JWT.Issuer]; prev != nil && prev.location == s.location && prev.audience == s.audience && prev.operator == s.operator {
			s.keys.Store(prev.keys.Load())
		}
		set[o.JWT.Issuer] = s
		sources = append(sources, s)
	}
	var errs []error
	for _, s := range sources {
		if err := s.load(ctx); err != nil {
			errs = append(errs, fmt.Errorf("operator %q: %w", s.operator, err))
		}
	}
	return &set, errors.Join(errs...), nil
}

// reload re-reads the token file, the operators file and the JWKS.
// Called from one goroutine.
func (id *identities) reload(ctx context.Context) {
	var errs []error
	fail := func(what string, err error) {
		errs = append(errs, err)
		id.reloadErrors.WithLabelValues(what).Inc()
	}
	if id.tokensFile != "" {
		t, err := loadTokens(id.tokensFile, id.defaultOperator)
		if err != nil {
			fail("tokens", err)
		} else {
			id.tokens.Store(&t)
		}
	}
	if id.operatorsFile != "" {
		next, jwksErr, err := id.loadOperators(ctx)
		if err != nil {
			fail("operators", err)
		} else {
			id.issuers.Store(next)
			if jwksErr != nil {
				fail("jwks", jwksErr)
			}
		}
	} else if set := id.issuers.Load(); set != nil {
		for _, s := range *set {
			if err := s.load(ctx); err != nil {
				fail("jwks", err)
			}
		}
	}
	msg := ""
	if err := errors.Join(errs...); err != nil {
		msg = err.Error()
	}
	if msg != id.lastErr {
		if msg != "" {
			id.log.Error("identities not reloaded; keeping the last good ones", "err", msg)
		} else {
			id.log.Info("identities reloaded after an error")
		}
		id.lastErr = msg
	}
}

// reloadLoop reloads every interval until ctx is done.
func (id *identities) reloadLoop(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			id.reload(ctx)
		}
	}
}

// lookup returns the caller of a bearer token: a token-file entry, else
// a JWT of a known issuer (its operator's caller). Errors: UNAUTHENTICATED
// with TOKEN_UNKNOWN, TOKEN_INVALID (among others: an issuer no operator
// has), TOKEN_EXPIRED or TOKEN_LIFETIME_TOO_LONG.
func (id *identities) lookup(token string) (auth.Caller, error) {
	if t := id.tokens.Load(); t != nil {
		if c, ok := t.lookup(token); ok {
			return c, nil
		}
	}
	if set := id.issuers.Load(); set != nil && strings.Count(token, ".") == 2 {
		return set.verify(token, id.now())
	}
	return auth.Caller{}, errs.New(codes.Unauthenticated, Domain, ReasonTokenUnknown, "unknown token")
}

// verify checks a JWT against the key set of its issuer (its iss, read
// before the signature is checked only to choose the keys): an issuer not
// in the set is TOKEN_INVALID.
func (set issuers) verify(token string, now time.Time) (auth.Caller, error) {
	t, err := jwt.ParseSigned(token, jwtAlgs)
	var cl jwt.Claims
	if err != nil || len(t.Headers) != 1 || t.UnsafeClaimsWithoutVerification(&cl) != nil {
		return auth.Caller{}, errs.New(codes.Unauthenticated, Domain, ReasonTokenInvalid, "the bearer token is not a signed JWT")
	}
	s := set[cl.Issuer]
	if s == nil {
		return auth.Caller{}, errs.New(codes.Unauthenticated, Domain, ReasonTokenInvalid, "the JWT's issuer %q is no operator's", cl.Issuer)
	}
	return s.verify(token, now)
}

// checkJWKSLocation refuses a JWKS URL over plain http, unless its host
// is a loopback address (localhost, 127.0.0.0/8, ::1) or the gateway runs
// insecure (development): keys fetched in clear could be swapped on the
// way for the attacker's, who would then sign his own tokens. https URLs
// and files are accepted.
func checkJWKSLocation(location string, insecure bool) error {
	if !isHTTPURL(location) || strings.HasPrefix(strings.ToLower(location), "https://") || insecure {
		return nil
	}
	u, err := url.Parse(location)
	if err != nil {
		return fmt.Errorf("gateway: JWKS %q: %w", location, err)
	}
	if isLoopback(u.Hostname()) {
		return nil
	}
	return fmt.Errorf("gateway: JWKS %s is plain http: the operator's keys must not cross a network in clear "+
		"(anyone on the path could replace them with his own); use an https:// URL or a file "+
		"(http is accepted only to a loopback host, or with -insecure for development)", location)
}

func isHTTPURL(location string) bool {
	l := strings.ToLower(location)
	return strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "http://")
}

// isLoopback reports whether host (a name or an IP address) is this
// machine: "localhost" or a loopback address.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// jwksClient fetches JWKS documents; a redirect may not leave https for
// plain http.
var jwksClient = &http.Client{
	CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
			return fmt.Errorf("redirected from https to %s", req.URL.Redacted())
		}
		return nil
	},
}

// jwksSource is an operator's key set: a file path or an http(s) URL
// (checkJWKSLocation).
type jwksSource struct {
	location, issuer, audience string
	// operator is the operator the issuer belongs to: every JWT's.
	operator string
	// maxLifetime is the longest a JWT may live (exp - iat, or exp - now
	// without iat); negative: no bound.
	maxLifetime time.Duration
	keys        atomic.Pointer[jose.JSONWebKeySet]
}

// maxJWKSBytes bounds a JWKS document.
const maxJWKSBytes = 1 << 20

func (s *jwksSource) load(ctx context.Context) error {
	var data []byte
	var err error
	if isHTTPURL(s.location) {
		data, err = fetch(ctx, s.location)
	} else {
		data, err = os.ReadFile(s.location)
	}
	if err != nil {
		return fmt.Errorf("jwks %s: %w", s.location, err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(data, &set); err != nil {
		return fmt.Errorf("jwks %s: %w", s.location, err)
	}
	if len(set.Keys) == 0 {
		return fmt.Errorf("jwks %s: no keys", s.location)
	}
	for _, k := range set.Keys {
		if !k.Valid() || !k.IsPublic() {
			return fmt.Errorf("jwks %s: key %q is not a valid public key", s.location, k.KeyID)
		}
	}
	s.keys.Store(&set)
	return nil
}

func fetch(ctx context.Context, location string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, location, nil)
	if err != nil {
		return nil, err
	}
	resp, err := jwksClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, io.LimitReader(resp.Body, maxJWKSBytes+1)); err != nil {
		return nil, err
	}
	if buf.Len() > maxJWKSBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxJWKSBytes)
	}
	return buf.Bytes(), nil
}

// verify checks an operator JWT: signature by a key of the set (by kid;
// a set of one key serves tokens without kid), iss, aud, exp (required),
// nbf, its lifetime (exp - iat, or exp - now without iat: at most
// maxLifetime, else TOKEN_LIFETIME_TOO_LONG: a token that never expires
// in practice is a stolen one that works for ever), the role claim, and
// the operator claim when present (the issuer's operator). The caller
// belongs to the issuer's operator.
func (s *jwksSource) verify(token string, now time.Time) (auth.Caller, error) {
	invalid := func(format string, args ...any) (auth.Caller, error) {
		return auth.Caller{}, errs.New(codes.Unauthenticated, Domain, ReasonTokenInvalid, format, args...)
	}
	t, err := jwt.ParseSigned(token, jwtAlgs)
	if err != nil || len(t.Headers) != 1 {
		return invalid("the bearer token is not a signed JWT")
	}
	set := s.keys.Load()
	if set == nil {
		return invalid("the keys of the JWT's issuer are not loaded yet")
	}
	var key *jose.JSONWebKey
	if kid := t.Headers[0].KeyID; kid != "" {
		if ks := set.Key(kid); len(ks) > 0 {
			key = &ks[0]
		}
	} else if len(set.Keys) == 1 {
		key = &set.Keys[0]
	}
	if key == nil {
		return invalid("the JWT is signed by a key the operator's JWKS does not hold")
	}
	var cl jwtClaims
	if err := t.Claims(key.Key, &cl); err != nil {
		return invalid("the JWT's signature does not verify")
	}
	err = cl.ValidateWithLeeway(jwt.Expected{Issuer: s.issuer, AnyAudience: jwt.Audience{s.audience}, Time: now}, jwtLeeway)
	switch {
	case errors.Is(err, jwt.ErrExpired):
		return auth.Caller{}, errs.New(codes.Unauthenticated, Domain, ReasonTokenExpired,
			"the JWT expired at %s", cl.Expiry.Time().UTC().Format(time.RFC3339))
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return invalid("the JWT's issuer is not %q", s.issuer)
	case errors.Is(err, jwt.ErrInvalidAudience):
		return invalid("the JWT's audience does not include %q", s.audience)
	case errors.Is(err, jwt.ErrNotValidYet):
		return invalid("the JWT is not valid yet (nbf)")
	case err != nil:
		return invalid("the JWT: %v", err)
	case cl.Expiry == nil:
		return invalid("the JWT has no exp")
	}
	if s.maxLifetime >= 0 {
		from, what := now, "now"
		if cl.IssuedAt != nil {
			from, what = cl.IssuedAt.Time(), "its iat"
		}
		if life := cl.Expiry.Time().Sub(from); life > s.maxLifetime {
			return auth.Caller{}, errs.New(codes.Unauthenticated, Domain, ReasonTokenLifetimeTooLong,
				"the JWT lives %s from %s to its exp, more than the %s the gateway allows", life.Round(time.Second), what, s.maxLifetime)
		}
	}
	role := auth.Role(cl.Role)
	if !assignable(role) {
		return invalid("the JWT's %s claim %q is not one of player, croupier, operator, auditor", ClaimRole, cl.Role)
	}
	if cl.Operator != "" && cl.Operator != s.operator {
		return invalid("the JWT's %s claim %q is not the issuer's operator %q", ClaimOperator, cl.Operator, s.operator)
	}
	sub := cl.Subject
	if role == auth.RolePlayer && cl.PlayerID != "" {
		sub = cl.PlayerID
	}
	if sub == "" {
		return invalid("the JWT names no subject")
	}
	return auth.Caller{Subject: sub, Role: role, Operator: s.operator}, nil
}
