package walletsvc

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
	"go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/outbox"
)

// Responsible-gaming limits (SetPlayerLimits): what the operator set per
// player account, checked whenever money goes at stake (checkStake), and
// the play they are measured against, kept up to date by every game
// transfer (flush, notePlay).

// Defaults of the limits' timing (Config.SessionGap, Config.LimitsCoolingOff).
const (
	// DefaultSessionGap: a pause in play longer than this ends a session.
	DefaultSessionGap = 30 * time.Minute
	// DefaultLimitsCoolingOff: how long a looser limit waits.
	DefaultLimitsCoolingOff = 24 * time.Hour
)

var (
	bucketLimits = []byte("limits") // account id → limitsRecord (JSON)
	bucketPlay   = []byte("play")   // account id → playRecord (JSON)
	// bucketLimitChanges: account id 0x00 be64(unix ns) event id →
	// LimitChange (protobuf), the audit trail of SetPlayerLimits.
	bucketLimitChanges = []byte("limit_changes")
	// bucketLimitChangeLog: be64(sequence) → the "limit_changes" key, every
	// account's changes in the order recorded (ListLimitChanges).
	bucketLimitChangeLog = []byte("limit_change_log")

	reasonLimitReached            = reason(walletv1.ErrorReason_ERROR_REASON_LIMIT_REACHED)
	reasonLimitOverrideNotAllowed = reason(walletv1.ErrorReason_ERROR_REASON_LIMIT_OVERRIDE_NOT_ALLOWED)
)

// keptLimitChanges is how many of an account's latest limit changes
// GetPlayerLimits returns (all are kept).
const keptLimitChanges = 100

// maxOverrideReason is the longest override reason, bytes.
const maxOverrideReason = 512

// The names of the limits in LIMIT_REACHED's ErrorInfo metadata "limit".
const (
	limitSelfExclusion = "self_exclusion"
	limitMaxStake      = "max_stake"
	limitDailyLoss     = "daily_loss"
	limitSessionLoss   = "session_loss"
	limitSessionTime   = "session_time"
	limitDailyTurn     = "daily_turnover"
	limitSessionTurn   = "session_turnover"
)

// limitSet is PlayerLimits as stored; zero fields are no limit.
type limitSet struct {
	DailyLoss         int64         `json:"daily_loss,omitempty"`
	SessionLoss       int64         `json:"session_loss,omitempty"`
	MaxStake          int64         `json:"max_stake,omitempty"`
	SessionTime       time.Duration `json:"session_time,omitempty"`
	SelfExcludedUntil time.Time     `json:"self_excluded_until,omitzero"`
	// RealityCheck is the reality-check interval (table-svc tells the
	// player of his session each time it runs this long again).
	RealityCheck time.Duration `json:"reality_check,omitempty"`
	// DailyTurnover and SessionTurnover: the most wagered per UTC day and
	// per session.
	DailyTurnover   int64 `json:"daily_turnover,omitempty"`
	SessionTurnover int64 `json:"session_turnover,omitempty"`
}

// Limits across currencies. A player has one account per currency
// ("player:<id>", "player:<id>@<CUR>"), each with its own limits and its
// own play record: the amount limits (loss per day and per session,
// maximum stake) are in that account's minor units and measured against
// that account's play only, since the wallet has no exchange rates to add
// a USD loss to a EUR one. The limits without an amount (self-exclusion,
// session time, reality-check interval) are the player's: those set on
// his default-currency account "player:<id>" also apply to each of his
// other accounts, the stricter of the two where both are set.

// limitsKey is the key of account acct's limits: its canonical id (the
// default currency's account without a suffix).
func limitsKey(acct, def string) string {
	base, cur := splitCurrency(acct, def)
	return systemID(base, cur, def)
}

