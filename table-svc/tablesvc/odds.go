package tablesvc

import (
	"context"
	"errors"
	"math/big"
	"slices"

	"google.golang.org/grpc/codes"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/odds"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game/chemindefer"
)

// remaining is the composition of the table's current shoe: the full
// decks less the burned cards (public, SHOE-BURN) and the cards dealt to
// coups, except those counted in hidden (cards the caller may not see,
// which count as still in the shoe). ODDS_UNAVAILABLE for a shoe made
// from a given order.
func (s *Service) remaining(ctx context.Context, t *table, hidden [13]int) (odds.Shoe, error) {
	if t.ShoeDecks == 0 {
		return odds.Shoe{}, fail(codes.FailedPrecondition, reasonOddsUnavailable, "the table's shoe was made from a given order; its composition is not known")
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	sh, err := s.shoe.GetShoe(cctx, &shoev1.GetShoeRequest{ShoeId: t.ShoeID})
	if err != nil {
		return odds.Shoe{}, fromDependency("shoe", err)
	}
	shoe := odds.Decks(int(t.ShoeDecks))
	for r, n := range t.ShoeDealt {
		shoe.Ranks[r] -= n - hidden[r]
	}
	for _, c := range sh.GetShoe().GetBurned() {
		if r := int(c.GetRank()); r >= 1 && r <= 13 {
			shoe.Ranks[r-1]--
		}
	}
	return shoe, nil
}

// GetAdvice returns the EV of each choice at the pending decision.
func (s *Service) GetAdvice(ctx context.Context, req *tablev1.GetAdviceRequest) (*tablev1.GetAdviceResponse, error) {
	if err := checkID("table_id", req.GetTableId()); err != nil {
		return nil, err
	}
	if err := checkID("player_id", req.GetPlayerId()); err != nil {
		return nil, err
	}
	if err := auth.RequireSelf(ctx, domain, req.GetPlayerId()); err != nil {
		return nil, err
	}
	t, err := s.load(req.GetTableId())
	if err != nil {
		return nil, err
	}
	switch t.core().(type) {
	case cfCore:
	case banqueCore:
		return s.banqueAdvice(ctx, t, req)
	default:
		return nil, fail(codes.FailedPrecondition, reasonWrongVariant, "the croupier's advice is given at chemin de fer and baccarat banque decisions only")
	}
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

// GetOdds returns the exact odds of the next coup.
func (s *Service) GetOdds(ctx context.Context, req *tablev1.GetOddsRequest) (*tablev1.GetOddsResponse, error) {
	var (
		shoe    odds.Shoe
		hr      = rules.DefaultHouseRules()
		pr      = rules.DefaultPuntoBancoRules()
		variant = req.GetVariant()
	)
	switch {
	case req.GetComposition() != nil:
		if c, _ := auth.FromContext(ctx); !c.Is(auth.RoleAuditor, auth.RoleOperator, auth.RoleService) {
			return nil, fail(codes.PermissionDenied, reasonRoleNotAllowed, "only auditors and operators may ask for any composition")
		}
		counts := req.GetComposition().GetRankCounts()
		if len(counts) != 13 {
			return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "composition needs 13 rank counts (ace to king), got %d", len(counts))
		}
		for i, n := range counts {
			shoe.Ranks[i] = int(n)
		}
		if err := shoe.Validate(); err != nil {
			return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "composition: %v", err)
		}
	case req.GetTableId() != "":
		if err := checkID("table_id", req.GetTableId()); err != nil {
			return nil, err
		}
		t, err := s.load(req.GetTableId())
		if err != nil {
			return nil, err
		}
		v := viewerOf(ctx)
		gc := t.core()
		hidden := gc.hidden(t, gc.coupID(t), v)
		if !v.known || v.caller.Role != auth.RoleAuditor {
			for r, n := range t.ShoeVoidHidden {
				hidden[r] += n
			}
		}
		if shoe, err = s.remaining(ctx, t, hidden); err != nil {
			return nil, err
		}
		variant = tablev1.Variant_VARIANT_CHEMIN_DE_FER
		switch {
		case cfOf(t) != nil:
			hr = cfOf(t).Rules.EngineRules()
		case pbOf(t) != nil:
			pr, variant = pbOf(t).Rules.EngineRules(), tablev1.Variant_VARIANT_PUNTO_BANCO
		case banqueOf(t) != nil:
			variant = tablev1.Variant_VARIANT_BACCARAT_BANQUE
		case oldOf(t) != nil:
			variant = tablev1.Variant_VARIANT_OLD_BACCARAT
		}
	default:
		return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "give a table_id or a composition")
	}
	out := &tablev1.GetOddsResponse{Composition: &tablev1.ShoeComposition{}}
	for _, n := range shoe.Ranks {
		out.Composition.RankCounts = append(out.Composition.RankCounts, int32(n))
	}
	outcome := func(name string, count, prob *big.Rat) {
		out.Outcomes = append(out.Outcomes, &tablev1.OutcomeOdds{Outcome: name, Count: count.RatString(), Probability: ratFloat(prob), ProbabilityExact: prob.RatString()})
	}
	// counted is outcome of whole numbers of deals (names[i] counts[i]
	// times), each with the model's probability prob of it.
	counted := func(prob func(*big.Int) *big.Rat, names []string, counts ...*big.Int) {
		for i, n := range counts {
			outcome(names[i], new(big.Rat).SetInt(n), prob(n))
		}
	}
	switch variant {
	case tablev1.Variant_VARIANT_PUNTO_BANCO:
		o, err := odds.PuntoBanco(shoe, pr)
		if err != nil {
			return nil, oddsError(err)
		}
		out.Variant, out.Deals = variant, o.Deals.String()
		counted(o.Prob, []string{"bank_wins", "player_wins", "tie", "bank_natural"}, o.BankWins, o.PlayerWins, o.Ties, o.BankNaturals)
		bets := o.Bets
		if pr.NoCommission {
			// The no-commission bank bet is not priced yet.
			bets = slices.DeleteFunc(slices.Clone(bets), func(b odds.BetOdds) bool { return b.Bet == "bank" })
		}
		addBets(out, bets)
	case tablev1.Variant_VARIANT_BACCARAT_BANQUE:
		// The model of odds.BanqueModel: the tables draw on 5, the banker
		// plays the punto banco tableau against the right table.
		o, err := odds.Banque(shoe, odds.BanqueStrategy{})
		if err != nil {
			return nil, oddsError(err)
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
				outcome(side.name+"_"+r.name, new(big.Rat).SetInt(n), new(big.Rat).SetFrac(n, o.Deals))
			}
		}
		outcome("banker_natural", new(big.Rat).SetInt(o.BankerNaturals), new(big.Rat).SetFrac(o.BankerNaturals, o.Deals))
		addBets(out, o.Bets)
	case tablev1.Variant_VARIANT_OLD_BACCARAT:
		// Per punter against the banker (odds.OldModel).
		o, err := odds.Old(shoe, odds.OldStrategy{})
		if err != nil {
			return nil, oddsError(err)
		}
		out.Variant, out.Deals = variant, o.Deals.String()
		counted(o.Prob, []string{"punter_wins", "banker_wins", "tie", "natural", "punter_baccarat"},
			o.PunterWins, o.BankerWins, o.Ties, o.Naturals, o.PunterBaccarat)
		addBets(out, o.Bets)
	case tablev1.Variant_VARIANT_UNSPECIFIED, tablev1.Variant_VARIANT_CHEMIN_DE_FER:
		c, err := odds.Chemin(shoe, hr, odds.Strategy{}, false)
		if err != nil {
			return nil, oddsError(err)
		}
		eq, err := odds.CheminEquilibrium(shoe, hr)
		if err != nil {
			return nil, oddsError(err)
		}
		out.Variant, out.Deals = tablev1.Variant_VARIANT_CHEMIN_DE_FER, c.Deals.String()
		outcome("bank_wins", c.BankWins, c.Prob(c.BankWins))
		outcome("player_wins", c.PlayerWins, c.Prob(c.PlayerWins))
		outcome("tie", c.Ties, c.Prob(c.Ties))
		naturals := new(big.Rat).SetInt(c.BankNaturals)
		outcome("bank_natural", naturals, c.Prob(naturals))
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
	default:
		return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "variant %v has no exact odds yet", variant)
	}
	return out, nil
}

// addBets adds the bets' expected values to out.
func addBets(out *tablev1.GetOddsResponse, bets []odds.BetOdds) {
	for _, b := range bets {
		out.Bets = append(out.Bets, &tablev1.BetOdds{Bet: b.Bet, Pays: b.Pays, ExpectedValue: ratFloat(b.EV),
			ExpectedValueExact: b.EV.RatString(), HouseEdge: ratFloat(b.HouseEdge())})
	}
}

func ratFloat(r *big.Rat) float64 {
	f, _ := r.Float64()
	return f
}

// oddsError maps an error of package odds to a status.
func oddsError(err error) error {
	if errors.Is(err, odds.ErrInvalidShoe) {
		return fail(codes.FailedPrecondition, reasonOddsUnavailable, "%v", err)
	}
	return fail(codes.Internal, reasonOddsUnavailable, "%v", err)
}
