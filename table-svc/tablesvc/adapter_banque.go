package tablesvc

import (
	"context"
	"fmt"
	"math/big"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/odds"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
	"github.com/chemmy/chemmy/table-svc/game/banque"
)

// banqueAdapter is the shell's adapter of the baccarat banque core (BQ-*):
// its state is the record's Banque.
type banqueAdapter struct {
	coreAdapter[banque.State, banque.Outcome]
}

// banqueGame is the adapter the registry (games.go) holds: the core is
// banque.Game, its state under "banque" in the record.
var banqueGame = banqueAdapter{coreAdapter[banque.State, banque.Outcome]{banque.Game, "banque"}}

func (banqueAdapter) name() string { return "baccarat banque" }

// banqueOf is the state of t, a table of this game; nil at another game's.
func banqueOf(t *table) *banque.State { return banqueGame.of(t) }

func (banqueAdapter) rules(m rulesHolder) proto.Message { return m.GetBanqueRules() }

// open: baccarat banque's house rules; its shoe is three decks
// (BQ-DECKS).
func (banqueAdapter) open(req *tablev1.CreateTableRequest, sr *shellRules) (func(*table) error, error) {
	r, err := resolveBanque(req.GetBanqueRules())
	if err != nil {
		return nil, err
	}
	// Source: RULES.md BQ-DECKS (three decks)
	sr.Decks, sr.CutCardFromEnd, sr.Burn = r.Decks, r.CutCardFromEnd, r.Burn
	sr.CertRealMoney = req.GetBanqueRules().GetCertificationRealMoney()
	return func(t *table) error { _, err := createBanque(t, r); return err }, nil
}

func (banqueAdapter) renewsSpentShoe() bool { return false }

func (banqueAdapter) coupID(t *table) string {
	if cp := banqueOf(t).Coup; cp != nil {
		return cp.ID
	}
	return ""
}

var banqueHands = map[tablev1.Hand]banque.Hand{
	tablev1.Hand_HAND_RIGHT: banque.HandRight, tablev1.Hand_HAND_LEFT: banque.HandLeft, tablev1.Hand_HAND_BANKER: banque.HandBanker,
}