// readLimits is account acct's limits record at now, with the
// player-wide limits of his default-currency account merged in (see
// "Limits across currencies").
func readLimits(tx *bbolt.Tx, acct, def string, now time.Time) (limitsRecord, error) {
	key := limitsKey(acct, def)
	var rec limitsRecord
	if _, err := getJSON(tx, bucketLimits, key, &rec); err != nil {
		return rec, err
	}
	rec = rec.effective(now)
	base, _ := splitCurrency(acct, def)
	if base == key {
		return rec, nil
	}
	var p limitsRecord
	if _, err := getJSON(tx, bucketLimits, base, &p); err != nil {
		return rec, err
	}
	pl, l := p.effective(now).Limits, &rec.Limits
	if pl.SelfExcludedUntil.After(l.SelfExcludedUntil) {
		l.SelfExcludedUntil = pl.SelfExcludedUntil
	}
	l.SessionTime = shorter(pl.SessionTime, l.SessionTime)
	l.RealityCheck = shorter(pl.RealityCheck, l.RealityCheck)
	return rec, nil
}

// shorter is the stricter of two durations where 0 is none.
func shorter(a, b time.Duration) time.Duration {
	if a != 0 && (b == 0 || a < b) {
		return a
	}
	return b
}

// limitsRecord is a player's limits: those in effect and a looser set
// waiting until PendingAt.
type limitsRecord struct {
	Limits    limitSet  `json:"limits"`
	Pending   *limitSet `json:"pending,omitempty"`
	PendingAt time.Time `json:"pending_at,omitzero"`
}

// effective is the record at now: a pending set whose time has come is in
// effect.
func (r limitsRecord) effective(now time.Time) limitsRecord {
	if r.Pending != nil && !now.Before(r.PendingAt) {
		return limitsRecord{Limits: *r.Pending}
	}
	return r
}

// playRecord is a player's play: the net result (credits minus debits of
// his game transfers; a loss is negative) and the turnover (what he put
// at stake) of the UTC day and of the session, and when he last played.
type playRecord struct {
	Day          string    `json:"day"`
	DayNet       int64     `json:"day_net"`
	SessionStart time.Time `json:"session_start,omitzero"`
	SessionNet   int64     `json:"session_net"`
	Last         time.Time `json:"last,omitzero"`
	DayTurnover  int64     `json:"day_turnover,omitempty"`
	SessionTurn  int64     `json:"session_turnover,omitempty"`
}

// at is the record as of now: a new day starts at zero, and a pause longer
// than gap ends the session (a new one starts with the next play).
func (p playRecord) at(now time.Time, gap time.Duration) playRecord {
	if day := now.UTC().Format(time.DateOnly); p.Day != day {
		p.Day, p.DayNet, p.DayTurnover = day, 0, 0
	}
	if p.Last.IsZero() || now.Sub(p.Last) > gap {
		p.SessionStart, p.SessionNet, p.SessionTurn = time.Time{}, 0, 0
	}
	return p
}

// wagered notes a stake of amount put at stake at now (the turnover).
func (p playRecord) wagered(now time.Time, gap time.Duration, amount int64) playRecord {
	p = p.played(now, gap, 0)
	p.DayTurnover = saturatingAdd(p.DayTurnover, amount)
	p.SessionTurn = saturatingAdd(p.SessionTurn, amount)
	return p
}

// saturatingAdd is a+b for b >= 0, at most MaxInt64.
func saturatingAdd(a, b int64) int64 {
	if s, ok := add(a, b); ok {
		return s
	}
	return math.MaxInt64
}

// played notes play at now with net result delta.
func (p playRecord) played(now time.Time, gap time.Duration, delta int64) playRecord {
	p = p.at(now, gap)
	if p.SessionStart.IsZero() {
		p.SessionStart = now
	}
	p.DayNet += delta
	p.SessionNet += delta
	p.Last = now
	return p
}

// getJSON reads key of bucket into v; false when absent.
func getJSON(tx *bbolt.Tx, bucket []byte, key string, v any) (bool, error) {
	b := tx.Bucket(bucket).Get([]byte(key))
	if b == nil {
		return false, nil
	}
	return true, json.Unmarshal(b, v)
}

func putJSON(tx *bbolt.Tx, bucket []byte, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.Bucket(bucket).Put([]byte(key), b)
}

