package tablesvc

import (
	"context"
	"fmt"
	"slices"

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
	"github.com/chemmy/chemmy/table-svc/game/puntobanco"
	"github.com/chemmy/chemmy/table-svc/game/roads"
)

// pbAdapter is the shell's adapter of the punto banco core (PB-*): its state
// is the record's PuntoBanco.
type pbAdapter struct {
	coreAdapter[puntobanco.State, puntobanco.Outcome]
}

// pbGame is the adapter the registry (games.go) holds: the core is
// puntobanco.Game, its state under "punto_banco" in the record.
var pbGame = pbAdapter{coreAdapter[puntobanco.State, puntobanco.Outcome]{puntobanco.Game, "punto_banco"}}

func (pbAdapter) name() string { return "punto banco" }

// pbOf is the state of t, a table of this game; nil at another game's.
func pbOf(t *table) *puntobanco.State { return pbGame.of(t) }

func (pbAdapter) rules(m rulesHolder) proto.Message { return m.GetPuntoBancoRules() }

// open: punto banco's house rules.
func (pbAdapter) open(req *tablev1.CreateTableRequest, sr *shellRules) (func(*table) error, error) {
	r, err := resolvePuntoBanco(req.GetPuntoBancoRules())
	if err != nil {
		return nil, err
	}
	sr.Decks, sr.CutCardFromEnd, sr.Burn = r.Decks, r.CutCardFromEnd, r.Burn
	sr.CertRealMoney = req.GetPuntoBancoRules().GetCertificationRealMoney()
	return func(t *table) error { _, err := createPuntoBanco(t, r); return err }, nil
}

func (pbAdapter) renewsSpentShoe() bool { return false }

func (pbAdapter) coupID(t *table) string {
	if cp := pbOf(t).Coup; cp != nil {
		return cp.ID
	}
	return ""
}

// command turns a request into the punto banco command it asks for;
// WRONG_VARIANT for a call of another game.
func (pbAdapter) command(_ *table, method string, req proto.Message, caller auth.Caller) (game.Command, error) {
	if err := noSide(req, "punto banco"); err != nil {
		return nil, err
	}
	switch r := req.(type) {
	case *tablev1.JoinTableRequest:
		return puntobanco.Join{PlayerID: r.GetPlayerId()}, nil
	case *tablev1.LeaveTableRequest:
		return puntobanco.Leave{PlayerID: r.GetPlayerId()}, nil
	case *tablev1.PlaceBetRequest:
		if r.GetOverBank() {
			return nil, fail(codes.InvalidArgument, reasonWrongVariant, "over_bank is a chemin de fer bet (CF-BANK-RAISE); the house banks punto banco")
		}
		if r.GetSpot() == tablev1.BetSpot_BET_SPOT_UNSPECIFIED {
			return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "spot is required at a punto banco table (BET_SPOT_BANK, _PLAYER, _TIE, ...)")
		}
		return puntobanco.PlaceBet{PlayerID: r.GetPlayerId(), Spot: puntobanco.Spot(r.GetSpot()), Amount: r.GetAmount()}, nil
	case *tablev1.VoidCoupRequest:
		return puntobanco.Void{CoupID: r.GetCoupId(), Reason: r.GetReason(), By: caller.Subject, ByRole: string(caller.Role)}, nil
	case *tablev1.CloseTableRequest:
		return puntobanco.Close{Reason: r.GetReason(), By: caller.Subject, ByRole: string(caller.Role)}, nil
	}
	return nil, fail(codes.FailedPrecondition, reasonWrongVariant, "%s is not a punto banco action: the house banks, there is no bank to take, no banco and no decision", method)
}

// interrupt voids a coup that could not go on before its result.
func (pbAdapter) interrupt(t *table, reason string) game.Command {
	pb := pbOf(t)
	if pb.Coup == nil || pb.Phase != puntobanco.PhaseDealing {
		return nil
	}
	return puntobanco.Void{CoupID: pb.Coup.ID, Reason: reason, By: "table-svc", ByRole: string(auth.RoleService)}
}

