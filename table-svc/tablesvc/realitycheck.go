package tablesvc

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// Reality checks (responsible gaming). The operator sets a player's
// reality-check interval with his limits (wallet PlayerLimits.
// reality_check_interval). The session it measures is his seat's session
// at the table (sessions.go: from his seating to his leaving, Seat.
// session_id), on the table's clock: the table counts in it the coups he
// plays (a bet, a stake, a banco or the bank in a settled coup) and their
// net result (his round nets, from the settlement's transfers,
// round_transfers.go).
//
// Between coups, right after each settlement, every player of the coup
// still seated is counted, his interval read from the wallet (a
// GetPlayerLimits at most once a minute per player, realityIntervalTTL: a
// shorter interval applies within a minute), and when his session has run for another interval
// (elapsed / interval above the checks he had) he gets a reality_check:
// the first coup he plays once the interval has elapsed, as casinos do
// between rounds. A wallet that does not answer skips the check; the next
// coup asks again; the table is never held up.
//
// The event is his alone. It is stored with the change and published on
// "chemmy.player.<player_id>.reality_check", never on the table's
// subject, outside the table's gapless sequence (sequence 0): other
// watchers and consumers of chemmy.table.> never get it, and it carries
// only his own figures. WatchTable adds that subject to a player's watch
// and sends him his own checks for the table he watches.

// The player's answer (AnswerRealityCheck). He answers a check he was sent
// in his current session, once: "continue" is noted (Answered) and he
// plays on; "stop" ends his session: Stop is set, which makes him due to
// stand up like a player whose inactivity limit ran out (sessions.go
// idleCandidates: only between coups, a banker first giving up his bank
// as his game allows), at once: if the game lets him stand up now the
// answer stands him up before it returns, else the table's deadline
// (deadline.go) does as soon as the coup he plays in is over. The
// stand-up is a staff_action "stood_up_reality_check". The answer itself
// is a reality_check_answered event, his alone like the check.

// Until he answers a check he was sent, play pauses for him: nothing of
// his is staked (realityCheckAnswered, before any hold); a bank he holds
// already plays on, and his turn to bet passes when its time runs out.

// realityCheckAnswered refuses a stake of player while a reality check
// he was sent in his session waits for his answer:
// FAILED_PRECONDITION REALITY_CHECK_UNANSWERED, metadata "check_number".
func (t *table) realityCheckAnswered(player string) error {
	ss := t.Sessions[player]
	if ss == nil || ss.Checks <= ss.Answered {
		return nil
	}
	return errs.WithMetadata(codes.FailedPrecondition, domain, reasonRealityCheckUnanswered,
		map[string]string{"check_number": strconv.FormatInt(ss.Checks, 10)},
		"%s has not answered reality check %d: play is paused for him until he does (AnswerRealityCheck)", player, ss.Checks)
}

// realityChecks counts the coup settled in c in its players' sessions
// and adds to c the reality checks that are due.
func (s *Service) realityChecks(ctx context.Context, c *change) {
	coup := ""
	for i := len(c.events) - 1; i >= 0 && coup == ""; i-- {
		if c.events[i].GetCoupSettled() != nil {
			coup = c.events[i].GetCoupId()
		}
	}
	if coup == "" {
		return
	}
	t := c.t
	nets := map[string]int64{}
	if t.settled != nil && t.settled.coupID == coup {
		r := &roundRecord{}
		var fresh []string
		r.addTransfers(t.settled.transfers, &fresh)
		for _, p := range r.Players {
			nets[p.ID] = p.Net
		}
	}
	for _, p := range s.coupPlayers(c, coup, nets) {
		ss := t.Sessions[p]
		if ss == nil {
			continue // not seated (any more)
		}
		if ss.Seated.IsZero() {
			ss.Seated = c.now.UTC() // a session from before reality checks
		}
		ss.Coups++
		ss.Net += nets[p]
		interval := s.realityInterval(ctx, t, p)
		if interval <= 0 {
			continue
		}
		elapsed := c.now.Sub(ss.Seated)
		n := int64(elapsed / interval)
		if n <= ss.Checks {
			continue
		}
		ss.Checks = n
		c.private = append(c.private, &eventsv1.TableEvent{EventId: ulid.Make().String(), TableId: t.ID,
			OccurTime: timestamppb.New(c.now), Certification: t.Certification, CurrencyCode: t.Currency, CurrencyExponent: t.tableExponent(),
			OperatorId: t.operator(), Payload: &eventsv1.TableEvent_RealityCheck{RealityCheck: &eventsv1.RealityCheck{PlayerId: p, SessionId: ss.ID,
				SessionStartTime: timestamppb.New(ss.Seated), SessionElapsedMs: elapsed.Milliseconds(),
				CoupsPlayed: ss.Coups, SessionNet: ss.Net, IntervalMs: interval.Milliseconds(), CheckNumber: n}}})
	}
}