// isGameTransfer reports whether a transfer counts as play: everything
// but the money coming in and going out (deposits and withdrawals; in
// seamless mode the operator's debits, credits and rollbacks).
func isGameTransfer(reason string) bool {
	switch reason {
	case reasonDeposit, reasonWithdrawal, reasonOperatorDebit, reasonOperatorCredit, reasonOperatorRollback:
		return false
	}
	return true
}

// notePlay adds a game transfer's effect on a player account to his play
// record (called by flush for each side of each transfer).
func (t *txn) notePlay(acct string, delta int64) error {
	if !isPlayerAccount(acct) {
		return nil
	}
	var p playRecord
	if _, err := getJSON(t.tx, bucketPlay, acct, &p); err != nil {
		return err
	}
	return putJSON(t.tx, bucketPlay, acct, p.played(t.nowT, t.sessionGap(), delta))
}

// sessionGap is the txn's session gap, the default when none was set.
func (t *txn) sessionGap() time.Duration {
	if t.gap > 0 {
		return t.gap
	}
	return DefaultSessionGap
}

// checkStake refuses (FAILED_PRECONDITION LIMIT_REACHED) a hold on
// player account a of hold amount (the hold's whole amount) that adds
// more to what a has at stake, when one of the player's limits forbids
// it; otherwise it notes the play (a stake starts a session).
func (t *txn) checkStake(a *account, hold, more int64) error {
	p, err := t.stakeAllowed(a, hold, more)
	if err != nil || (t.op != nil && t.op.mode == fundDry) {
		return err // the dry run of seamless mode writes nothing
	}
	return putJSON(t.tx, bucketPlay, a.id, p.wagered(t.nowT, t.sessionGap(), more))
}

// checkStakeFirst is checkStake's verdict before a seamless stake is
// debited from the operator's wallet (a stake the limits refuse is not
// debited at all); nothing in transfer mode, where checkStake decides
// after the balance check.
func (t *txn) checkStakeFirst(a *account, hold, more int64) error {
	if t.op == nil || !isPlayerAccount(a.id) {
		return nil
	}
	_, err := t.stakeAllowed(a, hold, more)
	return err
}

// stakeAllowed is checkStake's verdict without noting the play: the
// player's play as of now, or LIMIT_REACHED. It only reads.
func (t *txn) stakeAllowed(a *account, hold, more int64) (playRecord, error) {
	return t.stakeVerdict(a, hold, more, nil)
}

// stakeCheck is the verdict CheckStake of a and amount would give right
// after this txn commits; played, when not nil, is the net result on a of
// the txn's game transfers, noted in his play as flush will note them: a
// banker's new bank after his settlement (SettleCoupResponse.
// banker_stake). It only reads.
func (t *txn) stakeCheck(a *account, amount int64, played *int64) (*walletv1.StakeCheck, error) {
	_, verdict := t.stakeVerdict(a, amount, 0, played)
	if verdict == nil {
		return &walletv1.StakeCheck{Allowed: true}, nil
	}
	if errs.Reason(verdict) != reasonLimitReached {
		return nil, verdict
	}
	return &walletv1.StakeCheck{Limit: errs.Info(verdict).GetMetadata()["limit"], Message: status.Convert(verdict).Message()}, nil
}