// sync copies what the shared machinery reads from the core's state.
func (pbAdapter) sync(t *table) {
	syncCore(t, int8(pbOf(t).Phase), pbOf(t).Bookkeeping, pbOf(t).CoupsPlayed, pbOf(t).CoupSeq)
}

func (pbAdapter) carryOut(ctx context.Context, s *Service, t *table, eff game.Effect) (game.Command, bool, error) {
	e, ok := eff.(puntobanco.Settle)
	if !ok {
		return nil, false, nil
	}
	cmd, err := s.settlePuntoBanco(ctx, t, e)
	return cmd, true, err
}

// publicEvent: punto banco deals every card face up (no card is
// puntobanco.FaceDown); nothing is hidden.
func (pbAdapter) publicEvent(ev *eventsv1.TableEvent) *eventsv1.TableEvent { return ev }

// view is a punto banco table's view: every card is dealt face up, so
// every viewer sees the same table.
func (pbAdapter) view(t *table, _ viewer) *tablev1.Table {
	pb := pbOf(t)
	out := &tablev1.Table{
		TableId: t.ID, Variant: tablev1.Variant_VARIANT_PUNTO_BANCO, PuntoBancoRules: pbRulesProto(pb.Rules, t.Rules.CertRealMoney),
		State: tablev1.TableState(pb.Phase), ShoeId: pb.ShoeID, ShoeNumber: pb.ShoeNumber, CoupsPlayed: pb.CoupsPlayed,
		CreateTime: timestamppb.New(t.Created), Certification: t.Certification, EventSequence: t.EventSeq,
		Coup: pbCoupProto(pb.Coup), LastCoup: pbCoupProto(pb.LastCoup), Roads: roadsProto(pb),
	}
	if d := puntobanco.Deadline(*pb); !d.IsZero() {
		out.TurnDeadline = timestamppb.New(d)
	}
	for _, st := range pb.Seats {
		out.Seats = append(out.Seats, &tablev1.Seat{Number: st.Number, PlayerId: st.PlayerID})
	}
	return out
}

// settlePuntoBanco settles a coup at the wallet against house:bank
// (PB-BANK, PB-BETS); the coup id is the settlement's idempotency key.
func (s *Service) settlePuntoBanco(ctx context.Context, t *table, e puntobanco.Settle) (game.Command, error) {
	cp, r := e.Coup, e.Rules
	req := &walletv1.SettlePuntoBancoRequest{
		CoupId: cp.ID, Outcome: pbOutcome(cp.Outcome), BankNatural: cp.BankNatural, OperatorId: t.walletOperator(),
		CommissionBp: r.CommissionBP, CommissionRounding: walletv1.CommissionRounding(r.CommissionRounding),
		NoCommission: r.NoCommission, TiePays: r.TiePays, BankNaturalPays: r.BankNaturalPays, PairPays: r.PairPays,
		BankTotal: int32(cp.BankerTotal), PlayerPair: cp.PlayerPair, BankPair: cp.BankerPair,
	}
	for _, b := range cp.Bets {
		req.Bets = append(req.Bets, &walletv1.PuntoBancoBet{HoldId: b.HoldID, Amount: b.Amount, Type: walletv1.PuntoBancoBetType(b.Spot)})
	}
	resp, err := s.wallet.SettlePuntoBanco(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("settle coup %s: %w", cp.ID, err)
	}
	if len(resp.GetResults()) != len(cp.Bets) {
		return nil, fmt.Errorf("settle coup %s: %d results for %d bets", cp.ID, len(resp.GetResults()), len(cp.Bets))
	}
	t.noteSettlement(cp.ID, resp.GetTransfers())
	out := puntobanco.Settled{Commission: resp.GetCommission(), HouseNet: resp.GetHouseNet()}
	for _, br := range resp.GetResults() {
		out.Bets = append(out.Bets, puntobanco.Bet{Won: br.GetWon(), Commission: br.GetCommission(), Lost: br.GetLost()})
	}
	return out, nil
}

