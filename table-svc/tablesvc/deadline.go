package tablesvc

import (
	"context"
	"slices"
	"strconv"
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// defaultTurnMS is the default time limit of every turn: a bet, a
// decision, a bank offer (house rules *_time_limit_ms).
const defaultTurnMS = 30000

// waitKey names the turn a table waits for, and its time limit in ms; ""
// when the table waits for nobody. A new key starts a new time limit.
func waitKey(t *table) (string, int32) {
	if t.coreTable() {
		return "", 0 // a core's timers are its own (coreDeadline)
	}
	switch t.State {
	case stateOffering:
		return "offer/" + strconv.Itoa(t.Offers), t.Rules.OfferTimeMS
	case stateAuction:
		// Every bid gives the others a new time limit.
		return "auction/" + strconv.Itoa(t.Auctions) + "/" + strconv.Itoa(len(t.Bids)), t.Rules.OfferTimeMS
	case stateBetting:
		cp := t.Coup
		if cp.turnPlayer() == "" {
			return "", 0 // nobody to wait for
		}
		if cp.SuiviAsked != "" {
			return "suivi/" + cp.ID, t.Rules.BetTimeMS
		}
		// The punter is in the key: when the one in turn leaves, the next
		// gets a full time limit.
		return "bet/" + cp.ID + "/" + strconv.Itoa(cp.Round) + "/" + strconv.Itoa(cp.Turn) + "/" + cp.turnPlayer(), t.Rules.BetTimeMS
	case stateDecision:
		cp := t.Coup
		return "decision/" + cp.ID + "/" + strconv.Itoa(int(cp.DecisionHand)), t.Rules.DecisionTimeMS
	case stateRaise:
		return "raise/" + t.Coup.ID, t.Rules.DecisionTimeMS
	}
	return "", 0
}

// stampDeadline starts the time limit of the turn the table now waits
// for, unless it is the same turn as before.
func (s *Service) stampDeadline(t *table) {
	if t.coreTable() {
		coreDeadline(t)
		return
	}
	key, ms := waitKey(t)
	if key == t.WaitKey {
		return
	}
	t.WaitKey = key
	t.Deadline = time.Time{}
	if key != "" {
		t.Deadline = s.now().Add(time.Duration(ms) * time.Millisecond).UTC()
	}
}

// track keeps the in-memory index of deadlines in step with a saved table.
func (s *Service) track(t *table) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.WaitKey == "" {
		delete(s.deadlines, t.ID)
		return
	}
	s.deadlines[t.ID] = t.Deadline
}

// expireDue acts, for every table whose turn has run out, as the house
// rules say (RULES.md, defaults when a decision's time runs out): a punter
// who has not bet passes; the player on 5 draws; the banker at an option
// cell draws; a bank not accepted in time is offered to the next in turn;
// an auction whose time runs out goes to the highest bid; a banker who does
// not answer over-bank bets sees the excess removed.
// Each timeout is an event (turn_timed_out).
func (s *Service) expireDue(ctx context.Context) {
	now := s.now()
	s.mu.Lock()
	var due []string
	for id, d := range s.deadlines {
		if !d.After(now) {
			due = append(due, id)
		}
	}
	s.mu.Unlock()
	slices.Sort(due) // a fixed order: the simulation replays it
	for _, id := range due {
		if err := s.expire(ctx, id, now); err != nil && ctx.Err() == nil {
			s.log.Warn("timeout (or the step it led to) not applied; will retry", "table", id, "err", err)
		}
	}
}

// timeoutChoice is what the table does for a decision whose time ran
// out: what the tableau does (CF-PLAYER-DRAW, CF-BANKER-DRAW), even under
// banco free play (CF-BANCO-FREEDOM frees the holder, not the clock), and
// draw at an option cell (RULES.md, "What the sources leave to the
// house": the player on 5 draws, the banker at an option draws).
func timeoutChoice(t *table) choice {
	cp := t.Coup
	rc, err := engineCoup(cp)
	if err != nil || len(rc.Player) < 2 || len(rc.Banker) < 2 {
		return choiceDraw
	}
	var d rules.Decision
	if cp.DecisionHand == int32(eventsv1.Hand_HAND_BANKER) {
		var third *rules.Card
		if len(rc.Player) == 3 {
			third = &rc.Player[2]
		}
		d = rules.BankerDecision(rules.Total(rc.Banker[:2]), third, t.Rules.engineRules())
	} else {
		d = rules.PlayerDecision(rules.Total(rc.Player[:2]))
	}
	if d == rules.DecisionStand {
		return choiceStand
	}
	return choiceDraw
}

func (s *Service) expire(ctx context.Context, id string, now time.Time) error {
	unlock := s.lock(id)
	defer unlock()
	t, err := s.load(id)
	if err != nil {
		return err
	}
	if t.WaitKey == "" || t.Deadline.After(now) {
		s.track(t)
		return nil
	}
	c := &change{t: t, now: s.now()}
	if t.coreTable() {
		// The core's own timer (a betting window, a pause): a Tick.
		if err := s.applyCore(ctx, c, game.Tick{}); err != nil {
			return err
		}
		if err := s.save(c, "", nil, nil); err != nil {
			return err
		}
		return s.advance(ctx, id)
	}
	timedOut := func(player, turn, action string, coupID string) {
		c.emit(coupID, &eventsv1.TurnTimedOut{PlayerId: player, Turn: turn, Action: action})
	}
	switch t.State {
	case stateOffering:
		if t.OpenOffer > 0 {
			// Nobody took the passed bank at its price: offered in turn.
			timedOut("", "bank_offer", "bank_offered_on", "")
			offerBank(c, t.OpenOfferFrom)
			break
		}
		prev := t.OfferedID
		timedOut(prev, "bank_offer", "bank_offered_on", "")
		offerBank(c, prev)
	case stateAuction:
		timedOut("", "bank_auction", "auction_closed", "")
		closeAuction(c)
	case stateRaise:
		// The banker did not raise: the excess bets are removed (CF-BANK-RAISE).
		timedOut(t.BankerID, "bank_raise", "excess_bets_removed", t.Coup.ID)
		s.trimExcess(c)
	case stateBetting:
		cp := t.Coup
		p := cp.turnPlayer()
		if cp.SuiviAsked != "" {
			// The banco suivi holder did not take the banco over: it stands.
			timedOut(p, "banco_suivi", "banco_left_standing", cp.ID)
			declineSuivi(c)
			break
		}
		timedOut(p, "bet", "bet_declined", cp.ID)
		cp.Turn++
		c.emit(cp.ID, &eventsv1.BetDeclined{PlayerId: p})
		closeBetting(c)
	case stateDecision:
		cp := t.Coup
		ch := timeoutChoice(t)
		action := "draw"
		if ch == choiceStand {
			action = "stand"
		}
		timedOut(cp.DecisionBy, "decision", action, cp.ID)
		recordChoice(c, ch, cp.DecisionBy, false)
	default:
		return nil
	}
	if err := s.save(c, "", nil, nil); err != nil {
		return err
	}
	return s.advance(ctx, id)
}
