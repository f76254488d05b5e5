package tablesvc

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/trust"
	"github.com/chemmy/chemmy/services/odds"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
	"github.com/chemmy/chemmy/table-svc/game/chemindefer"
)

// cfAdapter is the shell's adapter of the chemin de fer core (CF-*): its
// state is the record's game (cfOf).
type cfAdapter struct {
	coreAdapter[chemindefer.State, chemindefer.Outcome]
}

// cfGame is the adapter the registry (games.go) holds: the core is
// chemindefer.Game, its state under "chemin_de_fer" in the record.
var cfGame = cfAdapter{coreAdapter[chemindefer.State, chemindefer.Outcome]{chemindefer.Game, "chemin_de_fer"}}

func (cfAdapter) name() string { return "chemin de fer" }

// cfOf is the state of t, a table of this game; nil at another game's.
func cfOf(t *table) *chemindefer.State { return cfGame.of(t) }

func (cfAdapter) rules(m rulesHolder) proto.Message { return m.GetHouseRules() }

// open: chemin de fer's house rules (convert.go resolveRules).
func (cfAdapter) open(req *tablev1.CreateTableRequest, sr *shellRules) (func(*table) error, error) {
	hr, err := resolveRules(req.GetHouseRules())
	if err != nil {
		return nil, err
	}
	hr.InactivityMS = sr.InactivityMS
	sr.Decks, sr.CutCardFromEnd, sr.Burn, sr.CertRealMoney = hr.Decks, hr.CutCardFromEnd, hr.Burn, hr.CertRealMoney
	return func(t *table) error {
		st := chemindefer.New(hr)
		t.game = &st
		cfGame.sync(t)
		return nil
	}, nil
}

func (cfAdapter) renewsSpentShoe() bool { return true }

