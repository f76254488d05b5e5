package tablesvc

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
	"github.com/chemmy/chemmy/table-svc/game/chemindefer"
)

// resolveRules checks a table's house rules and fills in the defaults
// (RULES.md, "What the sources leave to the house").
func resolveRules(in *tablev1.HouseRules) (chemindefer.Rules, error) {
	if in == nil {
		in = &tablev1.HouseRules{}
	}
	hr := chemindefer.Rules{
		Decks: in.GetDecks(), CutCardFromEnd: in.GetCutCardFromEnd(), Burn: in.GetBurn(),
		MinimumBank: in.GetMinimumBank(), MaxSeats: in.GetMaxSeats(),
		CommissionBP: rules.DefaultCommissionBP, Rounding: int32(in.GetCommissionRounding()),
		Option3vs9: true, Option5vs4: true, BancoFreePlay: in.GetBancoFreePlay(),
		Direction: int32(in.GetBettingDirection()), FirstBanker: int32(in.GetFirstBanker()),
	}
	def := func(v *int32, d int32) {
		if *v == 0 {
			*v = d
		}
	}
	def(&hr.Decks, 6)          // SHOE-DECKS
	def(&hr.CutCardFromEnd, 8) // SHOE-CUT-CARD
	def(&hr.Burn, 3)           // SHOE-BURN
	def(&hr.MaxSeats, 12)
	def(&hr.Rounding, int32(tablev1.CommissionRounding_COMMISSION_ROUNDING_DOWN))
	def(&hr.Direction, int32(tablev1.BettingDirection_BETTING_DIRECTION_RIGHT))
	def(&hr.FirstBanker, int32(tablev1.FirstBanker_FIRST_BANKER_ACCEPTANCE))
	hr.PassMode, hr.FirstCoupFree, hr.HourlyFee = int32(in.GetPassMode()), in.GetFirstCoupExempt(), in.GetHourlyFee()
	hr.CutByPlayer, hr.CertRealMoney, hr.AbandonAfter = in.GetShoeCutByPlayer(), in.GetCertificationRealMoney(), in.GetAbandonAfterOffers()
	hr.InactivityMS = in.GetInactivityLimitMs()
	def(&hr.AbandonAfter, 20)
	def(&hr.PassMode, int32(tablev1.PassMode_PASS_MODE_OFFER_IN_TURN))
	if hr.MinimumBank == 0 {
		hr.MinimumBank = 100
	}
	hr.HouseLimit = in.GetHouseLimit()
	hr.BetTimeMS, hr.DecisionTimeMS, hr.OfferTimeMS = in.GetBetTimeLimitMs(), in.GetDecisionTimeLimitMs(), in.GetBankOfferTimeLimitMs()
	def(&hr.BetTimeMS, defaultTurnMS)
	def(&hr.DecisionTimeMS, defaultTurnMS)
	def(&hr.OfferTimeMS, defaultTurnMS)
	if in.CommissionBp != nil {
		hr.CommissionBP = in.GetCommissionBp()
	}
	if in.GetHourlyFee() > 0 {
		// Source: RULES.md CF-BANK-WINS: the hourly fee is charged instead of commission.
		if in.GetCommissionBp() != 0 {
			return chemindefer.Rules{}, fail(codes.InvalidArgument, reasonInvalidHouseRule, "hourly_fee is charged instead of commission: leave commission_bp unset or 0")
		}
		hr.CommissionBP = 0
	}
	if in.BankerOption_3Vs_9 != nil {
		hr.Option3vs9 = in.GetBankerOption_3Vs_9()
	}
	if in.BankerOption_5Vs_4 != nil {
		hr.Option5vs4 = in.GetBankerOption_5Vs_4()
	}
	bad := func(format string, args ...any) (chemindefer.Rules, error) {
		return chemindefer.Rules{}, fail(codes.InvalidArgument, reasonInvalidHouseRule, format, args...)
	}
	switch {
	case hr.Decks != 6 && hr.Decks != 8:
		return bad("decks must be 6 or 8, got %d", hr.Decks)
	case hr.CutCardFromEnd < 6 || hr.CutCardFromEnd > 16:
		return bad("cut_card_from_end must be 6..16, got %d", hr.CutCardFromEnd)
	case hr.Burn != 3 && hr.Burn != 4:
		return bad("burn must be 3 or 4, got %d", hr.Burn)
	case hr.MinimumBank < 0:
		return bad("minimum_bank must be >= 0, got %d", hr.MinimumBank)
	case hr.MaxSeats < 2 || hr.MaxSeats > 15:
		return bad("max_seats must be 2..15, got %d", hr.MaxSeats)
	case hr.CommissionBP < 0 || hr.CommissionBP > rules.MaxCommissionBP:
		return bad("commission_bp must be 0..10000, got %d", hr.CommissionBP)
	case hr.Rounding < 1 || hr.Rounding > 3:
		return bad("commission_rounding %d is not known", hr.Rounding)
	case hr.Direction < 1 || hr.Direction > 2:
		return bad("betting_direction %d is not known", hr.Direction)
	case hr.HouseLimit < 0:
		return bad("house_limit must be >= 0, got %d", hr.HouseLimit)
	case hr.HouseLimit > 0 && hr.HouseLimit < hr.MinimumBank:
		return bad("house_limit %d is below minimum_bank %d", hr.HouseLimit, hr.MinimumBank)
	case hr.BetTimeMS < 1000 || hr.DecisionTimeMS < 1000 || hr.OfferTimeMS < 1000 ||
		hr.BetTimeMS > 600000 || hr.DecisionTimeMS > 600000 || hr.OfferTimeMS > 600000:
		return bad("time limits must be 1000..600000 ms")
	case hr.FirstBanker < 1 || hr.FirstBanker > 3:
		return bad("first_banker %d is not known", hr.FirstBanker)
	case hr.PassMode < 1 || hr.PassMode > 2:
		return bad("pass_mode %d is not known", hr.PassMode)
	case hr.AbandonAfter < 1 || hr.AbandonAfter > 1000:
		return bad("abandon_after_offers must be 1..1000, got %d", hr.AbandonAfter)
	case hr.InactivityMS != 0 && (hr.InactivityMS < minInactivityMS || hr.InactivityMS > maxInactivityMS):
		return bad("inactivity_limit_ms must be 0 or %d..%d, got %d", minInactivityMS, maxInactivityMS, hr.InactivityMS)
	case hr.HourlyFee < 0 || hr.HourlyFee > 1<<40:
		return bad("hourly_fee must be 0..%d, got %d", int64(1)<<40, hr.HourlyFee)
	}
	return hr, nil
}

