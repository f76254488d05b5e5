package tablesvc

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/odds"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
	"github.com/chemmy/chemmy/table-svc/game/oldbaccarat"
)

// oldAdapter is the shell's adapter of the old baccarat core (OLD-*): its
// state is the record's Old.
type oldAdapter struct {
	coreAdapter[oldbaccarat.State, oldbaccarat.Outcome]
}

// oldGame is the adapter the registry (games.go) holds: the core is
// oldbaccarat.Game, its state under "old_baccarat" in the record.
var oldGame = oldAdapter{coreAdapter[oldbaccarat.State, oldbaccarat.Outcome]{oldbaccarat.Game, "old_baccarat"}}

// oldMaxSeats bounds an old baccarat table's seats: a coup of p players
// deals up to 3p cards, and the shoe's cut card (at most 17 from the end
// of 104 cards) must leave the coup that brings it out enough to finish:
// 3p-1 <= 17.
const oldMaxSeats = 6

func (oldAdapter) name() string { return "old baccarat" }

// oldOf is the state of t, a table of this game; nil at another game's.
func oldOf(t *table) *oldbaccarat.State { return oldGame.of(t) }

func (oldAdapter) rules(m rulesHolder) proto.Message { return m.GetOldBaccaratRules() }

// open: the old game's house rules; its shoe is two decks (OLD-DECKS).
func (oldAdapter) open(req *tablev1.CreateTableRequest, sr *shellRules) (func(*table) error, error) {
	r, err := resolveOld(req.GetOldBaccaratRules())
	if err != nil {
		return nil, err
	}
	// Source: RULES.md OLD-DECKS (two full decks)
	sr.Decks, sr.CutCardFromEnd, sr.Burn = 2, oldCutCard(r.MaxSeats), 3
	sr.CertRealMoney = req.GetOldBaccaratRules().GetCertificationRealMoney()
	return func(t *table) error { _, err := createOld(t, r); return err }, nil
}

func (oldAdapter) renewsSpentShoe() bool { return false }

func (oldAdapter) coupID(t *table) string {
	if cp := oldOf(t).Coup; cp != nil {
		return cp.ID
	}
	return ""
}

// command maps the table's calls onto the old game: BidBank bids for the
// bank (OLD-BANKER), AcceptBank takes the bank offered after a baccarat
// (OLD-BACCARAT), PassBank and DeclineBank decline either, PlaceBet stakes
// (OLD-STAKE), DeclineBet sits the coup out, MoveTopCards is the banker's
// move after the cut (OLD-CUT), DecideDraw a draw (OLD-DRAW).
func (oldAdapter) command(_ *table, method string, req proto.Message, caller auth.Caller) (game.Command, error) {
	if err := noSide(req, "old baccarat"); err != nil {
		return nil, err
	}
	switch r := req.(type) {
	case *tablev1.JoinTableRequest:
		return oldbaccarat.Join{PlayerID: r.GetPlayerId()}, nil
	case *tablev1.LeaveTableRequest:
		return oldbaccarat.Leave{PlayerID: r.GetPlayerId()}, nil
	case *tablev1.BidBankRequest:
		return oldbaccarat.Bid{PlayerID: r.GetPlayerId(), Amount: r.GetAmount()}, nil
	case *tablev1.AcceptBankRequest:
		return oldbaccarat.Bid{PlayerID: r.GetPlayerId(), Amount: r.GetAmount()}, nil
	case *tablev1.PassBankRequest:
		return oldbaccarat.PassBank{PlayerID: r.GetPlayerId()}, nil
	case *tablev1.DeclineBankRequest:
		return oldbaccarat.PassBank{PlayerID: r.GetPlayerId()}, nil
	case *tablev1.PlaceBetRequest:
		if r.GetOverBank() || r.GetSpot() != tablev1.BetSpot_BET_SPOT_UNSPECIFIED {
			return nil, fail(codes.InvalidArgument, reasonWrongVariant, "over_bank and spot are other games' bets; an old baccarat stake is an amount")
		}
		return oldbaccarat.Stake{PlayerID: r.GetPlayerId(), Amount: r.GetAmount()}, nil
	case *tablev1.DeclineBetRequest:
		return oldbaccarat.PassStake{PlayerID: r.GetPlayerId()}, nil
	case *tablev1.MoveTopCardsRequest:
		return oldbaccarat.MoveTopCards{PlayerID: r.GetPlayerId(), N: r.GetCount()}, nil
	case *tablev1.DecideDrawRequest:
		switch r.GetChoice() {
		case tablev1.DrawChoice_DRAW_CHOICE_DRAW, tablev1.DrawChoice_DRAW_CHOICE_STAND:
		default:
			return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "choice must be DRAW_CHOICE_DRAW or DRAW_CHOICE_STAND")
		}
		return oldbaccarat.Decide{PlayerID: r.GetPlayerId(), Draw: r.GetChoice() == tablev1.DrawChoice_DRAW_CHOICE_DRAW}, nil
	case *tablev1.VoidCoupRequest:
		return oldbaccarat.Void{CoupID: r.GetCoupId(), Reason: r.GetReason(), By: caller.Subject, ByRole: string(caller.Role)}, nil
	case *tablev1.CloseTableRequest:
		return oldbaccarat.Close{Reason: r.GetReason(), By: caller.Subject, ByRole: string(caller.Role)}, nil
	}
	return nil, fail(codes.FailedPrecondition, reasonWrongVariant, "%s is not an old baccarat action (no banco, no gallery, no raise)", method)
}

