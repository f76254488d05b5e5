package tablesvc

import (
	"context"
	"time"

	"github.com/oklog/ulid/v2"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/table-svc/game/chemindefer"
)

// Player sessions. Each seating opens a session: a ULID the seat shows
// (Seat.session_id) and player_seated carries, kept in the table's record
// with the time of the player's last action at the table (any request of
// his own: a bet, a banco, a bet declined, a decision, a bank accepted,
// declined, bid for, raised or passed, the seating itself). The session
// ends when he leaves his seat (player_left).
//
// At a chemin de fer table with house rule inactivity_limit_ms, a seated
// player idle for that long is stood up between coups through the core's
// Leave command (the path of LeaveTable; a banker passes the bank,
// CF-PASS): never while he has a bet in the coup in play, never as the
// banker once a bet is against his bank, never as the highest bidder of
// an auction, never while a coup is dealt, decided or settled. The time
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

// session is a seated player's session at a table.
type session struct {
	ID string `json:"id"`
	// Active is the time of his last action at the table.
	Active time.Time `json:"active"`
	// Seated is when the session started; Coups, Net and Checks are his
	// coups played, their net result and the reality checks he had in it
	// (realitycheck.go).
	Seated time.Time `json:"seated,omitzero"`
	Coups  int64     `json:"coups,omitempty"`
	Net    int64     `json:"net,omitempty"`
	Checks int64     `json:"checks,omitempty"`
}

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

// idleCandidates are the seated players of a chemin de fer table with an
// inactivity limit whom the rules allow to stand up now, with when each
// is due; none while a coup is in play.
func (s *Service) idleCandidates(t *table) map[string]time.Time {
	limit := time.Duration(t.Rules.InactivityMS) * time.Millisecond
	if !t.cf() || limit <= 0 {
		return nil
	}
	switch t.Phase {
	case chemindefer.PhaseDealing, chemindefer.PhaseDecision, chemindefer.PhaseSettling, chemindefer.PhaseRaise, chemindefer.PhaseClosed:
		return nil
	}
	bets := t.Coup != nil && (len(t.Coup.Bets) > 0 || t.Coup.Banco)
	out := map[string]time.Time{}
	for _, st := range t.Seats {
		p := st.PlayerID
		if t.HasBet(p) || p == t.BankerID && bets {
			continue
		}
		if n := len(t.Bids); t.Phase == chemindefer.PhaseAuction && n > 0 && t.Bids[n-1].PlayerID == p {
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

// standUpIdle stands up, under the table's lock, every player of t whose
// inactivity limit has run out at now (in seat order), in one change.
// A stand-up the core refuses is logged and his session's clock starts
// again (he is not retried at once).
func (s *Service) standUpIdle(ctx context.Context, t *table, now time.Time) error {
	c := &change{t: t, now: s.now()}
	svc := auth.Caller{Subject: "table-svc", Role: auth.RoleService}
	for _, st := range append([]chemindefer.Seat(nil), t.Seats...) {
		p := st.PlayerID
		due, ok := s.idleCandidates(t)[p]
		if !ok || due.After(now) {
			continue
		}
		detail := "player " + p
		if ss := t.Sessions[p]; ss != nil {
			detail += ", session " + ss.ID + ", inactive since " + ss.Active.Format(time.RFC3339)
		}
		cmd, err := t.core().command(t, "LeaveTable", &tablev1.LeaveTableRequest{TableId: t.ID, PlayerId: p}, svc)
		if err == nil {
			err = s.applyCore(ctx, c, cmd)
		}
		if err == nil {
			c.emit("", &eventsv1.StaffAction{Action: "stood_up_inactive", ActorId: svc.Subject, ActorRole: string(svc.Role), Detail: detail})
		} else {
			s.log.Warn("an idle player could not be stood up; his inactivity counts again from now", "table", t.ID, "player", p, "err", err)
			if t.Sessions == nil {
				t.Sessions = map[string]*session{}
			}
			if t.Sessions[p] == nil {
				t.Sessions[p] = &session{}
			}
			t.Sessions[p].Active = now.UTC()
		}
	}
	if err := s.save(c, "", nil, nil); err != nil {
		return err
	}
	return s.advance(ctx, t.ID)
}