// decode reads the state under its key; a record stored before it had
// one holds it at the record's top level.
func (cfAdapter) decode(b []byte) (any, error) {
	var r struct {
		State *chemindefer.State `json:"chemin_de_fer"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.State != nil {
		return r.State, err
	}
	st := new(chemindefer.State)
	return st, json.Unmarshal(b, st)
}

func (cfAdapter) apply(t *table, in game.Input) ([]game.Event, *game.Hold, error) {
	out, err := chemindefer.Apply(*cfOf(t), in)
	if err != nil || out.Hold != nil {
		return nil, out.Hold, err
	}
	if out.Raise != nil {
		return nil, nil, fmt.Errorf("chemin de fer core asked a bank raise for %s", in.Cmd.CommandName())
	}
	*cfOf(t) = out.State
	return out.Events, nil, nil
}

func (cfAdapter) coupID(t *table) string {
	if cfOf(t).Coup != nil {
		return cfOf(t).Coup.ID
	}
	return ""
}

// command turns a request into the chemin de fer command it asks for; a
// call that moves money at a certification table that takes none is
// CERTIFICATION_TABLE (before anything else, as the table always
// answered), another game's call WRONG_VARIANT.
func (cfAdapter) command(t *table, method string, req proto.Message, caller auth.Caller) (game.Command, error) {
	if err := noSide(req, "chemin de fer"); err != nil {
		return nil, err
	}
	if r, ok := req.(*tablev1.PlaceBetRequest); ok && r.GetSpot() != tablev1.BetSpot_BET_SPOT_UNSPECIFIED {
		return nil, fail(codes.InvalidArgument, reasonWrongVariant, "spot is a punto banco bet; this table plays chemin de fer")
	}
	switch req.(type) {
	case *tablev1.PlaceBetRequest, *tablev1.AcceptBankRequest, *tablev1.CallBancoRequest, *tablev1.BidBankRequest:
		if err := realMoney(t); err != nil {
			return nil, err
		}
	}
	switch r := req.(type) {
	case *tablev1.JoinTableRequest:
		return chemindefer.Join{PlayerID: r.GetPlayerId(), Lot: lot(len(cfOf(t).Seats) + 1)}, nil
	case *tablev1.AcceptBankRequest:
		return chemindefer.AcceptBank{PlayerID: r.GetPlayerId(), Amount: r.GetAmount()}, nil
	case *tablev1.DeclineBankRequest:
		return chemindefer.DeclineBank{PlayerID: r.GetPlayerId()}, nil
	case *tablev1.BidBankRequest:
		return chemindefer.BidBank{PlayerID: r.GetPlayerId(), Amount: r.GetAmount()}, nil
	case *tablev1.PlaceBetRequest:
		return chemindefer.PlaceBet{PlayerID: r.GetPlayerId(), Amount: r.GetAmount(), OverBank: r.GetOverBank()}, nil
	case *tablev1.DeclineBetRequest:
		return chemindefer.DeclineBet{PlayerID: r.GetPlayerId()}, nil
	case *tablev1.CallBancoRequest:
		return chemindefer.CallBanco{PlayerID: r.GetPlayerId()}, nil
	case *tablev1.DecideDrawRequest:
		ch := chemindefer.ChoiceNone
		switch r.GetChoice() {
		case tablev1.DrawChoice_DRAW_CHOICE_DRAW:
			ch = chemindefer.ChoiceDraw
		case tablev1.DrawChoice_DRAW_CHOICE_STAND:
			ch = chemindefer.ChoiceStand
		}
		return chemindefer.DecideDraw{PlayerID: r.GetPlayerId(), Choice: ch}, nil
	case *tablev1.PassBankRequest:
		return chemindefer.PassBank{PlayerID: r.GetPlayerId()}, nil
	case *tablev1.RaiseBankRequest:
		return chemindefer.RaiseBank{PlayerID: r.GetPlayerId(), Raise: r.GetRaise()}, nil
	case *tablev1.JoinGalleryRequest:
		return chemindefer.JoinGallery{PlayerID: r.GetPlayerId()}, nil
	case *tablev1.LeaveTableRequest:
		return chemindefer.Leave{PlayerID: r.GetPlayerId()}, nil
	case *tablev1.VoidCoupRequest:
		return chemindefer.Void{CoupID: r.GetCoupId(), Reason: r.GetReason(), By: caller.Subject, ByRole: string(caller.Role)}, nil
	case *tablev1.CloseTableRequest:
		return chemindefer.Close{Reason: r.GetReason(), By: caller.Subject, ByRole: string(caller.Role)}, nil
	}
	if _, ok := req.(*tablev1.MoveTopCardsRequest); ok {
		return nil, fail(codes.FailedPrecondition, reasonWrongVariant, "MoveTopCards is the old baccarat banker's move (OLD-CUT)")
	}
	return nil, fail(codes.FailedPrecondition, reasonWrongVariant, "%s is not a chemin de fer action", method)
}

// lot draws a seat index in [0, n) from crypto/rand (CF-FIRST-BANKER (a)).
func lot(n int) int {
	i, err := rand.Int(rand.Reader, big.NewInt(int64(n)))
	if err != nil {
		return 0 // crypto/rand does not fail on supported systems
	}
	return int(i.Int64())
}

// prepare makes the calls a command needs before it applies: a bank
// raise grows the bank hold under an intent of the request (intent.go:
// should the wallet's answer be lost, the hold is brought back to the
// table's bank before the deal or by recoverIntents); when the excess
// bets are removed instead (the banker says so, or his time runs out),
// the raises whose answer was lost are named, for their holds to be
// reset before the deal; a raise goes on only once the raises of other
// requests whose answer was lost are cancelled (cancelRaises), and a void
// cancels them and resets the bank hold to the bank.
func (cfAdapter) prepare(ctx context.Context, s *Service, c *change, cmd game.Command) (game.Command, error) {
	t := c.t
	if cfOf(t).Phase != chemindefer.PhaseRaise {
		return cmd, nil
	}
	lost := func() []string {
		ids := s.raiseIntents(t.ID)
		c.intents = append(c.intents, ids...)
		return ids
	}
	switch r := cmd.(type) {
	case chemindefer.Void:
		// The coup is voided before the banker's answer: the bank stays
		// as it was (CF-ERROR). A raise whose answer was lost is taken
		// back (a late one then grows nothing) and the bank hold brought
		// back to the bank, before the void is stored.
		if cfOf(t).Coup == nil || r.CoupID != cfOf(t).Coup.ID {
			return cmd, nil // refused by the core
		}
		n := len(c.intents)
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		if err := s.cancelRaises(cctx, c, ""); err != nil {
			return nil, err
		}
		st := cfOf(t)
		for _, id := range c.intents[n:] {
			if _, err := s.wallet.ResizeHold(cctx, &walletv1.ResizeHoldRequest{RequestId: "reset/" + id, HoldId: st.BankHoldID, Amount: st.Bank, OperatorId: t.walletOperator()}); err != nil {
				return nil, fromDependency("bring the bank hold back to the bank", err)
			}
		}
		return cmd, nil
	case game.Tick:
		if cfOf(t).WaitKey == "" || cfOf(t).Deadline.After(c.now) {
			return cmd, nil
		}
		return chemindefer.Tick{LostRaises: lost()}, nil
	case chemindefer.RaiseBank:
		if !r.Raise {
			if cfOf(t).BankerID == r.PlayerID {
				r.LostRaises = lost()
			}
			return r, nil
		}
		out, err := chemindefer.Apply(*cfOf(t), game.Input{Now: c.now.UTC(), Cmd: r})
		if err != nil {
			return nil, coreError(err)
		}
		if out.Raise == nil {
			return nil, fmt.Errorf("chemin de fer core applied a raise without its resize")
		}
		// Per request: a raise refused for want of funds may be tried
		// again; the amount is absolute, so a repeat changes nothing. Its
		// intent is stored first.
		sum := sha256.Sum256([]byte(c.key))
		rid := out.Raise.CoupID + "/raise/" + hex.EncodeToString(sum[:16])
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		// The raises of other requests whose answer was lost are taken
		// back first: a late one would set the bank hold to its amount
		// after this raise, even after the coup's settlement.
		if err := s.cancelRaises(cctx, c, rid); err != nil {
			return nil, err
		}
		// A raise is a stake: made through the banker's game-launch
		// session, the wallet checks the session (expired or revoked:
		// SESSION_EXPIRED, nothing raised).
		session := ""
		if who, ok := auth.FromContext(ctx); ok && who.Role == auth.RolePlayer && who.Subject == r.PlayerID {
			session = who.Session
		}
		session, err = s.raiseIntent(c, rid, out.Raise.HoldID, out.Raise.Amount, session)
		if err != nil {
			return nil, err
		}
		if _, err := s.wallet.ResizeHold(cctx, &walletv1.ResizeHoldRequest{RequestId: rid, HoldId: out.Raise.HoldID, Amount: out.Raise.Amount,
			LaunchSessionId: session, OperatorId: c.t.walletOperator()}); err != nil {
			if definite(err) {
				s.dropIntent(rid) // refused: the hold is as it was
			}
			return nil, fromDependency("raise the bank", err)
		}
		c.intents = append(c.intents, rid)
		r.Resized = true
		return r, nil
	}
	return cmd, nil
}

// cutter: with the house rule shoe_cut_by_player, the player next after
// the banker cuts, in the bank offer's time (SHOE-CUT).
func (cfAdapter) cutter(t *table) (string, time.Duration) {
	if !cfOf(t).Rules.CutByPlayer || len(cfOf(t).Seats) == 0 {
		return "", 0
	}
	// Source: RULES.md SHOE-CUT: a player cuts, the next after the banker.
	return cfOf(t).Around(cfOf(t).BankerID)[0], time.Duration(cfOf(t).Rules.OfferTimeMS) * time.Millisecond
}

// turnClock is the core's own clock of its turns.
func (cfAdapter) turnClock(t *table) (string, time.Time) { return cfOf(t).WaitKey, cfOf(t).Deadline }

// interrupt voids a coup that could not go on before its result.
func (cfAdapter) interrupt(t *table, reason string) game.Command {
	if cfOf(t).Coup == nil || cfOf(t).Phase != chemindefer.PhaseDealing || cfOf(t).Coup.Turned() {
		return nil
	}
	return chemindefer.Void{CoupID: cfOf(t).Coup.ID, Reason: reason, By: trust.Table, ByRole: string(auth.RoleService)}
}

// sync copies the phase, the counters and shoe_to_close (the shoe itself
// is the shell's at chemin de fer) and the turn's clock to the record.
func (cfAdapter) sync(t *table) {
	t.Phase, t.CoupsPlayed, t.CoupSeq, t.ShoeToClose = tablev1.TableState(cfOf(t).Phase), cfOf(t).CoupsPlayed, cfOf(t).CoupSeq, cfOf(t).ShoeToClose
	t.WaitKey, t.Deadline = cfOf(t).WaitKey, cfOf(t).Deadline
}

// carryOut makes the wallet calls of the core's own effects.
func (cfAdapter) carryOut(ctx context.Context, s *Service, t *table, eff game.Effect) (game.Command, bool, error) {
	switch e := eff.(type) {
	case chemindefer.ChargeFees:
		cmd, err := s.chargeFees(ctx, t, e)
		return cmd, true, err
	case chemindefer.ResizeHolds:
		for _, r := range e.Resizes {
			if raise, ok := strings.CutPrefix(r.RequestID, "reset/"); ok {
				// A raise whose answer was lost: cancelled first, so that
				// a late ResizeHold of it cannot grow the hold again.
				if _, err := s.wallet.CancelPlaceHold(ctx, &walletv1.CancelPlaceHoldRequest{RequestId: raise, OperatorId: t.walletOperator()}); err != nil {
					return nil, true, fmt.Errorf("cancel raise %s: %w", raise, err)
				}
			}
			if _, err := s.wallet.ResizeHold(ctx, &walletv1.ResizeHoldRequest{RequestId: r.RequestID, HoldId: r.HoldID, Amount: r.Amount, OperatorId: t.walletOperator()}); err != nil {
				return nil, true, fmt.Errorf("cut back hold %s: %w", r.HoldID, err)
			}
		}
		return chemindefer.HoldsResized{}, true, nil
	case chemindefer.Settle:
		req := &walletv1.SettleCoupRequest{
			CoupId: e.CoupID, BankHoldId: e.BankHoldID, Outcome: walletv1.CoupOutcome(eventOutcome(e.Outcome)),
			CommissionBp: e.CommissionBP, CommissionRounding: walletv1.CommissionRounding(e.Rounding),
			CommissionExempt: e.CommissionExempt, OperatorId: t.walletOperator(),
			// A bank that loses passes (CF-LOSE): its hold is released
			// with the settlement, in the wallet's one write.
			ReleaseBankHold: e.Outcome == rules.OutcomeBankLoses,
		}
		for _, b := range e.Bets {
			req.Bets = append(req.Bets, &walletv1.CoupBet{HoldId: b.HoldID, Amount: b.Amount})
		}
		resp, err := s.wallet.SettleCoup(ctx, req)
		if err != nil {
			return nil, true, fmt.Errorf("settle coup %s: %w", e.CoupID, err)
		}
		failpoint("after-settle")
		t.noteSettlement(e.CoupID, resp.GetTransfers())
		// The wallet's verdict on the new bank, for keepBank right after.
		t.stake = stakeVerdict{amount: resp.GetNewBank(), check: resp.GetBankerStake()}
		return chemindefer.Settled{BankerWinnings: resp.GetBankerWinnings(), Commission: resp.GetCommission(),
			BankerNet: resp.GetBankerNet(), NewBank: resp.GetNewBank(), BankReleased: resp.GetBankHoldReleased()}, true, nil
	}
	return nil, false, nil
}

// chargeFees charges the stored seat fees (hourly_fee, CF-BANK-WINS). A
// fee the wallet refuses (the player's balance cannot pay it, or he has
// no account) is reported unpaid rather than holding up the table;
// without an answer the error is returned, to be retried.
func (s *Service) chargeFees(ctx context.Context, t *table, e chemindefer.ChargeFees) (game.Command, error) {
	var out chemindefer.FeesCharged
	for _, f := range e.Fees {
		id := f.ID
		if !strings.HasPrefix(id, "table/") { // the core's "fee/<n>" (records before it held the table's id)
			id = "table/" + t.ID + "/" + id
		}
		round, err := s.beginFeeRound(t, id, f.PlayerID)
		if err != nil {
			return nil, fmt.Errorf("record seat fee %s: %w", id, err)
		}
		resp, err := s.wallet.ChargeFee(ctx, &walletv1.ChargeFeeRequest{
			RequestId: id, AccountId: t.account(f.PlayerID), FeeType: walletv1.FeeType_FEE_TYPE_HOURLY, OperatorId: t.walletOperator(),
			HourlyFee: e.HourlyFee, SeatSeconds: f.Seconds, Reference: "tables/" + t.ID + "/seats",
			Rounding: walletv1.CommissionRounding(e.Rounding),
		})
		if err != nil && !definite(err) {
			return nil, fmt.Errorf("charge seat fee %s: %w", id, err)
		}
		if err != nil && errs.Reason(err) != reasonInsufficientFunds {
			// Any other refusal (e.g. a player with no account) is recorded
			// unpaid too: a fee never holds up the table.
			s.log.Warn("seat fee refused; recorded unpaid", "table", t.ID, "player", f.PlayerID, "err", err)
		}
		s.endFeeRound(round, resp.GetFee(), err == nil)
		out.Fees = append(out.Fees, chemindefer.FeeCharge{Paid: err == nil, Fee: resp.GetFee()})
	}
	return out, nil
}

// view is the table as v may see it (view.go, convert.go).
func (cfAdapter) view(t *table, v viewer) *tablev1.Table { return cfProto(t, v.look()) }

// keepBank: after a settlement the banker keeps (CF-BANK-WINS, a stand
// off; chemindefer.KeptBank), his limits are asked again (limitKeep,
// bank_limits.go); when they say no he passes the bank as CF-PASS has it,
// between coups before any bet.
func (cfAdapter) keepBank(ctx context.Context, s *Service, c *change) error {
	banker, bank, giveUp, ok := chemindefer.KeptBank(*cfOf(c.t))
	if !ok {
		return nil
	}
	return s.limitKeep(ctx, c, banker, bank, giveUp)
}

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

// cfProto is the view of a chemin de fer table for v (see "Who sees
// what" in view.go; the rule is chemindefer.Sees).
func cfProto(t *table, v game.Viewer) *tablev1.Table {
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
		Coup: coupProto(cfOf(t), cfOf(t).Coup, v), LastCoup: coupProto(cfOf(t), cfOf(t).LastCoup, v),
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

// coupProto is cp, a coup of st, as v may see it.
func coupProto(st *chemindefer.State, cp *chemindefer.Coup, v game.Viewer) *tablev1.Coup {
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
	out.PlayerCards, out.PlayerTotal = cfViewCards(st, cp, v, eventsv1.Hand_HAND_PLAYER)
	out.BankerCards, out.BankerTotal = cfViewCards(st, cp, v, eventsv1.Hand_HAND_BANKER)
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

// cfViewCards is hand's cards of cp, a coup of st, as v sees them
// (chemindefer.Sees), and the hand's total when v sees every card of it
// (else 0).
func cfViewCards(st *chemindefer.State, cp *chemindefer.Coup, v game.Viewer, hand eventsv1.Hand) ([]*shoev1.Card, int32) {
	codes := cp.HandCards(int32(hand))
	cards := cardsProto(codes)
	all := true
	for i := range cards {
		if !chemindefer.Sees(*st, cp.ID, v, game.Hand{Name: hand}, i) {
			cards[i] = &shoev1.Card{FaceDown: true}
			all = false
		}
	}
	if !all {
		return cards, 0
	}
	total, _ := handTotal(codes)
	return cards, int32(total)
}

// seated, standable, giveUpBank: chemin de fer's idle rule
// (chemindefer.Seated, Standable, GiveUpBank; Leave passes the bank,
// CF-PASS).
func (cfAdapter) seated(t *table) []string { return chemindefer.Seated(*cfOf(t)) }

func (cfAdapter) standable(t *table) []string { return chemindefer.Standable(*cfOf(t)) }

func (cfAdapter) giveUpBank(t *table, p string) game.Command {
	return chemindefer.GiveUpBank(*cfOf(t), p)
}

// odds puts in out the exact odds of the next coup from shoe (package
// odds), under the house rules of t (nil: the game's defaults).
func (cfAdapter) odds(shoe odds.Shoe, t *table, out *tablev1.GetOddsResponse) error {
	hr := rules.DefaultHouseRules()
	if t != nil {
		hr = cfOf(t).Rules.EngineRules()
	}
	c, err := odds.Chemin(shoe, hr, odds.Strategy{}, false)
	if err != nil {
		return oddsError(err)
	}
	eq, err := odds.CheminEquilibrium(shoe, hr)
	if err != nil {
		return oddsError(err)
	}
	out.Variant, out.Deals = tablev1.Variant_VARIANT_CHEMIN_DE_FER, c.Deals.String()
	addOutcome(out, "bank_wins", c.BankWins, c.Prob(c.BankWins))
	addOutcome(out, "player_wins", c.PlayerWins, c.Prob(c.PlayerWins))
	addOutcome(out, "tie", c.Ties, c.Prob(c.Ties))
	naturals := new(big.Rat).SetInt(c.BankNaturals)
	addOutcome(out, "bank_natural", naturals, c.Prob(naturals))
	out.Equilibrium = &tablev1.Equilibrium{
		PlayerDrawOn_5: ratFloat(eq.PlayerDrawOn5), PlayerDrawOn_5Exact: eq.PlayerDrawOn5.RatString(),
		Value: ratFloat(eq.Value), ValueExact: eq.Value.RatString(), Model: odds.EquilibriumModel,
	}
	for _, cell := range eq.Banker {
		third := int32(cell.Third)
		if cell.Third == odds.ThirdCardStood {
			third = -1
		}
		out.Equilibrium.BankerCells = append(out.Equilibrium.BankerCells, &tablev1.BankerCell{
			BankerTotal: int32(cell.Total), PlayerThirdCard: third,
			DrawProbability: ratFloat(cell.Draw), DrawProbabilityExact: cell.Draw.RatString(),
		})
	}
	return nil
}

// advice is the EV of each choice at the pending decision, for the player
// who decides (GetAdvice).
func (cfAdapter) advice(ctx context.Context, s *Service, t *table, req *tablev1.GetAdviceRequest) (*tablev1.GetAdviceResponse, error) {
	if cfOf(t).Phase != chemindefer.PhaseDecision {
		return nil, fail(codes.FailedPrecondition, reasonWrongState, "table is %s, not %s",
			tablev1.TableState(t.Phase), tablev1.TableState_TABLE_STATE_DECISION)
	}
	cp := cfOf(t).Coup
	// The advice tells the decider's own face-down total: it is for him
	// alone (see "Who sees what", view.go), not for staff.
	if c, _ := auth.FromContext(ctx); c.Role != auth.RolePlayer || cp.DecisionBy != req.GetPlayerId() || c.Subject != cp.DecisionBy {
		return nil, fail(codes.FailedPrecondition, reasonNotYourTurn, "the advice is for the player who decides (%q), calling for himself", cp.DecisionBy)
	}
	// Advise puts back the opponent's face-down cards itself (its model);
	// voided coups' face-down cards count as still in the shoe.
	shoe, err := s.remaining(ctx, t, t.ShoeVoidHidden)
	if err != nil {
		return nil, err
	}
	rc, err := chemindefer.EngineCoup(cp)
	if err != nil {
		return nil, err
	}
	hr := cfOf(t).Rules.EngineRules()
	var st odds.Strategy
	if req.GetAssumeEquilibrium() {
		full := shoe
		for _, c := range append(append([]rules.Card(nil), rc.Player...), rc.Banker...) {
			full.Ranks[c.Rank-1]++ // the equilibrium of the shoe before this coup
		}
		eq, err := odds.CheminEquilibrium(full, hr)
		if err != nil {
			return nil, oddsError(err)
		}
		st = eq.Strategy()
	}
	a, err := odds.Advise(shoe, rc, hr, st)
	if err != nil {
		return nil, oddsError(err)
	}
	out := &tablev1.GetAdviceResponse{
		Hand: tablev1.Hand(cp.DecisionHand), DecisionPlayerId: cp.DecisionBy, Rule: a.Rule,
		DrawEv: ratFloat(a.Draw), DrawEvExact: a.Draw.RatString(),
		StandEv: ratFloat(a.Stand), StandEvExact: a.Stand.RatString(),
		Best: tablev1.DrawChoice_DRAW_CHOICE_DRAW, Model: odds.AdviceModel,
	}
	if a.Best == rules.DecisionStand {
		out.Best = tablev1.DrawChoice_DRAW_CHOICE_STAND
	}
	return out, nil
}

func (cfAdapter) shoeVariant() shoev1.Variant { return shoev1.Variant_VARIANT_CHEMIN_DE_FER }

func (cfAdapter) houseBanks() bool { return false }

// lobby: the seats of the house rules; the smallest stake is the minimum
// bank.
func (cfAdapter) lobby(tb *tablev1.Table) (int32, int64) {
	return tb.GetHouseRules().GetMaxSeats(), tb.GetHouseRules().GetMinimumBank()
}

func (cfAdapter) bankHold(t *table) (string, int64) {
	st := cfOf(t)
	return st.BankHoldID, st.Bank
}