// command maps the table's calls onto banque: JoinTable on a side,
// BidBank and DeclineBank in the bank's auction (BQ-BANK), PlaceBet on a
// side or à cheval in the punter's turn and DeclineBet to pass (BQ-BETS),
// DecideDraw for a hand's player or the banker (BQ-PLAY), PassBank.
func (banqueAdapter) command(t *table, method string, req proto.Message, caller auth.Caller) (game.Command, error) {
	switch r := req.(type) {
	case *tablev1.JoinTableRequest:
		if r.GetSide() != tablev1.BanqueSide_BANQUE_SIDE_RIGHT && r.GetSide() != tablev1.BanqueSide_BANQUE_SIDE_LEFT {
			return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "side must be BANQUE_SIDE_RIGHT or BANQUE_SIDE_LEFT at a banque table")
		}
		return banque.Join{PlayerID: r.GetPlayerId(), Side: banque.Side(r.GetSide())}, nil
	case *tablev1.LeaveTableRequest:
		return banque.Leave{PlayerID: r.GetPlayerId()}, nil
	case *tablev1.BidBankRequest:
		if r.GetAmount() <= 0 {
			return nil, fail(codes.InvalidArgument, reasonInvalidAmount, "amount must be > 0 (DeclineBank declines)")
		}
		return banque.Bid{PlayerID: r.GetPlayerId(), Amount: r.GetAmount()}, nil
	case *tablev1.DeclineBankRequest:
		return banque.Bid{PlayerID: r.GetPlayerId()}, nil
	case *tablev1.PassBankRequest:
		return banque.PassBank{PlayerID: r.GetPlayerId()}, nil
	case *tablev1.PlaceBetRequest:
		if r.GetOverBank() || r.GetSpot() != tablev1.BetSpot_BET_SPOT_UNSPECIFIED {
			return nil, fail(codes.InvalidArgument, reasonWrongVariant, "over_bank and spot are other games' bets; a banque bet names a side")
		}
		if r.GetSide() == tablev1.BanqueSide_BANQUE_SIDE_UNSPECIFIED {
			return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "side is required at a banque table (RIGHT, LEFT or CHEVAL)")
		}
		return banque.PlaceBet{PlayerID: r.GetPlayerId(), Side: banque.Side(r.GetSide()), Amount: r.GetAmount()}, nil
	case *tablev1.DeclineBetRequest:
		return banque.Pass{PlayerID: r.GetPlayerId()}, nil
	case *tablev1.CallBancoRequest:
		return banque.CallBanco{PlayerID: r.GetPlayerId()}, nil
	case *tablev1.DecideDrawRequest:
		switch r.GetChoice() {
		case tablev1.DrawChoice_DRAW_CHOICE_DRAW, tablev1.DrawChoice_DRAW_CHOICE_STAND:
		default:
			return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "choice must be DRAW_CHOICE_DRAW or DRAW_CHOICE_STAND")
		}
		hand, ok := banqueHands[r.GetHand()]
		switch {
		case r.GetHand() == tablev1.Hand_HAND_UNSPECIFIED && (banqueOf(t).Coup == nil || banqueOf(t).Coup.Await == ""):
			return nil, fail(codes.FailedPrecondition, reasonWrongState, "no decision is pending at this table")
		case r.GetHand() == tablev1.Hand_HAND_UNSPECIFIED:
			hand = banqueOf(t).Coup.Await
		case !ok:
			return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "hand must be HAND_RIGHT, HAND_LEFT or HAND_BANKER at a banque table")
		}
		return banque.Decide{PlayerID: r.GetPlayerId(), Hand: hand, Draw: r.GetChoice() == tablev1.DrawChoice_DRAW_CHOICE_DRAW}, nil
	case *tablev1.VoidCoupRequest:
		return banque.Void{CoupID: r.GetCoupId(), Reason: r.GetReason(), By: caller.Subject, ByRole: string(caller.Role)}, nil
	case *tablev1.CloseTableRequest:
		return banque.Close{Reason: r.GetReason(), By: caller.Subject, ByRole: string(caller.Role)}, nil
	}
	return nil, fail(codes.FailedPrecondition, reasonWrongVariant, "%s is not a baccarat banque action", method)
}

// interrupt voids a coup that could not go on before its result.
func (banqueAdapter) interrupt(t *table, reason string) game.Command {
	cp := banqueOf(t).Coup
	if cp == nil || cp.Decided || banqueOf(t).Phase != banque.PhaseDealing {
		return nil
	}
	return banque.Void{CoupID: cp.ID, Reason: reason, By: "table-svc", ByRole: string(auth.RoleService)}
}

func (banqueAdapter) sync(t *table) {
	syncCore(t, int8(banqueOf(t).Phase), banqueOf(t).Bookkeeping, banqueOf(t).CoupsPlayed, banqueOf(t).CoupSeq)
}

