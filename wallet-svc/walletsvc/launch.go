package walletsvc

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"regexp"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/store"
	"github.com/chemmy/chemmy/services/kit/trust"
)

// Game-launch sessions (wallet.proto CreateLaunchSession). A session is
// a JSON launchRec in bucket "launch_sessions" under its id; bucket
// "launch_tokens" maps the hex SHA-256 of its current token to its id
// (the token itself is never stored); bucket "launch_requests" maps a
// CreateLaunchSession request_id to the session it made; bucket
// "launch_expiry" indexes the sessions by expire time (8 bytes of Unix
// nanoseconds, big-endian, then the id), so that a session, its token and
// its request go one request retention after its expiry
// (launchSweepLoop).

var (
	bucketLaunch       = []byte("launch_sessions")
	bucketLaunchTokens = []byte("launch_tokens")
	bucketLaunchReqs   = []byte("launch_requests")
	bucketLaunchExpiry = []byte("launch_expiry")
)

func launchExpiryKey(at time.Time, id string) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(at.UnixNano())), id...)
}

// LaunchTokenPrefix starts every launch session token: the gateway sends
// a bearer token with it to AuthenticateLaunchSession.
const LaunchTokenPrefix = "chls_"

// Session lifetimes.
const (
	DefaultLaunchTTL = 8 * time.Hour
	MaxLaunchTTL     = 24 * time.Hour
	maxRevokeReason  = 500
)

var (
	reasonSessionExpired        = reason(walletv1.ErrorReason_ERROR_REASON_SESSION_EXPIRED)
	reasonLaunchSessionNotFound = reason(walletv1.ErrorReason_ERROR_REASON_LAUNCH_SESSION_NOT_FOUND)
)

// tableIDPattern is table-svc's id pattern (a table id of any shard).
var tableIDPattern = regexp.MustCompile(`^[A-Za-z0-9_.:/-]{1,64}$`)

// launchRec is a stored session.
type launchRec struct {
	ID           string    `json:"id"`
	Player       string    `json:"player"`
	Currency     string    `json:"currency"`
	Table        string    `json:"table,omitempty"`
	Created      time.Time `json:"created"`
	Expires      time.Time `json:"expires"`
	Revoked      time.Time `json:"revoked,omitzero"`
	RevokeReason string    `json:"revoke_reason,omitempty"`
	CreatedBy    string    `json:"created_by,omitempty"`
	RevokedBy    string    `json:"revoked_by,omitempty"`
	// Operator is the operator (tenant) of the member of staff who
	// created it (auth.Caller.Operator); empty in a session stored before.
	Operator string `json:"operator,omitempty"`
	// TokenHash is the hex SHA-256 of the current token.
	TokenHash string `json:"token_hash"`
	// RequestID and RequestHash: the CreateLaunchSession that made it.
	RequestID   string `json:"request_id"`
	RequestHash []byte `json:"request_hash"`
}

func (r *launchRec) proto() *walletv1.LaunchSession {
	p := &walletv1.LaunchSession{LaunchSessionId: r.ID, PlayerId: r.Player, CurrencyCode: r.Currency, TableId: r.Table,
		CreateTime: timestamppb.New(r.Created), ExpireTime: timestamppb.New(r.Expires), CreatedBy: r.CreatedBy,
		RevokeReason: r.RevokeReason, RevokedBy: r.RevokedBy, OperatorId: r.Operator}
	if !r.Revoked.IsZero() {
		p.RevokeTime = timestamppb.New(r.Revoked)
	}
	return p
}

// invalid says why the session cannot be used at now ("" when it can).
func (r *launchRec) invalid(now time.Time) string {
	switch {
	case !r.Revoked.IsZero():
		return "was revoked at " + r.Revoked.UTC().Format(time.RFC3339)
	case !now.Before(r.Expires):
		return "expired at " + r.Expires.UTC().Format(time.RFC3339)
	}
	return ""
}