// coupPlayers are the players who played coup (a stake or the bank, as
// the round history names them, or money moved by its settlement: those
// of nets), sorted.
func (s *Service) coupPlayers(c *change, coup string, nets map[string]int64) []string {
	r := new(roundRecord)
	err := s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketRounds).Get([]byte(coup)); v != nil {
			return decodeRound(v, r)
		}
		return nil
	})
	if err != nil {
		s.log.Warn("reality checks: the round could not be read", "coup", coup, "err", err)
	}
	var fresh []string
	for _, ev := range c.events {
		if ev.GetCoupId() == coup {
			r.apply(ev, &fresh)
		}
	}
	var out []string
	for _, p := range r.Players {
		if p.Stake > 0 || p.Banker {
			out = append(out, p.ID)
		}
	}
	for p := range nets {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// realityInterval is player's reality-check interval at table t (0:
// none, or the wallet did not answer), read from the wallet at most once
// per realityIntervalTTL.
func (s *Service) realityInterval(ctx context.Context, t *table, player string) time.Duration {
	acct, now := t.account(player), s.now()
	if d, ok := s.intervals.get(acct, now); ok {
		return d
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	l, err := s.wallet.GetPlayerLimits(cctx, &walletv1.GetPlayerLimitsRequest{AccountId: acct, OperatorId: t.walletOperator()})
	if err != nil {
		s.log.Warn("reality check skipped: the player's limits could not be read", "table", t.ID, "player", player, "err", err)
		return 0
	}
	d := l.GetLimits().GetRealityCheckInterval().AsDuration()
	s.intervals.put(acct, d, now)
	return d
}

// watchSubjects are the subjects a watch of table tableID by v reads:
// the table's events, and for a player his own reality checks and
// answers.
func (v viewer) watchSubjects(tableID string) []string {
	subjects := []string{"chemmy.table." + tableID + ".>"}
	if v.known && v.caller.Role == auth.RolePlayer && v.caller.Subject != "" {
		subjects = append(subjects, realityCheckSubject(v.caller.Subject), answeredSubject(v.caller.Subject))
	}
	return subjects
}

// ownRealityCheck reports whether ev is a one-player event (private),
// and whether v watching table tableID since opened gets it (own): his
// own reality check at this table, made after the watch opened (older
// ones in the stream's replay window were before it).
func (v viewer) ownRealityCheck(ev *eventsv1.TableEvent, tableID string, opened time.Time) (own, private bool) {
	var player string
	switch {
	case ev.GetRealityCheck() != nil:
		player = ev.GetRealityCheck().GetPlayerId()
	case ev.GetRealityCheckAnswered() != nil:
		player = ev.GetRealityCheckAnswered().GetPlayerId()
	default:
		return false, false
	}
	return v.known && v.caller.Role == auth.RolePlayer && player == v.caller.Subject &&
		ev.GetTableId() == tableID && !ev.GetOccurTime().AsTime().Before(opened), true
}