// stakeVerdict is stakeAllowed; with played, the play of this txn's game
// transfers (their net on a) noted first.
func (t *txn) stakeVerdict(a *account, hold, more int64, played *int64) (playRecord, error) {
	rec, err := readLimits(t.tx, a.id, t.def, t.nowT)
	if err != nil {
		return playRecord{}, err
	}
	var p playRecord
	if _, err := getJSON(t.tx, bucketPlay, a.id, &p); err != nil {
		return playRecord{}, err
	}
	now, gap := t.nowT, t.sessionGap()
	l := rec.Limits
	p = p.at(now, gap)
	if played != nil {
		p = p.played(now, gap, *played)
	}
	atStake := a.held + more
	switch {
	case l.SelfExcludedUntil.After(now):
		return p, limitReached(limitSelfExclusion, "%s is self-excluded until %s", a.id, l.SelfExcludedUntil.UTC().Format(time.RFC3339))
	case l.MaxStake > 0 && hold > l.MaxStake:
		return p, limitReached(limitMaxStake, "a stake of %d is over %s's maximum stake of %d", hold, a.id, l.MaxStake)
	case l.DailyLoss > 0 && -p.DayNet+atStake > l.DailyLoss:
		return p, limitReached(limitDailyLoss, "%s has lost %d today and would have %d at stake: daily loss limit %d", a.id, max(-p.DayNet, 0), atStake, l.DailyLoss)
	case l.SessionLoss > 0 && -p.SessionNet+atStake > l.SessionLoss:
		return p, limitReached(limitSessionLoss, "%s has lost %d this session and would have %d at stake: session loss limit %d", a.id, max(-p.SessionNet, 0), atStake, l.SessionLoss)
	case l.DailyTurnover > 0 && more > 0 && p.DayTurnover+more > l.DailyTurnover:
		return p, limitReached(limitDailyTurn, "%s has wagered %d today and would wager %d more: daily turnover limit %d", a.id, p.DayTurnover, more, l.DailyTurnover)
	case l.SessionTurnover > 0 && more > 0 && p.SessionTurn+more > l.SessionTurnover:
		return p, limitReached(limitSessionTurn, "%s has wagered %d this session and would wager %d more: session turnover limit %d", a.id, p.SessionTurn, more, l.SessionTurnover)
	case l.SessionTime > 0 && !p.SessionStart.IsZero() && now.Sub(p.SessionStart) >= l.SessionTime:
		return p, limitReached(limitSessionTime, "%s's session has lasted %s: session time limit %s (a pause of %s ends it)", a.id,
			now.Sub(p.SessionStart).Round(time.Second), l.SessionTime, gap)
	}
	return p, nil
}

// limitReached is FAILED_PRECONDITION LIMIT_REACHED with the limit's name
// in the ErrorInfo metadata "limit".
func limitReached(limit, format string, args ...any) error {
	return errs.WithMetadata(codes.FailedPrecondition, Domain, reasonLimitReached, map[string]string{"limit": limit}, format, args...)
}

// stricter reports whether amount limit n is stricter than c (0: none).
func stricter(n, c int64) bool { return n != 0 && (c == 0 || n < c) }

// change applies a new limit set at now: stricter or equal limits at once,
// looser ones (if any) as a pending set after coolingOff. The latest
// change replaces any pending one.
func (r limitsRecord) change(n limitSet, now time.Time, coolingOff time.Duration) limitsRecord {
	cur := r.effective(now).Limits
	if !cur.SelfExcludedUntil.After(now) {
		cur.SelfExcludedUntil = time.Time{}
	}
	out, looser := cur, false
	amount := func(nv int64, cv, ov *int64) {
		switch {
		case nv == *cv:
		case stricter(nv, *cv):
			*ov = nv
		default:
			looser = true
		}
	}
	amount(n.DailyLoss, &cur.DailyLoss, &out.DailyLoss)
	amount(n.SessionLoss, &cur.SessionLoss, &out.SessionLoss)
	amount(n.MaxStake, &cur.MaxStake, &out.MaxStake)
	amount(n.DailyTurnover, &cur.DailyTurnover, &out.DailyTurnover)
	amount(n.SessionTurnover, &cur.SessionTurnover, &out.SessionTurnover)
	duration := func(nv time.Duration, cv, ov *time.Duration) {
		switch {
		case nv == *cv:
		case shorter(nv, *cv) == nv:
			*ov = nv
		default:
			looser = true
		}
	}
	duration(n.SessionTime, &cur.SessionTime, &out.SessionTime)
	duration(n.RealityCheck, &cur.RealityCheck, &out.RealityCheck)
	switch u, c := n.SelfExcludedUntil, cur.SelfExcludedUntil; {
	case u.Equal(c) || (!u.After(now) && c.IsZero()):
	case u.After(c):
		out.SelfExcludedUntil = u
	default:
		looser = true
	}
	rec := limitsRecord{Limits: out}
	if looser {
		p := n
		rec.Pending, rec.PendingAt = &p, now.Add(coolingOff)
	}
	return rec
}