func tokenHash(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// newLaunchToken is "chls_" and 32 random bytes in base64url.
func newLaunchToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return LaunchTokenPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

func getLaunch(tx *bolt.Tx, id string) (*launchRec, error) {
	r := &launchRec{}
	found, err := getJSON(tx, bucketLaunch, id, r)
	if err != nil || !found {
		return nil, err
	}
	return r, nil
}

func launchNotFound(id string) error {
	return failf(codes.NotFound, reasonLaunchSessionNotFound, "no launch session %q", id)
}

// CreateLaunchSession makes a player's game-launch session and its token
// (see wallet.proto).
func (s *Service) CreateLaunchSession(ctx context.Context, req *walletv1.CreateLaunchSessionRequest) (*walletv1.CreateLaunchSessionResponse, error) {
	if err := checkID("request_id", req.GetRequestId()); err != nil {
		return nil, err
	}
	if !validPlayerID(req.GetPlayerId()) {
		return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "player_id must be 1-%d characters of [A-Za-z0-9_.-]", maxPlayerIDLen)
	}
	if t := req.GetTableId(); t != "" && !tableIDPattern.MatchString(t) {
		return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "table_id must be empty (the lobby) or 1-64 characters of [A-Za-z0-9_.:/-]")
	}
	cur := req.GetCurrencyCode()
	if cur == "" {
		cur = s.currency
	}
	if s.cur.exponent(cur) == nil {
		return nil, unknownCurrency(cur)
	}
	ttl := DefaultLaunchTTL
	if req.Ttl != nil {
		if err := req.GetTtl().CheckValid(); err != nil || req.GetTtl().AsDuration() <= 0 || req.GetTtl().AsDuration() > MaxLaunchTTL {
			return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "ttl must be a positive duration of at most %s", MaxLaunchTTL)
		}
		ttl = req.GetTtl().AsDuration()
	}
	by, operator := "", ""
	if c, ok := auth.FromContext(ctx); ok {
		by, operator = c.Subject, c.Operator
	}
	hash := requestHash("CreateLaunchSession", req)
	token, err := newLaunchToken()
	if err != nil {
		return nil, s.internal("CreateLaunchSession", err)
	}
	var out *walletv1.LaunchSession
	reqKey := []byte(s.scopeOf(ctx).rid(req.GetRequestId())) // per operator
	err = s.commit.Update(func(tx *bolt.Tx) error {
		now := s.now().UTC()
		var rec *launchRec
		if id := tx.Bucket(bucketLaunchReqs).Get(reqKey); id != nil {
			r, err := getLaunch(tx, string(id))
			if err != nil {
				return err
			}
			if r == nil {
				return errors.New("wallet: launch request names no session")
			}
			if !bytes.Equal(r.RequestHash, hash) {
				return failf(codes.AlreadyExists, reasonRequestIDReused, "request_id %q was used before with a different request", req.GetRequestId())
			}
			if why := r.invalid(now); why != "" {
				return failf(codes.FailedPrecondition, reasonSessionExpired, "launch session %s %s", r.ID, why)
			}
			// A retry: a new token replaces the first.
			if err := tx.Bucket(bucketLaunchTokens).Delete([]byte(r.TokenHash)); err != nil {
				return err
			}
			rec = r
		} else {
			rec = &launchRec{ID: "ls-" + ulid.Make().String(), Player: req.GetPlayerId(), Currency: cur, Table: req.GetTableId(),
				Created: now, Expires: now.Add(ttl), CreatedBy: by, Operator: operator, RequestID: req.GetRequestId(), RequestHash: hash}
			if err := tx.Bucket(bucketLaunchReqs).Put(reqKey, []byte(rec.ID)); err != nil {
				return err
			}
			if err := tx.Bucket(bucketLaunchExpiry).Put(launchExpiryKey(rec.Expires, rec.ID), nil); err != nil {
				return err
			}
		}
		rec.TokenHash = tokenHash(token)
		if err := tx.Bucket(bucketLaunchTokens).Put([]byte(rec.TokenHash), []byte(rec.ID)); err != nil {
			return err
		}
		out = rec.proto()
		return putJSON(tx, bucketLaunch, rec.ID, rec)
	})
	if err != nil {
		return nil, s.internal("CreateLaunchSession", err)
	}
	return &walletv1.CreateLaunchSessionResponse{LaunchSession: out, Token: token}, nil
}