func pbOutcome(o rules.Outcome) walletv1.PuntoBancoOutcome {
	switch o {
	case rules.OutcomeBankWins:
		return walletv1.PuntoBancoOutcome_PUNTO_BANCO_OUTCOME_BANK_WINS
	case rules.OutcomeBankLoses:
		return walletv1.PuntoBancoOutcome_PUNTO_BANCO_OUTCOME_PLAYER_WINS
	case rules.OutcomeStandOff:
		return walletv1.PuntoBancoOutcome_PUNTO_BANCO_OUTCOME_TIE
	}
	return walletv1.PuntoBancoOutcome_PUNTO_BANCO_OUTCOME_UNSPECIFIED
}

// resolvePuntoBanco fills in the defaults of a punto banco table's house
// rules (see chemmy.table.v1.PuntoBancoRules) and checks them.
func resolvePuntoBanco(in *tablev1.PuntoBancoRules) (puntobanco.Rules, error) {
	if in == nil {
		in = &tablev1.PuntoBancoRules{}
	}
	r := puntobanco.Rules{
		Decks: in.GetDecks(), CutCardFromEnd: in.GetCutCardFromEnd(), Burn: in.GetBurn(), MaxSeats: in.GetMaxSeats(),
		MinBet: in.GetMinBet(), MaxBet: in.GetMaxBet(), HouseLimit: in.GetHouseLimit(),
		CommissionBP: rules.DefaultCommissionBP, Rounding: rules.Rounding(in.GetCommissionRounding()),
		NoCommission: in.GetNoCommission(), TiePays: in.GetTiePays(), BankNaturalPays: in.GetBankNaturalPays(),
		BankNaturalOff: in.GetBankNaturalBetOff(), PairBets: in.GetPairBets(), PairPays: in.GetPairPays(),
		BettingWindowMS: in.GetBettingWindowMs(), ResultPauseMS: 3000,
	}
	def32 := func(v *int32, d int32) {
		if *v == 0 {
			*v = d
		}
	}
	def64 := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	def32(&r.Decks, 8)           // PB-DECKS
	def32(&r.CutCardFromEnd, 14) // SHOE-CUT-CARD
	def32(&r.Burn, 3)            // SHOE-BURN
	def32(&r.MaxSeats, 14)
	def64(&r.MinBet, 100)
	def64(&r.TiePays, 8)
	def64(&r.BankNaturalPays, 9) // PB-BETS
	def64(&r.PairPays, 11)
	def32(&r.BettingWindowMS, 15000)
	if r.Rounding == 0 {
		r.Rounding = rules.RoundDown
	}
	if in.CommissionBp != nil {
		r.CommissionBP = in.GetCommissionBp()
	}
	if in.ResultPauseMs != nil {
		r.ResultPauseMS = in.GetResultPauseMs()
	}
	if err := r.Validate(); err != nil {
		return r, coreError(err)
	}
	return r, nil
}

// pbRulesProto is the house rules in force, as the proto shows them
// (certification_real_money is kept with the shoe's rules, t.Rules).
func pbRulesProto(r puntobanco.Rules, certRealMoney bool) *tablev1.PuntoBancoRules {
	return &tablev1.PuntoBancoRules{
		Decks: r.Decks, CutCardFromEnd: r.CutCardFromEnd, Burn: r.Burn, MaxSeats: r.MaxSeats,
		MinBet: r.MinBet, MaxBet: r.MaxBet, HouseLimit: r.HouseLimit,
		CommissionBp: proto.Int64(r.CommissionBP), CommissionRounding: tablev1.CommissionRounding(r.Rounding),
		NoCommission: r.NoCommission, TiePays: r.TiePays, BankNaturalPays: r.BankNaturalPays, BankNaturalBetOff: r.BankNaturalOff,
		PairBets: r.PairBets, PairPays: r.PairPays, BettingWindowMs: r.BettingWindowMS, ResultPauseMs: proto.Int32(r.ResultPauseMS),
		CertificationRealMoney: certRealMoney,
	}
}

