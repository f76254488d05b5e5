package chemindefer

import (
	"fmt"
	"strconv"
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// New is the state of a new table with the resolved rules r: waiting for
// players.
func New(r Rules) State { return State{Rules: r, Phase: PhaseWaiting} }

// Game is the chemin de fer core as a game.Core; its methods are the
// package's Apply, Pending, Deadline and Restart. The assignment checks at
// compile time that the package keeps the contract.
var Game game.Core[State, Outcome] = core{}

// core implements game.Core with the package's functions.
type core struct{}

func (core) Apply(s State, in game.Input) (Outcome, error) { return Apply(s, in) }
func (core) Pending(s State) game.Effect                   { return Pending(s) }
func (core) Deadline(s State) time.Time                    { return Deadline(s) }
func (core) Restart(s State, now time.Time) (State, bool)  { return Restart(s, now) }

// Apply applies in.Cmd to s. s is not changed; on error (a *game.Error)
// nothing happened.
func Apply(s State, in game.Input) (Outcome, error) {
	st := s.clone()
	a := &applier{s: &st, in: in}
	if err := a.apply(in.Cmd); err != nil {
		return Outcome{}, err
	}
	if a.raise != nil {
		return Outcome{Outcome: game.Outcome[State]{State: s, Hold: a.Hold}, Raise: a.raise}, nil
	}
	if a.Hold == nil {
		if st.Phase == PhaseDealing {
			a.progress()
		}
		a.stamp()
	}
	out, err := game.Result(s, st, a.Changes, nil)
	return Outcome{Outcome: out}, err
}

func (a *applier) apply(cmd game.Command) error {
	s := a.s
	if s.Phase == PhaseClosed {
		switch cmd.(type) {
		case game.HoldsVoided, game.ShoeClosed, game.Tick, Tick, FeesCharged:
		default:
			return game.Refuse(game.FailedPrecondition, ReasonTableClosed, "the table is closed")
		}
	}
	switch c := cmd.(type) {
	case Join:
		return a.join(c)
	case AcceptBank:
		return a.acceptBank(c)
	case DeclineBank:
		return a.declineBank(c)
	case BidBank:
		return a.bidBank(c)
	case PlaceBet:
		return a.placeBet(c)
	case DeclineBet:
		return a.declineBet(c)
	case CallBanco:
		return a.callBanco(c)
	case DecideDraw:
		return a.decideDraw(c)
	case PassBank:
		return a.passBankCmd(c)
	case RaiseBank:
		return a.raiseBank(c)
	case JoinGallery:
		return a.joinGallery(c)
	case Leave:
		return a.leave(c)
	case Void:
		return a.voidCmd(c)
	case Close:
		return a.closeCmd(c)
	case game.Tick:
		return a.tick(nil)
	case Tick:
		return a.tick(c.LostRaises)
	case game.HoldsVoided:
		if len(s.PendingVoids) == 0 {
			return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no holds to release")
		}
		s.PendingVoids = nil
		return nil
	case game.ShoeClosed:
		if !s.ShoeToClose {
			return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no shoe to close")
		}
		s.ShoeToClose = false
		return nil
	case game.ShoeOpened:
		// Asked by NewShoe, or opened by the shell because the shoe
		// could deal no new coup (e.g. after a voided cut-card coup).
		s.CutCardOut = false
		return nil
	case FeesCharged:
		return a.feesCharged(c)
	case HoldsResized:
		if len(s.PendingResizes) == 0 {
			return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no holds to resize")
		}
		s.PendingResizes = nil
		return nil
	case game.CardDealt:
		return a.cardDealt(c)
	case Settled:
		return a.settled(c)
	}
	return game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "chemin de fer has no command %T", cmd)
}