// RevokeLaunchSession ends a session now (idempotent; see wallet.proto).
func (s *Service) RevokeLaunchSession(ctx context.Context, req *walletv1.RevokeLaunchSessionRequest) (*walletv1.RevokeLaunchSessionResponse, error) {
	if err := firstErr(checkID("request_id", req.GetRequestId()), checkID("launch_session_id", req.GetLaunchSessionId())); err != nil {
		return nil, err
	}
	if len(req.GetReason()) > maxRevokeReason {
		return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "reason is longer than %d bytes", maxRevokeReason)
	}
	by := ""
	if c, ok := auth.FromContext(ctx); ok {
		by = c.Subject
	}
	return idempotent(ctx, s, "RevokeLaunchSession", reqKey(req.GetRequestId()), req, newMsg[walletv1.RevokeLaunchSessionResponse],
		func(t *txn) (*walletv1.RevokeLaunchSessionResponse, error) {
			r, err := getLaunch(t.tx, req.GetLaunchSessionId())
			if err != nil {
				return nil, err
			}
			if r == nil || !t.sc.sees(r.Operator) { // another operator's: as if it did not exist
				return nil, launchNotFound(req.GetLaunchSessionId())
			}
			if r.Revoked.IsZero() {
				r.Revoked, r.RevokeReason, r.RevokedBy = t.nowT.UTC(), req.GetReason(), by
				if err := putJSON(t.tx, bucketLaunch, r.ID, r); err != nil {
					return nil, err
				}
			}
			return &walletv1.RevokeLaunchSessionResponse{LaunchSession: r.proto()}, nil
		})
}

// GetLaunchSession reads a session (never its token).
func (s *Service) GetLaunchSession(ctx context.Context, req *walletv1.GetLaunchSessionRequest) (*walletv1.GetLaunchSessionResponse, error) {
	if err := checkID("launch_session_id", req.GetLaunchSessionId()); err != nil {
		return nil, err
	}
	var out *walletv1.LaunchSession
	err := s.db.View(func(tx *bolt.Tx) error {
		r, err := getLaunch(tx, req.GetLaunchSessionId())
		if err != nil {
			return err
		}
		if r == nil || !s.scopeOf(ctx).sees(r.Operator) { // another operator's: as if it did not exist
			return launchNotFound(req.GetLaunchSessionId())
		}
		out = r.proto()
		return nil
	})
	if err != nil {
		return nil, s.internal("GetLaunchSession", err)
	}
	return &walletv1.GetLaunchSessionResponse{LaunchSession: out}, nil
}

// AuthenticateLaunchSession finds the valid session of a token: for the
// gateway only.
func (s *Service) AuthenticateLaunchSession(ctx context.Context, req *walletv1.AuthenticateLaunchSessionRequest) (*walletv1.AuthenticateLaunchSessionResponse, error) {
	if c, ok := auth.FromContext(ctx); !ok || c.Role != auth.RoleService || c.Subject != trust.Gateway {
		return nil, failf(codes.PermissionDenied, auth.ReasonPeerNotAllowed, "only the gateway authenticates launch sessions")
	}
	token := req.GetToken()
	if !strings.HasPrefix(token, LaunchTokenPrefix) || len(token) > 256 {
		return nil, failf(codes.Unauthenticated, reasonLaunchSessionNotFound, "not a launch session token")
	}
	var out *walletv1.LaunchSession
	err := s.db.View(func(tx *bolt.Tx) error {
		id := tx.Bucket(bucketLaunchTokens).Get([]byte(tokenHash(token)))
		if id == nil {
			return failf(codes.Unauthenticated, reasonLaunchSessionNotFound, "no launch session has this token")
		}
		r, err := getLaunch(tx, string(id))
		if err != nil {
			return err
		}
		if r == nil {
			return failf(codes.Unauthenticated, reasonLaunchSessionNotFound, "no launch session has this token")
		}
		if why := r.invalid(s.now()); why != "" {
			return failf(codes.Unauthenticated, reasonSessionExpired, "the launch session %s %s: the operator launches the player again", r.ID, why)
		}
		out = r.proto()
		return nil
	})
	if err != nil {
		return nil, s.internal("AuthenticateLaunchSession", err)
	}
	return &walletv1.AuthenticateLaunchSessionResponse{LaunchSession: out}, nil
}