func (l limitSet) proto() *walletv1.PlayerLimits {
	out := &walletv1.PlayerLimits{DailyLossLimit: l.DailyLoss, SessionLossLimit: l.SessionLoss, MaxStake: l.MaxStake,
		DailyTurnoverLimit: l.DailyTurnover, SessionTurnoverLimit: l.SessionTurnover}
	if l.SessionTime > 0 {
		out.SessionTimeLimit = durationpb.New(l.SessionTime)
	}
	if !l.SelfExcludedUntil.IsZero() {
		out.SelfExcludedUntil = timestamppb.New(l.SelfExcludedUntil)
	}
	if l.RealityCheck > 0 {
		out.RealityCheckInterval = durationpb.New(l.RealityCheck)
	}
	return out
}

// limitSetOf validates and reads PlayerLimits (INVALID_ARGUMENT for a
// negative amount or duration).
func limitSetOf(p *walletv1.PlayerLimits) (limitSet, error) {
	l := limitSet{DailyLoss: p.GetDailyLossLimit(), SessionLoss: p.GetSessionLossLimit(), MaxStake: p.GetMaxStake(),
		DailyTurnover: p.GetDailyTurnoverLimit(), SessionTurnover: p.GetSessionTurnoverLimit()}
	if l.DailyLoss < 0 || l.SessionLoss < 0 || l.MaxStake < 0 || l.DailyTurnover < 0 || l.SessionTurnover < 0 {
		return l, failf(codes.InvalidArgument, reasonInvalidArgument, "limits must be 0 (none) or positive minor units")
	}
	if d := p.GetSessionTimeLimit(); d != nil {
		if d.CheckValid() != nil || d.AsDuration() < 0 {
			return l, failf(codes.InvalidArgument, reasonInvalidArgument, "session_time_limit must be a positive duration")
		}
		l.SessionTime = d.AsDuration()
	}
	if d := p.GetRealityCheckInterval(); d != nil {
		if d.CheckValid() != nil || d.AsDuration() < 0 {
			return l, failf(codes.InvalidArgument, reasonInvalidArgument, "reality_check_interval must be a positive duration")
		}
		l.RealityCheck = d.AsDuration()
	}
	if u := p.GetSelfExcludedUntil(); u != nil {
		if u.CheckValid() != nil {
			return l, failf(codes.InvalidArgument, reasonInvalidArgument, "self_excluded_until is not a valid time")
		}
		l.SelfExcludedUntil = u.AsTime()
	}
	return l, nil
}

// limitsResponse is what GetPlayerLimits answers for account acct at
// now: the limits in effect (its own, with the player-wide ones merged
// in: "Limits across currencies"), its own pending set and its play.
func limitsResponse(tx *bbolt.Tx, acct, def string, now time.Time, gap time.Duration) (*walletv1.GetPlayerLimitsResponse, error) {
	key := limitsKey(acct, def)
	var own limitsRecord
	if _, err := getJSON(tx, bucketLimits, key, &own); err != nil {
		return nil, err
	}
	rec, err := readLimits(tx, key, def, now)
	if err != nil {
		return nil, err
	}
	var p playRecord
	if _, err := getJSON(tx, bucketPlay, key, &p); err != nil {
		return nil, err
	}
	own, p = own.effective(now), p.at(now, gap)
	out := &walletv1.GetPlayerLimitsResponse{AccountId: key, Limits: rec.Limits.proto(),
		Play: &walletv1.PlayerPlay{Day: p.Day, DailyLoss: -p.DayNet, SessionLoss: -p.SessionNet,
			DailyTurnover: p.DayTurnover, SessionTurnover: p.SessionTurn}}
	if own.Pending != nil {
		out.PendingLimits, out.PendingEffectiveTime = own.Pending.proto(), timestamppb.New(own.PendingAt)
	}
	if !p.SessionStart.IsZero() {
		out.Play.SessionStartTime = timestamppb.New(p.SessionStart)
	}
	if !p.Last.IsZero() {
		out.Play.LastPlayTime = timestamppb.New(p.Last)
	}
	out.Changes, err = limitChanges(tx, key, keptLimitChanges)
	return out, err
}