// interrupt voids a coup that could not go on before its result.
func (oldAdapter) interrupt(t *table, reason string) game.Command {
	cp := oldOf(t).Coup
	if cp == nil || cp.Decided || cp.Settled || oldOf(t).Phase == oldbaccarat.PhaseSettling {
		return nil
	}
	return oldbaccarat.Void{CoupID: cp.ID, Reason: reason, By: "table-svc", ByRole: string(auth.RoleService)}
}

func (oldAdapter) sync(t *table) {
	syncCore(t, int8(oldOf(t).Phase), oldOf(t).Bookkeeping, oldOf(t).CoupsPlayed, oldOf(t).CoupSeq)
}

func (oldAdapter) carryOut(ctx context.Context, s *Service, t *table, eff game.Effect) (game.Command, bool, error) {
	switch e := eff.(type) {
	case oldbaccarat.MoveToBottom:
		_, err := s.shoe.MoveTopCardsToBottom(ctx, &shoev1.MoveTopCardsToBottomRequest{
			RequestId: "table/" + t.ID + "/" + e.RequestID, ShoeId: t.ShoeID, Count: e.N, AnnouncedBy: oldOf(t).BankerID})
		if err != nil {
			return nil, true, err
		}
		return oldbaccarat.MovedToBottom{}, true, nil
	case oldbaccarat.Settle:
		// The wallet computes the money from each punter's result and the
		// natural flag (rules.SettleOldResults). The core's nets go along
		// in the deprecated fields, for a wallet that predates outcome;
		// one that reads outcome requires them to be what it computes.
		req := &walletv1.SettleOldRequest{CoupId: e.CoupID, BankHoldId: e.BankHoldID, Natural: e.Natural, OperatorId: t.walletOperator()}
		for i, st := range e.Stakes {
			// Source: RULES.md OLD-SETTLE (the two punters who tie the
			// banker share the pool with him)
			split := e.Split && e.Outcomes[i] == rules.OutcomeStandOff
			req.Stakes = append(req.Stakes, &walletv1.OldStake{HoldId: st.HoldID, Amount: st.Amount,
				Outcome: walletv1.CoupOutcome(game.EventOutcome(e.Outcomes[i])), Net: e.Moves[i].Amount, Split: split})
		}
		req.BankerNet = e.Moves[len(e.Moves)-1].Amount
		resp, err := s.wallet.SettleOld(ctx, req)
		if err != nil {
			return nil, true, err
		}
		t.noteSettlement(e.CoupID, resp.GetTransfers())
		return oldbaccarat.Settled{NewBank: resp.GetNewBank()}, true, nil
	}
	return nil, false, nil
}

// oldPoints are the OLD-VALUES points of card codes.
func oldPoints(codes []string) int {
	var cards []rules.Card
	for _, c := range codes {
		if card, err := rules.ParseCard(c); err == nil {
			cards = append(cards, card)
		}
	}
	return rules.OldPoints(cards)
}