// Pending is the effect the shell must carry out next, nil when none.
// Its request ids derive from the state: asked again, it is the same.
// Holds are released first (a banker who lost the bank pays his seat fee
// from what comes back to him), then the shoe of a closed table closed,
// seat fees charged, holds cut back before the deal, a new shoe opened
// after the cut card's coup, the coup's cards dealt, its settlement.
func Pending(s State) game.Effect {
	switch {
	case len(s.PendingVoids) > 0:
		return game.VoidHolds{HoldIDs: append([]string(nil), s.PendingVoids...)}
	case s.ShoeToClose:
		return game.CloseShoe{}
	case len(s.PendingFees) > 0:
		return ChargeFees{Fees: append([]SeatFee(nil), s.PendingFees...), HourlyFee: s.Rules.HourlyFee, Rounding: s.Rules.Rounding}
	case len(s.PendingResizes) > 0:
		return ResizeHolds{Resizes: append([]Resize(nil), s.PendingResizes...)}
	case s.CutCardOut && s.Phase != PhaseClosed && s.LastCoup != nil && s.LastCoup.Settled && (s.Coup == nil || s.Coup.CardsDealt == 0):
		// Source: RULES.md SHOE-RESHUFFLE: the cut card's coup is finished; the shoe closes and the next coup uses a new one.
		return game.NewShoe{}
	case s.Phase == PhaseDealing:
		cp := s.Coup
		hand, ok := dueCard(s)
		if !ok {
			return nil // unreachable: Apply leaves DEALING only waiting for a card
		}
		d := game.DealCard{RequestID: cp.ID + "/card/" + strconv.Itoa(cp.CardsDealt+1), CoupID: cp.ID, Hand: hand}
		if cp.CardsDealt == 0 {
			// Source: RULES.md CF-DEAL: the opening four, player first,
			// alternately, whatever the cards: dealt in one call.
			d.Then = game.Following(cp.ID, 2, "banker", "player", "banker")
			if !(cp.Banco && s.Rules.BancoFreePlay) {
				// Source: RULES.md CF-PLAYER-DRAW, CF-BANKER-DRAW: the
				// third cards the tableau forces, up to its first option,
				// in the same call (in a banco coup with banco_free_play
				// both hands choose, CF-BANCO-FREEDOM: none is forced).
				d.ThirdCards = game.Following(cp.ID, 5, "", "")
				d.Tableau = game.Tableau{BankerOption3vs9: s.Rules.Option3vs9, BankerOption5vs4: s.Rules.Option5vs4}
			}
		}
		return d
	case s.Phase == PhaseSettling:
		cp := s.Coup
		return Settle{
			CoupID: cp.ID, BankHoldID: s.BankHoldID, Outcome: cp.Outcome,
			CommissionBP: s.Rules.CommissionBP, Rounding: s.Rules.Rounding,
			// Source: RULES.md CF-BANK-WINS house rules first_coup_exempt, and
			// hourly_fee instead of commission.
			CommissionExempt: (s.Rules.FirstCoupFree && s.BankerCoups == 0) || s.Rules.HourlyFee > 0,
			Bets:             append([]Bet(nil), cp.Bets...),
		}
	}
	return nil
}

// dueCard is the hand ("player" or "banker") whose card the coup waits
// for: by the tableau, or by a recorded draw.
func dueCard(s State) (string, bool) {
	cp := s.Coup
	rc, err := EngineCoup(cp)
	if err != nil {
		return "", false
	}
	step, err := rules.NextStep(rc, s.Rules.EngineRules())
	if err != nil {
		return "", false
	}
	switch {
	case step.Kind == rules.StepDealPlayer, step.Kind == rules.StepPlayerChoice && cp.PlayerChoice == ChoiceDraw:
		return "player", true
	case step.Kind == rules.StepDealBanker, step.Kind == rules.StepBankerChoice && cp.BankerChoice == ChoiceDraw:
		return "banker", true
	}
	return "", false
}

// Deadline is when the core wants a Tick: when the time limit of the
// turn it waits for (a bank offer, an auction, a bet, a decision, a
// raise) runs out; zero when it waits for nobody.
func Deadline(s State) time.Time {
	if s.WaitKey == "" {
		return time.Time{}
	}
	return s.Deadline
}