// limitChangePrefix is the prefix of account key's limit changes.
func limitChangePrefix(key string) []byte { return []byte(key + "\x00") }

// limitChanges are up to n of account key's limit changes, newest first.
func limitChanges(tx *bbolt.Tx, key string, n int) ([]*walletv1.LimitChange, error) {
	var out []*walletv1.LimitChange
	prefix := limitChangePrefix(key)
	c := tx.Bucket(bucketLimitChanges).Cursor()
	k, v := c.Seek(append(append([]byte(nil), prefix...), 0xff))
	if k == nil {
		k, v = c.Last()
	}
	for ; k != nil && len(out) < n; k, v = c.Prev() {
		if !bytes.HasPrefix(k, prefix) {
			if bytes.Compare(k, prefix) < 0 {
				break
			}
			continue
		}
		ch := &walletv1.LimitChange{}
		if err := proto.Unmarshal(v, ch); err != nil {
			return nil, err
		}
		out = append(out, ch)
	}
	return out, nil
}

// recordLimitChange keeps ch in the audit trail and puts its
// PlayerLimitsChanged event (of the account's operator, defOp for the
// default operator's, with the API's account id) in the outbox, in
// transaction tx.
func recordLimitChange(tx *bbolt.Tx, key, defOp string, ch *walletv1.LimitChange) error {
	v, err := marshal.Marshal(ch)
	if err != nil {
		return err
	}
	k := append(limitChangePrefix(key), binary.BigEndian.AppendUint64(nil, uint64(ch.GetChangeTime().AsTime().UnixNano()))...)
	k = append(k, ch.GetEventId()...)
	if err := tx.Bucket(bucketLimitChanges).Put(k, v); err != nil {
		return err
	}
	if err := logLimitChange(tx, k); err != nil {
		return err
	}
	op := operatorOfKey(ch.GetAccountId(), defOp)
	pub := proto.Clone(ch).(*walletv1.LimitChange)
	pub.AccountId = bare(ch.GetAccountId())
	ev, err := marshal.Marshal(&eventsv1.WalletEvent{EventId: ch.GetEventId(), OccurTime: ch.GetChangeTime(), OperatorId: op,
		Payload: &eventsv1.WalletEvent_PlayerLimitsChanged{PlayerLimitsChanged: &eventsv1.PlayerLimitsChanged{Change: pub}}})
	if err != nil {
		return err
	}
	return outbox.Put(tx, "chemmy.wallet."+ch.GetEventId()+".player_limits_changed", ch.GetEventId(), ev)
}

