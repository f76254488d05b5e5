package tablesvc

import (
	"context"
	"errors"
	"math/big"

	"google.golang.org/grpc/codes"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/odds"
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
	t, err := s.loadFor(ctx, req.GetTableId())
	if err != nil {
		return nil, err
	}
	return t.adapter().advice(ctx, s, t, req)
}

// GetOdds returns the exact odds of the next coup.
func (s *Service) GetOdds(ctx context.Context, req *tablev1.GetOddsRequest) (*tablev1.GetOddsResponse, error) {
	var (
		shoe    odds.Shoe
		at      *table // the table asked about; nil for a composition
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
		t, err := s.loadFor(ctx, req.GetTableId())
		if err != nil {
			return nil, err
		}
		v := viewerOf(ctx)
		gc := t.adapter()
		hidden := gc.hidden(t, gc.coupID(t), v)
		if !v.known || v.caller.Role != auth.RoleAuditor {
			for r, n := range t.ShoeVoidHidden {
				hidden[r] += n
			}
		}
		if shoe, err = s.remaining(ctx, t, hidden); err != nil {
			return nil, err
		}
		variant, at = tablev1.Variant(t.Variant), t
	default:
		return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "give a table_id or a composition")
	}
	g := gameOf(variant)
	if g == nil {
		return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "variant %v has no exact odds yet", variant)
	}
	out := &tablev1.GetOddsResponse{Composition: &tablev1.ShoeComposition{}}
	for _, n := range shoe.Ranks {
		out.Composition.RankCounts = append(out.Composition.RankCounts, int32(n))
	}
	if err := g.odds(shoe, at, out); err != nil {
		return nil, err
	}
	return out, nil
}

// addOutcome adds to out an outcome: its count of deals and probability.
func addOutcome(out *tablev1.GetOddsResponse, name string, count, prob *big.Rat) {
	out.Outcomes = append(out.Outcomes, &tablev1.OutcomeOdds{Outcome: name, Count: count.RatString(), Probability: ratFloat(prob), ProbabilityExact: prob.RatString()})
}

// addCounted adds to out outcomes of whole numbers of deals (names[i]
// counts[i] times), each with the model's probability prob of it.
func addCounted(out *tablev1.GetOddsResponse, prob func(*big.Int) *big.Rat, names []string, counts ...*big.Int) {
	for i, n := range counts {
		addOutcome(out, names[i], new(big.Rat).SetInt(n), prob(n))
	}
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

// noAdvice is GetAdvice's refusal at a game that has no croupier's
// advice.
func noAdvice() error {
	return fail(codes.FailedPrecondition, reasonWrongVariant, "the croupier's advice is given at chemin de fer and baccarat banque decisions only")
}

// oddsError maps an error of package odds to a status.
func oddsError(err error) error {
	if errors.Is(err, odds.ErrInvalidShoe) {
		return fail(codes.FailedPrecondition, reasonOddsUnavailable, "%v", err)
	}
	return fail(codes.Internal, reasonOddsUnavailable, "%v", err)
}