// toProto is the view of a table for v: its game's core makes it; the
// shoe's player seeds are the shell's (seeds.go).
func toProto(t *table, v viewer) *tablev1.Table {
	out := t.core().view(t, v)
	out.ShoeEntropy = entropyProto(t)
	out.CurrencyCode = t.Currency
	showInactivity(t, out) // sessions.go
	for _, st := range out.Seats {
		if ss := t.Sessions[st.GetPlayerId()]; ss != nil {
			st.SessionId = ss.ID
		}
	}
	return out
}

// cfProto is the view of a chemin de fer table for v (see "Who sees
// what" in view.go).
func cfProto(t *table, v viewer) *tablev1.Table {
	hr := cfOf(t).Rules
	out := &tablev1.Table{
		TableId: t.ID,
		HouseRules: &tablev1.HouseRules{
			Decks: hr.Decks, CutCardFromEnd: hr.CutCardFromEnd, Burn: hr.Burn, MinimumBank: hr.MinimumBank,
			MaxSeats: hr.MaxSeats, CommissionBp: &hr.CommissionBP,
			CommissionRounding: tablev1.CommissionRounding(hr.Rounding),
			BankerOption_3Vs_9: &hr.Option3vs9, BankerOption_5Vs_4: &hr.Option5vs4,
			BancoFreePlay: hr.BancoFreePlay, BettingDirection: tablev1.BettingDirection(hr.Direction),
			FirstBanker: tablev1.FirstBanker(hr.FirstBanker), HouseLimit: hr.HouseLimit,
			BetTimeLimitMs: hr.BetTimeMS, DecisionTimeLimitMs: hr.DecisionTimeMS, BankOfferTimeLimitMs: hr.OfferTimeMS,
			PassMode: tablev1.PassMode(hr.PassMode), FirstCoupExempt: hr.FirstCoupFree, HourlyFee: hr.HourlyFee,
			ShoeCutByPlayer: hr.CutByPlayer, CertificationRealMoney: hr.CertRealMoney, AbandonAfterOffers: hr.AbandonAfter,
			InactivityLimitMs: hr.InactivityMS,
		},
		Certification: t.Certification, EventSequence: t.EventSeq,
		State: tablev1.TableState(t.Phase), BankerPlayerId: cfOf(t).BankerID, Bank: cfOf(t).Bank,
		OfferedPlayerId: cfOf(t).OfferedID, ShoeId: t.ShoeID, CoupsPlayed: t.CoupsPlayed,
		Coup: coupProto(cfOf(t).Coup, v), LastCoup: coupProto(cfOf(t).LastCoup, v),
		CreateTime: timestamppb.New(t.Created), BankSetAside: cfOf(t).Bank - cfOf(t).Stake(),
		GalleryPlayerIds: cfOf(t).Gallery, BancoSuiviPlayerId: cfOf(t).BancoSuivi, OpenOfferAmount: cfOf(t).OpenOffer,
	}
	if n := len(cfOf(t).Bids); n > 0 {
		out.HighestBid, out.HighestBidderPlayerId = cfOf(t).Bids[n-1].Amount, cfOf(t).Bids[n-1].PlayerID
	}
	if t.WaitKey != "" {
		out.TurnDeadline = timestamppb.New(t.Deadline)
	}
	for _, st := range cfOf(t).Seats {
		out.Seats = append(out.Seats, &tablev1.Seat{Number: st.Number, PlayerId: st.PlayerID})
	}
	if out.Coup != nil && cfOf(t).Phase != chemindefer.PhaseBetting {
		out.Coup.TurnPlayerId = "" // a turn exists only while betting
	}
	return out
}