func (banqueAdapter) carryOut(ctx context.Context, s *Service, t *table, eff game.Effect) (game.Command, bool, error) {
	switch e := eff.(type) {
	case banque.ChargeFee:
		// Source: RULES.md BQ-BANK (the highest bidder pays the house 2.5% of the bid)
		reqID := "table/" + t.ID + "/" + e.RequestID
		round, err := s.beginFeeRound(t, reqID, e.PlayerID)
		if err != nil {
			return nil, true, fmt.Errorf("record auction fee %s: %w", reqID, err)
		}
		resp, err := s.wallet.ChargeFee(ctx, &walletv1.ChargeFeeRequest{
			RequestId: reqID, AccountId: t.account(e.PlayerID), FeeType: walletv1.FeeType_FEE_TYPE_BANK_AUCTION,
			Bid: e.Bid, Rounding: walletv1.CommissionRounding(e.Rounding), Reference: "tables/" + t.ID + "/auctions/" + e.RequestID,
			OperatorId: t.walletOperator()})
		if r := errs.Reason(err); r == reasonInsufficientFunds || r == reasonLimitReached {
			// Refused (his balance, or his loss limits: a fee is a loss).
			s.endFeeRound(round, 0, false)
			return banque.FeeRefused{Reason: err.Error()}, true, nil
		}
		if err != nil {
			return nil, true, err
		}
		s.endFeeRound(round, resp.GetFee(), true)
		return banque.FeeCharged{Fee: resp.GetFee()}, true, nil
	case banque.Settle:
		req := &walletv1.SettleBanqueRequest{CoupId: e.CoupID, BankHoldId: e.BankHoldID, OperatorId: t.walletOperator(),
			Right: walletv1.CoupOutcome(game.EventOutcome(e.Right)), Left: walletv1.CoupOutcome(game.EventOutcome(e.Left)),
			CommissionBp: e.CommissionBP, CommissionRounding: walletv1.CommissionRounding(e.Rounding)}
		for _, b := range e.Bets {
			req.Bets = append(req.Bets, &walletv1.BanqueBet{HoldId: b.HoldID, Amount: b.Amount, Side: walletv1.BanqueSide(b.Side)})
		}
		resp, err := s.wallet.SettleBanque(ctx, req)
		if err != nil {
			return nil, true, err
		}
		if len(resp.GetResults()) != len(e.Bets) {
			return nil, true, fmt.Errorf("settle coup %s: %d results for %d bets", e.CoupID, len(resp.GetResults()), len(e.Bets))
		}
		t.noteSettlement(e.CoupID, resp.GetTransfers())
		out := banque.Settled{BankerWinnings: resp.GetBankerWinnings(), Commission: resp.GetCommission(), NewBank: resp.GetNewBank()}
		for _, r := range resp.GetResults() {
			out.Bets = append(out.Bets, banque.Bet{Won: r.GetWon(), Lost: r.GetLost()})
		}
		return out, true, nil
	}
	return nil, false, nil
}

// view: each card as banque.Sees shows it to v.
func (banqueAdapter) view(t *table, v viewer) *tablev1.Table {
	b := banqueOf(t)
	out := &tablev1.Table{
		TableId: t.ID, Variant: tablev1.Variant_VARIANT_BACCARAT_BANQUE, BanqueRules: banqueRulesProto(b.Rules, t.Rules.CertRealMoney),
		State: tablev1.TableState(b.Phase), ShoeId: b.ShoeID, ShoeNumber: b.ShoeNumber, CoupsPlayed: b.CoupsPlayed,
		CreateTime: timestamppb.New(t.Created), Certification: t.Certification, EventSequence: t.EventSeq,
		BankerPlayerId: b.Banker, Bank: b.Bank, RightHandPlayerId: b.RightHolder, LeftHandPlayerId: b.LeftHolder,
		Coup: banqueCoupProto(b, b.Coup, v.look()), LastCoup: banqueCoupProto(b, b.LastCoup, v.look()),
	}
	if d := banque.Deadline(*b); !d.IsZero() {
		out.TurnDeadline = timestamppb.New(d)
	}
	if a := b.Auction; a != nil {
		out.HighestBid, out.HighestBidderPlayerId = a.HighBid, a.HighPlayerID
	}
	for _, st := range b.Seats {
		out.Seats = append(out.Seats, &tablev1.Seat{Number: st.Number, PlayerId: st.PlayerID, Side: tablev1.BanqueSide(st.Side)})
	}
	return out
}