// view: each hand's cards as oldbaccarat.Sees shows them to v.
func (oldAdapter) view(t *table, v viewer) *tablev1.Table {
	o := oldOf(t)
	out := &tablev1.Table{
		TableId: t.ID, Variant: tablev1.Variant_VARIANT_OLD_BACCARAT, OldBaccaratRules: oldRulesProto(o.Rules, t.Rules.CertRealMoney),
		State: tablev1.TableState(o.Phase), ShoeId: o.ShoeID, ShoeNumber: o.ShoeNumber, CoupsPlayed: o.CoupsPlayed,
		CreateTime: timestamppb.New(t.Created), Certification: t.Certification, EventSequence: t.EventSeq,
		BankerPlayerId: o.BankerID, Bank: o.Bank, OfferedPlayerId: o.OfferedTo,
		Coup: oldCoupProto(o, o.Coup, v.look()), LastCoup: oldCoupProto(o, o.LastCoup, v.look()),
	}
	if d := oldbaccarat.Deadline(*o); !d.IsZero() {
		out.TurnDeadline = timestamppb.New(d)
	}
	if a := o.Auction; a != nil && len(a.Bids) > 0 {
		best := a.Bids[0]
		for _, b := range a.Bids {
			if b.Amount > best.Amount {
				best = b
			}
		}
		out.HighestBid, out.HighestBidderPlayerId = best.Amount, best.PlayerID
	}
	for _, st := range o.Seats {
		out.Seats = append(out.Seats, &tablev1.Seat{Number: st.Number, PlayerId: st.PlayerID})
	}
	return out
}

// oldCoupProto is cp, a coup of o, as v may see it.
func oldCoupProto(o *oldbaccarat.State, cp *oldbaccarat.Coup, v game.Viewer) *tablev1.Coup {
	if cp == nil {
		return nil
	}
	hand := func(h game.Hand, codes []string) ([]*shoev1.Card, int32) {
		cards, all := game.Cards(codes), true
		for i := range cards {
			if !oldbaccarat.Sees(*o, cp.ID, v, h, i) {
				cards[i], all = &shoev1.Card{FaceDown: true}, false
			}
		}
		if !all {
			return cards, 0
		}
		return cards, int32(oldPoints(codes))
	}
	out := &tablev1.Coup{CoupId: cp.ID, Number: cp.Number, BankerPlayerId: cp.BankerID, Bank: cp.Bank,
		Natural: cp.Natural, Settled: cp.Settled, BankerNet: cp.BankerNet, Voided: cp.Voided, VoidReason: cp.VoidReason}
	out.BankerCards, out.BankerTotal = hand(game.Hand{Name: eventsv1.Hand_HAND_BANKER}, cp.Banker)
	if cp.Settled {
		out.SettleTime = timestamppb.New(cp.SettleTime)
	}
	if o.Coup == cp && o.Phase == oldbaccarat.PhaseDecision {
		out.DecisionPlayerId = oldbaccarat.Decider(*o)
	}
	for i, h := range cp.Hands {
		out.Bets = append(out.Bets, &tablev1.Bet{PlayerId: h.PlayerID, Amount: h.Stake})
		ch := &tablev1.CoupHand{Hand: tablev1.Hand_HAND_PUNTER, HolderPlayerId: h.PlayerID}
		ch.Cards, ch.Total = hand(game.Hand{Name: eventsv1.Hand_HAND_PUNTER, Punter: h.PlayerID}, h.Cards)
		if cp.Decided {
			ch.Outcome = tablev1.Outcome(game.EventOutcome(cp.HandOutcome(i)))
		}
		out.Hands = append(out.Hands, ch)
	}
	return out
}

// resolveOld fills in the defaults of an old baccarat table's house rules
// (chemmy.table.v1.OldBaccaratRules) and checks them.
func resolveOld(in *tablev1.OldBaccaratRules) (oldbaccarat.Rules, error) {
	if in == nil {
		in = &tablev1.OldBaccaratRules{}
	}
	r := oldbaccarat.DefaultRules()
	r.MaxSeats = oldMaxSeats
	set32 := func(v *int32, x int32) {
		if x != 0 {
			*v = x
		}
	}
	set64 := func(v *int64, x int64) {
		if x != 0 {
			*v = x
		}
	}
	set32(&r.MaxSeats, in.GetMaxSeats())
	set64(&r.MinBank, in.GetMinimumBank())
	set64(&r.MinStake, in.GetMinStake())
	r.MaxStake = in.GetMaxStake()
	if in.MaxMoveTop != nil {
		r.MaxMoveTop = in.GetMaxMoveTop()
	}
	set32(&r.AuctionWindowMS, in.GetAuctionWindowMs())
	set32(&r.StakingWindowMS, in.GetStakingWindowMs())
	set32(&r.CutMS, in.GetCutTimeLimitMs())
	set32(&r.DecisionMS, in.GetDecisionTimeLimitMs())
	set32(&r.BankOfferMS, in.GetBankOfferTimeLimitMs())
	r.StandOnTimeout = in.GetStandOnTimeout()
	if r.MaxSeats < 3 || r.MaxSeats > oldMaxSeats {
		return r, fail(codes.InvalidArgument, reasonInvalidHouseRule, "max_seats must be 3..%d: a coup of more players could run out of the two decks after the cut card", oldMaxSeats)
	}
	if err := r.Validate(); err != nil {
		return r, coreError(err)
	}
	return r, nil
}