func pbCoupProto(cp *puntobanco.Coup) *tablev1.Coup {
	if cp == nil {
		return nil
	}
	out := &tablev1.Coup{
		CoupId: cp.ID, Number: cp.Number, PlayerCards: game.Cards(cp.Player), BankerCards: game.Cards(cp.Banker),
		Natural: cp.Natural, PlayerPair: cp.PlayerPair, BankerPair: cp.BankerPair,
		Settled: cp.Settled, Commission: cp.Commission, HouseNet: cp.HouseNet, Voided: cp.Voided, VoidReason: cp.VoidReason,
	}
	out.PlayerTotal, _ = handTotalInt32(cp.Player)
	out.BankerTotal, _ = handTotalInt32(cp.Banker)
	if cp.Decided {
		out.Outcome = tablev1.Outcome(eventOutcome(cp.Outcome))
	}
	if cp.Settled {
		out.SettleTime = timestamppb.New(cp.SettleTime)
	}
	for _, b := range cp.Bets {
		out.Bets = append(out.Bets, &tablev1.Bet{PlayerId: b.PlayerID, Amount: b.Amount, Spot: tablev1.BetSpot(b.Spot),
			Won: b.Won, Commission: b.Commission, Lost: b.Lost})
	}
	return out
}

func handTotalInt32(codes []string) (int32, error) {
	n, err := handTotal(codes)
	return int32(n), err
}

// roadsProto draws the current shoe's roads.
func roadsProto(pb *puntobanco.State) *tablev1.Roads {
	in := make([]roads.Result, len(pb.Results))
	out := &tablev1.Roads{ShoeId: pb.ShoeID, ShoeNumber: pb.ShoeNumber}
	for i, r := range pb.Results {
		w := roads.Tie
		switch r.Outcome {
		case rules.OutcomeBankWins:
			w = roads.Banker
			out.BankWins++
		case rules.OutcomeBankLoses:
			w = roads.Player
			out.PlayerWins++
		default:
			out.Ties++
		}
		in[i] = roads.Result{Winner: w, PlayerPair: r.PlayerPair, BankerPair: r.BankerPair, Natural: r.Natural,
			PlayerTotal: r.PlayerTotal, BankerTotal: r.BankerTotal}
	}
	rd := roads.Compute(in)
	for _, b := range rd.BeadPlate {
		total := b.Result.BankerTotal
		if b.Result.Winner == roads.Player {
			total = b.Result.PlayerTotal
		}
		out.BeadPlate = append(out.BeadPlate, &tablev1.RoadBead{Col: int32(b.Col), Row: int32(b.Row), Winner: roadWinner(b.Result.Winner),
			Total: int32(total), PlayerPair: b.Result.PlayerPair, BankerPair: b.Result.BankerPair, Natural: b.Result.Natural})
	}
	for _, c := range rd.BigRoad {
		out.BigRoad = append(out.BigRoad, &tablev1.RoadCell{Col: int32(c.Col), Row: int32(c.Row), LogicalCol: int32(c.LogicalCol),
			LogicalRow: int32(c.LogicalRow), Winner: roadWinner(c.Winner), Ties: int32(c.Ties + c.LeadingTies),
			PlayerPair: c.PlayerPair, BankerPair: c.BankerPair, Natural: c.Natural})
	}
	marks := func(cells []roads.DerivedCell) []*tablev1.RoadMark {
		var ms []*tablev1.RoadMark
		for _, c := range cells {
			ms = append(ms, &tablev1.RoadMark{Col: int32(c.Col), Row: int32(c.Row), LogicalCol: int32(c.LogicalCol), LogicalRow: int32(c.LogicalRow), Red: c.Red})
		}
		return ms
	}
	out.BigEyeBoy, out.SmallRoad, out.CockroachPig = marks(rd.BigEyeBoy), marks(rd.SmallRoad), marks(rd.CockroachPig)
	return out
}