// banqueCoupProto is cp, a coup of b, as v may see it.
func banqueCoupProto(b *banque.State, cp *banque.Coup, v game.Viewer) *tablev1.Coup {
	if cp == nil {
		return nil
	}
	hand := func(h tablev1.Hand, codes []string) ([]*shoev1.Card, int32) {
		cards, all := game.Cards(codes), true
		for i := range cards {
			if !banque.Sees(*b, cp.ID, v, game.Hand{Name: eventsv1.Hand(h)}, i) {
				cards[i], all = &shoev1.Card{FaceDown: true}, false
			}
		}
		if !all {
			return cards, 0
		}
		total, _ := handTotal(codes)
		return cards, int32(total)
	}
	out := &tablev1.Coup{CoupId: cp.ID, Number: cp.Number, BankerPlayerId: b.Banker, Settled: cp.Settled, Commission: cp.Commission,
		BankerNet: cp.BankerWinnings - cp.Commission, Voided: cp.Voided, VoidReason: cp.VoidReason}
	out.BankerCards, out.BankerTotal = hand(tablev1.Hand_HAND_BANKER, cp.Banker)
	if cp.Settled {
		out.SettleTime = timestamppb.New(cp.SettleTime)
	}
	if cp == b.Coup {
		out.TurnPlayerId = b.TurnPlayerID
		if b.Phase == banque.PhaseDecision {
			switch cp.Await {
			case banque.HandRight:
				out.DecisionHand, out.DecisionPlayerId = tablev1.Hand_HAND_RIGHT, cp.RightHolder
			case banque.HandLeft:
				out.DecisionHand, out.DecisionPlayerId = tablev1.Hand_HAND_LEFT, cp.LeftHolder
			case banque.HandBanker:
				out.DecisionHand, out.DecisionPlayerId = tablev1.Hand_HAND_BANKER, b.Banker
			}
		}
	}
	for _, bt := range cp.Bets {
		out.Bets = append(out.Bets, &tablev1.Bet{PlayerId: bt.PlayerID, Amount: bt.Amount, Won: bt.Won, Lost: bt.Lost, Banco: bt.Banco,
			Side: tablev1.BanqueSide(bt.Side)})
		out.Banco = out.Banco || bt.Banco
	}
	for _, h := range []struct {
		hand    tablev1.Hand
		codes   []string
		holder  string
		outcome rules.Outcome
	}{{tablev1.Hand_HAND_RIGHT, cp.Right, cp.RightHolder, cp.RightOutcome}, {tablev1.Hand_HAND_LEFT, cp.Left, cp.LeftHolder, cp.LeftOutcome}} {
		ch := &tablev1.CoupHand{Hand: h.hand, HolderPlayerId: h.holder}
		ch.Cards, ch.Total = hand(h.hand, h.codes)
		if cp.Decided {
			ch.Outcome = tablev1.Outcome(game.EventOutcome(h.outcome))
		}
		out.Hands = append(out.Hands, ch)
	}
	return out
}

// resolveBanque fills in the defaults of a banque table's house rules
// (chemmy.table.v1.BanqueRules) and checks them.
func resolveBanque(in *tablev1.BanqueRules) (banque.Rules, error) {
	if in == nil {
		in = &tablev1.BanqueRules{}
	}
	r := banque.DefaultRules()
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
	set32(&r.CutCardFromEnd, in.GetCutCardFromEnd())
	set32(&r.Burn, in.GetBurn())
	set32(&r.MaxSeatsPerSide, in.GetMaxSeatsPerSide())
	set64(&r.MinBet, in.GetMinBet())
	r.MaxBet, r.HouseBank, r.HouseLimit = in.GetMaxBet(), in.GetHouseBank(), in.GetHouseLimit()
	set64(&r.MinimumBank, in.GetMinimumBank())
	r.CommissionBP = in.GetCommissionBp()
	if in.GetCommissionRounding() != tablev1.CommissionRounding_COMMISSION_ROUNDING_UNSPECIFIED {
		r.Rounding = rules.Rounding(in.GetCommissionRounding())
	}
	set32(&r.AuctionTimeLimitMS, in.GetAuctionTimeLimitMs())
	set32(&r.BetTimeLimitMS, in.GetBetTimeLimitMs())
	set32(&r.DecisionTimeLimitMS, in.GetDecisionTimeLimitMs())
	r.BancoBothTables = in.GetBancoBothTables()
	if r.CutCardFromEnd < 8 {
		// A banque coup deals up to nine cards: the coup that brings the
		// cut card out must be able to finish (shoe-svc's bound).
		return r, fail(codes.InvalidArgument, reasonInvalidHouseRule, "cut_card_from_end must be 8..16 at a banque table, got %d", r.CutCardFromEnd)
	}
	if err := r.Validate(); err != nil {
		return r, coreError(err)
	}
	return r, nil
}