// Turn names the turn the table waits for, and its time limit; "" when
// it waits for nobody. A new key starts a new time limit (Apply stamps
// WaitKey and Deadline).
func Turn(s State) (string, time.Duration) {
	r := s.Rules
	switch s.Phase {
	case PhaseOffering:
		return "offer/" + strconv.Itoa(s.Offers), turnLimit(r.OfferTimeMS)
	case PhaseAuction:
		// Every bid gives the others a new time limit.
		return "auction/" + strconv.Itoa(s.Auctions) + "/" + strconv.Itoa(len(s.Bids)), turnLimit(r.OfferTimeMS)
	case PhaseBetting:
		cp := s.Coup
		if cp == nil || cp.TurnPlayer() == "" {
			return "", 0 // nobody to wait for
		}
		if cp.SuiviAsked != "" {
			return "suivi/" + cp.ID, turnLimit(r.BetTimeMS)
		}
		// The punter is in the key: when the one in turn leaves, the next
		// gets a full time limit.
		return "bet/" + cp.ID + "/" + strconv.Itoa(cp.Round) + "/" + strconv.Itoa(cp.Turn) + "/" + cp.TurnPlayer(), turnLimit(r.BetTimeMS)
	case PhaseDecision:
		cp := s.Coup
		return "decision/" + cp.ID + "/" + strconv.Itoa(int(cp.DecisionHand)), turnLimit(r.DecisionTimeMS)
	case PhaseRaise:
		return "raise/" + s.Coup.ID, turnLimit(r.DecisionTimeMS)
	}
	return "", 0
}

// Restart gives the pending turn its full time limit again, counted from
// now (a restart of the service: a player is never timed out for the
// time it was down). It reports whether the deadline moved.
func Restart(s State, now time.Time) (State, bool) {
	key, limit := Turn(s)
	if key == "" || key != s.WaitKey {
		return s, false
	}
	full := now.Add(limit).UTC()
	if !s.Deadline.Before(full) {
		return s, false
	}
	s.Deadline = full
	return s, true
}

type applier struct {
	s  *State
	in game.Input
	game.Changes
	raise *Raise
}

func (a *applier) now() time.Time { return a.in.Now.UTC() }

// stamp starts the time limit of the turn the table now waits for,
// unless it is the same turn as before.
func (a *applier) stamp() {
	key, limit := Turn(*a.s)
	if key == a.s.WaitKey {
		return
	}
	a.s.WaitKey, a.s.Deadline = key, time.Time{}
	if key != "" {
		a.s.Deadline = a.now().Add(limit)
	}
}

// wantPhase is WRONG_STATE unless the table is in p.
func (a *applier) wantPhase(p Phase) error {
	if a.s.Phase != p {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "table is %s, not %s", a.s.Phase, p)
	}
	return nil
}

// String is the phase's TableState name.
func (p Phase) String() string {
	names := map[Phase]string{
		PhaseWaiting: "TABLE_STATE_WAITING_FOR_PLAYERS", PhaseOffering: "TABLE_STATE_OFFERING_BANK", PhaseBetting: "TABLE_STATE_BETTING",
		PhaseDealing: "TABLE_STATE_DEALING", PhaseDecision: "TABLE_STATE_DECISION", PhaseSettling: "TABLE_STATE_SETTLING",
		PhaseAuction: "TABLE_STATE_AUCTION", PhaseRaise: "TABLE_STATE_BANK_RAISE", PhaseClosed: "TABLE_STATE_CLOSED",
	}
	if n, ok := names[p]; ok {
		return n
	}
	return strconv.Itoa(int(p))
}

// String describes the state in one line, for logs and test failures.
func (s State) String() string {
	coup := "none"
	if cp := s.Coup; cp != nil {
		coup = fmt.Sprintf("%s#%d bank=%d bets=%v P=%v B=%v", cp.ID, cp.Number, cp.Bank, cp.Bets, cp.Player, cp.Banker)
	}
	return fmt.Sprintf("phase=%s banker=%q bank=%d seats=%d coup=%s played=%d voids=%d resizes=%d fees=%d",
		s.Phase, s.BankerID, s.Bank, len(s.Seats), coup, s.CoupsPlayed, len(s.PendingVoids), len(s.PendingResizes), len(s.PendingFees))
}

// eventOutcome is the outcome from the bank's side in events.
func eventOutcome(o rules.Outcome) eventsv1.Outcome { return game.EventOutcome(o) }