// checkLaunch requires the launch session id, when set, to be valid now
// for a stake on account acct (its player, its currency); else
// FAILED_PRECONDITION SESSION_EXPIRED.
func (t *txn) checkLaunch(id, acct string) error {
	if id == "" {
		return nil
	}
	r, err := getLaunch(t.tx, id)
	if err != nil {
		return err
	}
	if r == nil || operatorOfKey(acct, t.sc.def) != orDefault(r.Operator, t.sc.def) { // another operator's: as if it did not exist
		return failf(codes.FailedPrecondition, reasonSessionExpired, "no launch session %q", id)
	}
	player, cur := playerOf(acct, t.def)
	switch {
	case r.Player != player:
		return failf(codes.FailedPrecondition, reasonSessionExpired, "launch session %s is not player %s's", id, player)
	case r.Currency != cur:
		return failf(codes.FailedPrecondition, reasonSessionExpired, "launch session %s is in %s, the stake in %s", id, r.Currency, cur)
	}
	if why := r.invalid(t.nowT); why != "" {
		return failf(codes.FailedPrecondition, reasonSessionExpired, "launch session %s %s", id, why)
	}
	return nil
}

// expireLaunches deletes, in one transaction, up to batch sessions that
// expired before now - keep, with their token, request and index
// entries. more reports that some may be left.
func (s *Service) expireLaunches(now time.Time, keep time.Duration, batch int) (n int, more bool, err error) {
	cutoff := now.Add(-keep).UnixNano()
	err = s.commit.Update(func(tx *bolt.Tx) error {
		idx := tx.Bucket(bucketLaunchExpiry)
		var done [][]byte
		c := idx.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if len(k) < 8 || int64(binary.BigEndian.Uint64(k)) > cutoff {
				break
			}
			if len(done) == batch {
				more = true
				break
			}
			done = append(done, k)
		}
		for _, k := range done {
			id := string(k[8:])
			r, err := getLaunch(tx, id)
			if err != nil {
				return err
			}
			if r != nil {
				for _, del := range []struct {
					b   []byte
					key string
				}{{bucketLaunchTokens, r.TokenHash}, {bucketLaunchReqs, scope{op: orDefault(r.Operator, s.opID), def: s.opID}.rid(r.RequestID)}, {bucketLaunch, r.ID}} {
					if err := tx.Bucket(del.b).Delete([]byte(del.key)); err != nil {
						return err
					}
				}
				n++
			}
			if err := idx.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	return n, more, err
}

// launchSweepLoop deletes the sessions that expired more than the
// request retention r ago (its Keep, Every and Batch; negative Keep:
// never), on the service clock, until ctx is done.
func (s *Service) launchSweepLoop(ctx context.Context, r store.Retention) {
	r = r.WithDefaults()
	if r.Keep < 0 {
		return
	}
	for {
		total := 0
		for more := true; more; {
			n, m, err := s.expireLaunches(s.now(), r.Keep, r.Batch)
			if err != nil {
				s.log.Warn("sweeping expired launch sessions", "err", err)
				break
			}
			total, more = total+n, m
		}
		if total > 0 {
			s.log.Info("expired launch sessions deleted", "count", total, "retention", r.Keep)
		}
		t := time.NewTimer(r.Every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