func banqueRulesProto(r banque.Rules, certRealMoney bool) *tablev1.BanqueRules {
	return &tablev1.BanqueRules{
		CutCardFromEnd: r.CutCardFromEnd, Burn: r.Burn, MaxSeatsPerSide: r.MaxSeatsPerSide, MinBet: r.MinBet, MaxBet: r.MaxBet,
		HouseBank: r.HouseBank, HouseLimit: r.HouseLimit, MinimumBank: r.MinimumBank, CommissionBp: r.CommissionBP,
		CommissionRounding: tablev1.CommissionRounding(r.Rounding), AuctionTimeLimitMs: r.AuctionTimeLimitMS,
		BetTimeLimitMs: r.BetTimeLimitMS, DecisionTimeLimitMs: r.DecisionTimeLimitMS, CertificationRealMoney: certRealMoney,
		BancoBothTables: r.BancoBothTables,
	}
}

// createBanque makes t, a new table's record, a banque table.
func createBanque(t *table, r banque.Rules) (*table, error) {
	st, err := banque.New(r, t.ShoeID)
	if err != nil {
		return nil, coreError(err)
	}
	t.Variant, t.game = int32(tablev1.Variant_VARIANT_BACCARAT_BANQUE), &st
	banqueGame.sync(t)
	return t, nil
}

// seated, standable, giveUpBank: baccarat banque's idle rule
// (banque.Seated, Standable, GiveUpBank: the banker passes the bank
// first, BQ-BANK).
func (banqueAdapter) seated(t *table) []string { return banque.Seated(*banqueOf(t)) }

func (banqueAdapter) standable(t *table) []string { return banque.Standable(*banqueOf(t)) }

func (banqueAdapter) giveUpBank(t *table, p string) game.Command {
	return banque.GiveUpBank(*banqueOf(t), p)
}

// keepBank: a banque banker keeping his bank after a settlement (a
// player's bank, not the house's; banque.KeptBank) passes it when his
// limits say no (limitKeep, bank_limits.go).
func (banqueAdapter) keepBank(ctx context.Context, s *Service, c *change) error {
	banker, bank, giveUp, ok := banque.KeptBank(*banqueOf(c.t))
	if !ok {
		return nil
	}
	return s.limitKeep(ctx, c, banker, bank, giveUp)
}

// banqueAdvice is GetAdvice at a baccarat banque table: the EVs of the
// decision pending (a table's player on 5, or the banker, BQ-PLAY) under
// odds.BanqueAdviceModel, for the player who decides, calling for himself.
// The banker's EVs are in money units over the coup's stakes (right, left
// and à cheval); a table player's are per unit of a bet on his table.
func (s *Service) banqueAdvice(ctx context.Context, t *table, req *tablev1.GetAdviceRequest) (*tablev1.GetAdviceResponse, error) {
	b := banqueOf(t)
	if b.Phase != banque.PhaseDecision || b.Coup == nil {
		return nil, fail(codes.FailedPrecondition, reasonWrongState, "table is %s, not %s",
			tablev1.TableState(b.Phase), tablev1.TableState_TABLE_STATE_DECISION)
	}
	if req.GetAssumeEquilibrium() {
		return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "assume_equilibrium is for chemin de fer; baccarat banque advice has one model")
	}
	cp := b.Coup
	var (
		hand    tablev1.Hand
		decider string
	)
	switch cp.Await {
	case banque.HandRight:
		hand, decider = tablev1.Hand_HAND_RIGHT, cp.RightHolder
	case banque.HandLeft:
		hand, decider = tablev1.Hand_HAND_LEFT, cp.LeftHolder
	case banque.HandBanker:
		hand, decider = tablev1.Hand_HAND_BANKER, b.Banker
	}
	// The advice tells the decider's own face-down total: for him alone.
	if c, _ := auth.FromContext(ctx); c.Role != auth.RolePlayer || decider == "" || decider != req.GetPlayerId() || c.Subject != decider {
		return nil, fail(codes.FailedPrecondition, reasonNotYourTurn, "the advice is for the player who decides (%q), calling for himself", decider)
	}
	// AdviseBanque puts back the face-down cards the decider cannot see
	// itself (its model); voided coups' face-down cards count as still in
	// the shoe.
	shoe, err := s.remaining(ctx, t, t.ShoeVoidHidden)
	if err != nil {
		return nil, err
	}
	rc := rules.BanqueCoup{RightStood: cp.RightStood, LeftStood: cp.LeftStood, BankerStood: cp.BankerStood}
	for _, h := range []struct {
		codes []string
		to    *[]rules.Card
	}{{cp.Right, &rc.Right}, {cp.Left, &rc.Left}, {cp.Banker, &rc.Banker}} {
		for _, code := range h.codes {
			c, err := rules.ParseCard(code)
			if err != nil {
				return nil, fail(codes.Internal, reasonOddsUnavailable, "card %q: %v", code, err)
			}
			*h.to = append(*h.to, c)
		}
	}
	var stakes odds.BanqueStakes
	for _, bt := range cp.Bets {
		switch bt.Side {
		case banque.SideRight:
			stakes.Right += bt.Amount
		case banque.SideLeft:
			stakes.Left += bt.Amount
		case banque.SideCheval:
			stakes.Cheval += bt.Amount
		}
	}
	a, err := odds.AdviseBanque(shoe, rc, stakes)
	if err != nil {
		return nil, oddsError(err)
	}
	out := &tablev1.GetAdviceResponse{
		Hand: hand, DecisionPlayerId: decider, Rule: a.Rule,
		DrawEv: ratFloat(a.Draw), DrawEvExact: a.Draw.RatString(),
		StandEv: ratFloat(a.Stand), StandEvExact: a.Stand.RatString(),
		Best: tablev1.DrawChoice_DRAW_CHOICE_DRAW, Model: odds.BanqueAdviceModel,
	}
	if a.Best == rules.DecisionStand {
		out.Best = tablev1.DrawChoice_DRAW_CHOICE_STAND
	}
	return out, nil
}

