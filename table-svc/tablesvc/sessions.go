package tablesvc

import (
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// Player sessions. Each seating opens a session: a ULID the seat shows
// (Seat.session_id) and player_seated carries, kept in the table's record
// with the time of the player's last action at the table (any request of
// his own, in every game: a bet or a stake, a banco, a bet or stake
// declined, a decision, a bank accepted, declined, bid for, raised or
// passed, a move of top cards, the seating itself). The session
// ends when he leaves his seat (player_left).
//
// At a table with house rule inactivity_limit_ms (every game: HouseRules
// and each game's rules carry it), a seated player idle for that long is
// stood up between coups through the core's Leave command (the path of
// LeaveTable), a banker first giving up his bank as his game allows
// (sessions_games.go: chemin de fer's banker passes it, CF-PASS;
// banque's passes it and it is auctioned again, BQ-BANK; the old
// baccarat's leaves his seat and the bank ends with it, OLD-BACCARAT;
// punto banco has no player banker). Never while he has a bet or a stake
// in the coup in play, never as the banker once a bet is against his
// bank, never as the highest bidder of an auction (any bidder at the old
// baccarat), never while a coup is dealt, decided or settled. The time
// he is due is a deadline of the table like its turns' (deadline.go:
// expireDue), so it survives restarts; it counts from the later of his
// last action and the service's start (nobody is stood up for the time
// the service was down). Each standing up is a staff_action
// "stood_up_inactive" (actor table-svc, role service) after the
// player_left.

// Bounds of house rule inactivity_limit_ms.
const (
	minInactivityMS = 10000
	maxInactivityMS = 86400000
)

// followSeats opens a session when ev seats a player (and stamps its id
// on ev) and ends it when ev frees his seat.
func (t *table) followSeats(ev proto.Message, now time.Time) {
	switch e := ev.(type) {
	case *eventsv1.PlayerSeated:
		if t.Sessions == nil {
			t.Sessions = map[string]*session{}
		}
		ss := &session{ID: ulid.Make().String(), Active: now.UTC(), Seated: now.UTC()}
		t.Sessions[e.GetPlayerId()], e.SessionId = ss, ss.ID
	case *eventsv1.PlayerLeft:
		if e.GetSeatNumber() != 0 {
			delete(t.Sessions, e.GetPlayerId())
		}
	}
}

// touch notes an action of player at the table.
func (t *table) touch(player string, now time.Time) {
	if ss := t.Sessions[player]; ss != nil {
		ss.Active = now.UTC()
	}
}

// idleCandidates are the seated players of a table whom their game's
// rules allow to stand up now (standable), with when each is due: at a
// table with an inactivity limit, when it runs out; a player who answered
// a reality check "stop", at once (realitycheck.go); none while a coup is
// in play.
func (s *Service) idleCandidates(t *table) map[string]time.Time {
	limit := time.Duration(t.Rules.InactivityMS) * time.Millisecond
	if limit <= 0 && !stopping(t) {
		return nil
	}
	out := map[string]time.Time{}
	for _, p := range standable(t) {
		if ss := t.Sessions[p]; ss != nil && !ss.Stop.IsZero() {
			out[p] = ss.Stop
			continue
		}
		if limit <= 0 {
			continue
		}
		since := s.started
		if ss := t.Sessions[p]; ss != nil && ss.Active.After(since) {
			since = ss.Active
		}
		out[p] = since.Add(limit)
	}
	return out
}

// idleDue is when the first idle player of t is due to stand up; false
// when none is.
func (s *Service) idleDue(t *table) (time.Time, bool) {
	var first time.Time
	for _, due := range s.idleCandidates(t) {
		if first.IsZero() || due.Before(first) {
			first = due
		}
	}
	return first, !first.IsZero()
}

// inactivityLimit is house rule inactivity_limit_ms of a new table's
// game, from whichever of req's rules is given; INVALID_ARGUMENT
// INVALID_HOUSE_RULE outside 0 or minInactivityMS..maxInactivityMS.
func inactivityLimit(req *tablev1.CreateTableRequest) (int32, error) {
	ms := req.GetHouseRules().GetInactivityLimitMs()
	for _, v := range []int32{req.GetPuntoBancoRules().GetInactivityLimitMs(), req.GetOldBaccaratRules().GetInactivityLimitMs(),
		req.GetBanqueRules().GetInactivityLimitMs()} {
		if v != 0 {
			ms = v
		}
	}
	if ms != 0 && (ms < minInactivityMS || ms > maxInactivityMS) {
		return 0, fail(codes.InvalidArgument, reasonInvalidHouseRule, "inactivity_limit_ms must be 0 or %d..%d, got %d", minInactivityMS, maxInactivityMS, ms)
	}
	return ms, nil
}

// showInactivity puts the table's inactivity limit in the rules of its
// game that out shows (chemin de fer's HouseRules already carry it).
func showInactivity(t *table, out *tablev1.Table) {
	ms := t.Rules.InactivityMS
	switch {
	case out.GetPuntoBancoRules() != nil:
		out.PuntoBancoRules.InactivityLimitMs = ms
	case out.GetOldBaccaratRules() != nil:
		out.OldBaccaratRules.InactivityLimitMs = ms
	case out.GetBanqueRules() != nil:
		out.BanqueRules.InactivityLimitMs = ms
	}
}

// realityCheckSubject is the NATS subject of player's reality checks.
func realityCheckSubject(player string) string { return "chemmy.player." + player + ".reality_check" }

// answeredSubject is the NATS subject of player's answers to them.
func answeredSubject(player string) string {
	return "chemmy.player." + player + ".reality_check_answered"
}

// privateSubject is the subject of a one-player event ev: a reality check
// or an answer to one.
func privateSubject(ev *eventsv1.TableEvent) string {
	if a := ev.GetRealityCheckAnswered(); a != nil {
		return answeredSubject(a.GetPlayerId())
	}
	return realityCheckSubject(ev.GetRealityCheck().GetPlayerId())
}

// stoppedAction is the staff_action of a player stood up after he
// answered a reality check "stop".
const stoppedAction = "stood_up_reality_check"

// stoppedDetail is that staff_action's detail.
func stoppedDetail(p string, ss *session) string {
	return fmt.Sprintf("player %s, session %s, stopped at reality check %d", p, ss.ID, ss.Answered)
}

// stopping reports whether a player of t answered a reality check "stop"
// and is still seated.
func stopping(t *table) bool {
	for _, ss := range t.Sessions {
		if !ss.Stop.IsZero() {
			return true
		}
	}
	return false
}