// SetPlayerLimits sets a player's limits (see the proto): at once when
// stricter, after the cooling-off when looser, unless an operator
// overrides it where the deployment allows (Config.LimitsOverride). Each
// change is recorded with who made it, the limits before and after, and
// any override (recordLimitChange).
func (s *Service) SetPlayerLimits(ctx context.Context, req *walletv1.SetPlayerLimitsRequest) (*walletv1.SetPlayerLimitsResponse, error) {
	if err := firstErr(checkID("request_id", req.GetRequestId()), checkPlayerAccount(req.GetAccountId(), s.cur)); err != nil {
		return nil, err
	}
	n, err := limitSetOf(req.GetLimits())
	if err != nil {
		return nil, err
	}
	why := strings.TrimSpace(req.GetOverrideReason())
	switch {
	case req.GetOverride() && !s.limitsOverride:
		return nil, failf(codes.FailedPrecondition, reasonLimitOverrideNotAllowed,
			"this wallet does not let a limit be lifted before its cooling-off of %s (wallet-svc -limits-override, where the regulator allows it)", s.coolingOff)
	case req.GetOverride() && why == "":
		return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "an override needs its reason (override_reason)")
	case len(why) > maxOverrideReason:
		return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "override_reason is longer than %d bytes", maxOverrideReason)
	case !req.GetOverride() && why != "":
		return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "override_reason without override")
	}
	caller, _ := auth.FromContext(ctx)
	key := limitsKey(req.GetAccountId(), s.currency)
	return idempotent(ctx, s, "SetPlayerLimits", reqKey(req.GetRequestId()), req, newMsg[walletv1.SetPlayerLimitsResponse],
		func(t *txn) (*walletv1.SetPlayerLimitsResponse, error) {
			var rec limitsRecord
			if _, err := getJSON(t.tx, bucketLimits, key, &rec); err != nil {
				return nil, err
			}
			old := rec.effective(t.nowT).Limits
			coolingOff := s.coolingOff
			if req.GetOverride() {
				coolingOff = 0 // the looser limits take effect now
			}
			rec = rec.change(n, t.nowT, coolingOff).effective(t.nowT)
			if err := putJSON(t.tx, bucketLimits, key, rec); err != nil {
				return nil, err
			}
			ch := &walletv1.LimitChange{EventId: ulid.Make().String(), AccountId: key, ChangedBy: caller.Subject,
				ChangedByRole: string(caller.Role), ChangeTime: timestamppb.New(t.nowT), OldLimits: old.proto(),
				NewLimits: rec.Limits.proto(), RequestedLimits: n.proto(), Override: req.GetOverride(), OverrideReason: why}
			if rec.Pending != nil {
				ch.PendingLimits, ch.PendingEffectiveTime = rec.Pending.proto(), timestamppb.New(rec.PendingAt)
			}
			if err := recordLimitChange(t.tx, key, t.sc.def, ch); err != nil {
				return nil, err
			}
			out, err := limitsResponse(t.tx, key, s.currency, t.nowT, t.sessionGap())
			return &walletv1.SetPlayerLimitsResponse{Limits: out}, err
		})
}

// GetPlayerLimits reads a player's limits and play (see the proto).
func (s *Service) GetPlayerLimits(ctx context.Context, req *walletv1.GetPlayerLimitsRequest) (*walletv1.GetPlayerLimitsResponse, error) {
	acct := req.GetAccountId()
	if err := checkPlayerAccount(acct, s.cur); err != nil {
		return nil, err
	}
	if c, _ := auth.FromContext(ctx); c.Role == auth.RolePlayer {
		if base, _ := splitCurrency(bare(acct), s.currency); base != playerPrefix+c.Subject {
			return nil, failf(codes.PermissionDenied, reasonNotYourAccount, "player %q may not read %q", c.Subject, acct)
		}
	}
	var out *walletv1.GetPlayerLimitsResponse
	err := s.db.View(func(tx *bbolt.Tx) error {
		var err error
		out, err = limitsResponse(tx, acct, s.currency, s.now(), s.sessionGap)
		return err
	})
	if err != nil {
		return nil, s.internal("GetPlayerLimits", err)
	}
	return out, nil
}

// CheckStake tells whether a player's limits allow an amount already held
// to stay at stake (see the proto). It writes nothing.
func (s *Service) CheckStake(ctx context.Context, req *walletv1.CheckStakeRequest) (*walletv1.CheckStakeResponse, error) {
	if err := firstErr(checkPlayerAccount(req.GetAccountId(), s.cur), checkAmount("amount", req.GetAmount())); err != nil {
		return nil, err
	}
	var verdict error
	err := s.db.View(func(tx *bbolt.Tx) error {
		t := s.txnFor(ctx, tx)
		a, err := t.stakeAccount(req.GetAccountId())
		if err != nil {
			verdict = err
			return nil
		}
		_, verdict = t.stakeAllowed(a, req.GetAmount(), 0)
		return nil
	})
	if err != nil {
		return nil, s.internal("CheckStake", err)
	}
	if verdict != nil {
		if errs.IsStatus(verdict) {
			return nil, verdict
		}
		return nil, s.internal("CheckStake", verdict)
	}
	return &walletv1.CheckStakeResponse{}, nil
}