// odds puts in out the exact odds of the next coup from shoe (package
// odds), under the house rules of t (nil: the game's defaults).
func (banqueAdapter) odds(shoe odds.Shoe, t *table, out *tablev1.GetOddsResponse) error {
	variant := tablev1.Variant_VARIANT_BACCARAT_BANQUE
	// The model of odds.BanqueModel: the tables draw on 5, the banker
	// plays the punto banco tableau against the right table.
	o, err := odds.Banque(shoe, odds.BanqueStrategy{})
	if err != nil {
		return oddsError(err)
	}
	out.Variant, out.Deals = variant, o.Deals.String()
	for _, side := range []struct {
		name string
		t    rules.Table
	}{{"right", rules.TableRight}, {"left", rules.TableLeft}} {
		for _, r := range []struct {
			name string
			o    rules.Outcome
		}{{"bank_wins", rules.OutcomeBankWins}, {"bank_loses", rules.OutcomeBankLoses}, {"stand_off", rules.OutcomeStandOff}} {
			n := o.Table(side.t, r.o)
			addOutcome(out, side.name+"_"+r.name, new(big.Rat).SetInt(n), new(big.Rat).SetFrac(n, o.Deals))
		}
	}
	addOutcome(out, "banker_natural", new(big.Rat).SetInt(o.BankerNaturals), new(big.Rat).SetFrac(o.BankerNaturals, o.Deals))
	addBets(out, o.Bets)
	return nil
}

func (banqueAdapter) advice(ctx context.Context, s *Service, t *table, req *tablev1.GetAdviceRequest) (*tablev1.GetAdviceResponse, error) {
	return s.banqueAdvice(ctx, t, req)
}

func (banqueAdapter) shoeVariant() shoev1.Variant { return shoev1.Variant_VARIANT_BANQUE }

func (banqueAdapter) houseBanks() bool { return false }

// lobby: the seats of both sides.
func (banqueAdapter) lobby(tb *tablev1.Table) (int32, int64) {
	return 2 * tb.GetBanqueRules().GetMaxSeatsPerSide(), tb.GetBanqueRules().GetMinBet()
}

func (banqueAdapter) bankHold(t *table) (string, int64) {
	b := banqueOf(t)
	return b.BankHoldID, b.Bank
}