// oldCutCard is the cut card's place for a table of maxSeats: the coup of
// maxSeats players that brings it out deals at most 3*maxSeats-1 more cards.
func oldCutCard(maxSeats int32) int32 { return max(8, 3*maxSeats-1) }

func oldRulesProto(r oldbaccarat.Rules, certRealMoney bool) *tablev1.OldBaccaratRules {
	return &tablev1.OldBaccaratRules{
		MaxSeats: r.MaxSeats, MinimumBank: r.MinBank, MinStake: r.MinStake, MaxStake: r.MaxStake, MaxMoveTop: proto.Int32(r.MaxMoveTop),
		AuctionWindowMs: r.AuctionWindowMS, StakingWindowMs: r.StakingWindowMS, CutTimeLimitMs: r.CutMS,
		DecisionTimeLimitMs: r.DecisionMS, StandOnTimeout: r.StandOnTimeout, BankOfferTimeLimitMs: r.BankOfferMS,
		CertificationRealMoney: certRealMoney,
	}
}

// createOld makes t, a new table's record, an old baccarat table.
func createOld(t *table, r oldbaccarat.Rules) (*table, error) {
	st, err := oldbaccarat.New(r, t.ShoeID)
	if err != nil {
		return nil, coreError(err)
	}
	t.Variant, t.game = int32(tablev1.Variant_VARIANT_OLD_BACCARAT), &st
	oldGame.sync(t)
	return t, nil
}

// seated, standable, giveUpBank: the old game's idle rule
// (oldbaccarat.Seated, Standable, GiveUpBank; Leave ends the bank,
// OLD-BACCARAT).
func (oldAdapter) seated(t *table) []string { return oldbaccarat.Seated(*oldOf(t)) }

func (oldAdapter) standable(t *table) []string { return oldbaccarat.Standable(*oldOf(t)) }

func (oldAdapter) giveUpBank(t *table, p string) game.Command {
	return oldbaccarat.GiveUpBank(*oldOf(t), p)
}

// keepBank: the old game's banker keeping his bank after a settlement
// (oldbaccarat.KeptBank) leaves his seat when his limits say no
// (OLD-BACCARAT; limitKeep, bank_limits.go).
func (oldAdapter) keepBank(ctx context.Context, s *Service, c *change) error {
	banker, bank, giveUp, ok := oldbaccarat.KeptBank(*oldOf(c.t))
	if !ok {
		return nil
	}
	return s.limitKeep(ctx, c, banker, bank, giveUp)
}

// odds puts in out the exact odds of the next coup from shoe (package
// odds), under the house rules of t (nil: the game's defaults).
func (oldAdapter) odds(shoe odds.Shoe, t *table, out *tablev1.GetOddsResponse) error {
	variant := tablev1.Variant_VARIANT_OLD_BACCARAT
	// Per punter against the banker (odds.OldModel).
	o, err := odds.Old(shoe, odds.OldStrategy{})
	if err != nil {
		return oddsError(err)
	}
	out.Variant, out.Deals = variant, o.Deals.String()
	addCounted(out, o.Prob, []string{"punter_wins", "banker_wins", "tie", "natural", "punter_baccarat"},
		o.PunterWins, o.BankerWins, o.Ties, o.Naturals, o.PunterBaccarat)
	addBets(out, o.Bets)
	return nil
}

func (oldAdapter) advice(ctx context.Context, s *Service, t *table, req *tablev1.GetAdviceRequest) (*tablev1.GetAdviceResponse, error) {
	return nil, noAdvice()
}

func (oldAdapter) shoeVariant() shoev1.Variant { return shoev1.Variant_VARIANT_OLD }

func (oldAdapter) houseBanks() bool { return false }

func (oldAdapter) lobby(tb *tablev1.Table) (int32, int64) {
	return tb.GetOldBaccaratRules().GetMaxSeats(), tb.GetOldBaccaratRules().GetMinStake()
}

func (oldAdapter) bankHold(t *table) (string, int64) {
	o := oldOf(t)
	return o.BankHoldID, o.Bank
}