func roadWinner(w roads.Winner) tablev1.RoadWinner {
	switch w {
	case roads.Banker:
		return tablev1.RoadWinner_ROAD_WINNER_BANK
	case roads.Player:
		return tablev1.RoadWinner_ROAD_WINNER_PLAYER
	case roads.Tie:
		return tablev1.RoadWinner_ROAD_WINNER_TIE
	}
	return tablev1.RoadWinner_ROAD_WINNER_UNSPECIFIED
}

// GetRoads returns a punto banco table's roads. See the proto.
func (s *Service) GetRoads(ctx context.Context, req *tablev1.GetRoadsRequest) (*tablev1.GetRoadsResponse, error) {
	if err := checkID("table_id", req.GetTableId()); err != nil {
		return nil, err
	}
	t, err := s.loadFor(ctx, req.GetTableId())
	if err != nil {
		return nil, err
	}
	if pbOf(t) == nil {
		return nil, fail(codes.FailedPrecondition, reasonWrongVariant, "table %q plays %s: roads are drawn at punto banco tables", t.ID, t.adapter().name())
	}
	return &tablev1.GetRoadsResponse{Roads: roadsProto(pbOf(t))}, nil
}

// createPuntoBanco makes t, a new table's record, a punto banco table.
func createPuntoBanco(t *table, r puntobanco.Rules) (*table, error) {
	st, err := puntobanco.New(r, t.ShoeID)
	if err != nil {
		return nil, coreError(err)
	}
	t.Variant, t.game = int32(tablev1.Variant_VARIANT_PUNTO_BANCO), &st
	pbGame.sync(t)
	return t, nil
}

// seated, standable, giveUpBank: punto banco's idle rule
// (puntobanco.Seated, Standable, GiveUpBank; the house banks, PB-BANK).
func (pbAdapter) seated(t *table) []string { return puntobanco.Seated(*pbOf(t)) }

func (pbAdapter) standable(t *table) []string { return puntobanco.Standable(*pbOf(t)) }

func (pbAdapter) giveUpBank(t *table, p string) game.Command {
	return puntobanco.GiveUpBank(*pbOf(t), p)
}

// odds puts in out the exact odds of the next coup from shoe (package
// odds), under the house rules of t (nil: the game's defaults).
func (pbAdapter) odds(shoe odds.Shoe, t *table, out *tablev1.GetOddsResponse) error {
	variant := tablev1.Variant_VARIANT_PUNTO_BANCO
	pr := rules.DefaultPuntoBancoRules()
	if t != nil {
		pr = pbOf(t).Rules.EngineRules()
	}
	o, err := odds.PuntoBanco(shoe, pr)
	if err != nil {
		return oddsError(err)
	}
	out.Variant, out.Deals = variant, o.Deals.String()
	addCounted(out, o.Prob, []string{"bank_wins", "player_wins", "tie", "bank_natural"}, o.BankWins, o.PlayerWins, o.Ties, o.BankNaturals)
	bets := o.Bets
	if pr.NoCommission {
		// The no-commission bank bet is not priced yet.
		bets = slices.DeleteFunc(slices.Clone(bets), func(b odds.BetOdds) bool { return b.Bet == "bank" })
	}
	addBets(out, bets)
	return nil
}

func (pbAdapter) advice(ctx context.Context, s *Service, t *table, req *tablev1.GetAdviceRequest) (*tablev1.GetAdviceResponse, error) {
	return nil, noAdvice()
}

func (pbAdapter) shoeVariant() shoev1.Variant { return shoev1.Variant_VARIANT_PUNTO_BANCO }

// houseBanks: the house banks punto banco (PB-BANK).
func (pbAdapter) houseBanks() bool { return true }

func (pbAdapter) lobby(tb *tablev1.Table) (int32, int64) {
	return tb.GetPuntoBancoRules().GetMaxSeats(), tb.GetPuntoBancoRules().GetMinBet()
}

func (pbAdapter) bankHold(t *table) (string, int64) {
	return "", 0 // the house banks (PB-BANK)
}