func coupProto(cp *chemindefer.Coup, v viewer) *tablev1.Coup {
	if cp == nil {
		return nil
	}
	out := &tablev1.Coup{
		CoupId: cp.ID, Number: cp.Number, BankerPlayerId: cp.BankerID, Bank: cp.Bank,
		Uncovered: cp.Bank - cp.Covered(), Banco: cp.Banco, TurnPlayerId: cp.TurnPlayer(),
		HandHolderPlayerId: cp.HandHolder,
		DecisionHand:       tablev1.Hand(cp.DecisionHand), DecisionPlayerId: cp.DecisionBy,
		Natural: cp.Natural, Commission: cp.Commission, BankerNet: cp.BankerNet, Settled: cp.Settled,
		Stake: cp.Bank, Voided: cp.Voided, VoidReason: cp.VoidReason,
	}
	if cp.HandHolder != "" { // betting is over
		out.TurnPlayerId = ""
	}
	out.PlayerCards, out.PlayerTotal = v.viewCards(cp, eventsv1.Hand_HAND_PLAYER)
	out.BankerCards, out.BankerTotal = v.viewCards(cp, eventsv1.Hand_HAND_BANKER)
	switch cp.Outcome {
	case rules.OutcomeBankWins:
		out.Outcome = tablev1.Outcome_OUTCOME_BANK_WINS
	case rules.OutcomeBankLoses:
		out.Outcome = tablev1.Outcome_OUTCOME_BANK_LOSES
	case rules.OutcomeStandOff:
		out.Outcome = tablev1.Outcome_OUTCOME_STAND_OFF
	}
	for _, b := range cp.Bets {
		out.Bets = append(out.Bets, &tablev1.Bet{PlayerId: b.PlayerID, Amount: b.Amount, Banco: b.Banco})
	}
	if !cp.SettleTime.IsZero() {
		out.SettleTime = timestamppb.New(cp.SettleTime)
	}
	return out
}

// cardsProto turns card codes into cards.
func cardsProto(codes []string) []*shoev1.Card { return game.Cards(codes) }
