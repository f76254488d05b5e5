package tablesvc

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// callTimeout bounds one call to shoe-svc or wallet-svc.
const callTimeout = 5 * time.Second

// setupTimeout bounds CreateTable's calls to shoe-svc (its first shoe, or
// the claim of a named one) when its caller set no deadline: a table's
// setup is not on callTimeout's clock, because a platform opening many
// tables at once on a busy machine makes shoe-svc's shuffles and writes
// wait their turn. With a deadline, the caller's holds.
const setupTimeout = time.Minute

// setupContext is ctx for CreateTable's calls to shoe-svc: ctx itself
// when it has a deadline, else bounded by setupTimeout.
func setupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, setupTimeout)
}

// closeShoe closes the table's shoe (its reveal becomes public); a shoe
// already closed is done, and one that refuses (e.g. a prepared shoe
// before 5/6) is left behind with a warning. Without an answer it returns
// the error, to be retried. Idempotent by a request id of the table and
// the shoe's number; tableClosed forces the close (the table closed).
func (s *Service) closeShoe(ctx context.Context, t *table, tableClosed bool) error {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req := &shoev1.CloseShoeRequest{RequestId: "table/" + t.ID + "/close/" + strconv.Itoa(t.Shoes), ShoeId: t.ShoeID}
	if tableClosed {
		// Before 5/6 are out: forced, with the reason.
		req.RequestId, req.Force, req.Reason = req.RequestId+"/table-closed", true, "the table closed"
	}
	_, err := s.shoe.CloseShoe(cctx, req)
	if err != nil && errs.Reason(err) != "SHOE_CLOSED" {
		if definite(err) {
			s.log.Warn("shoe not closed", "table", t.ID, "shoe", t.ShoeID, "err", err)
			return nil
		}
		return fmt.Errorf("close shoe %s: %w", t.ShoeID, err)
	}
	return nil
}

// nextShoe closes the table's shoe (its reveal becomes public) and opens
// the next one. Both calls are idempotent by request ids derived from the
// table and the shoe's number, so a retried settlement repeats them
// harmlessly.
func (s *Service) nextShoe(ctx context.Context, t *table) error {
	if err := s.closeShoe(ctx, t, false); err != nil {
		return err
	}
	return s.openShoe(ctx, t, false)
}

// shoeCutter is a game whose house rules may have a player cut the shoe
// (SHOE-CUT): cutter is who cuts the next shoe and his time, "" when
// nobody does.
type shoeCutter interface {
	cutter(t *table) (playerID string, limit time.Duration)
}

// openShoe opens the table's next shoe (CreateShoe, idempotent by the
// table and the shoe's number) and puts it in play in the record. It
// collects its players' seeds, unless the house rule shoe_cut_by_player
// names a cutter and collect is false.
func (s *Service) openShoe(ctx context.Context, t *table, collect bool) error {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req := &shoev1.CreateShoeRequest{
		RequestId: "table/" + t.ID + "/shoe/" + strconv.Itoa(t.Shoes+1),
		Decks:     t.Rules.Decks, CutCardFromEnd: t.Rules.CutCardFromEnd, Burn: t.Rules.Burn, Owner: t.ID,
		// The table's part of the shuffle (SHOE-SHUFFLE, commit-reveal).
		ClientSeed: "table/" + t.ID + "/shoe/" + strconv.Itoa(t.Shoes+1),
		Variant:    t.adapter().shoeVariant(),
		// The players' seeds, after its commitment (seeds.go).
		AwaitPlayerSeeds: true,
		// The table's operator's shoe (shoe-svc answers other operators'
		// callers as for no shoe).
		OperatorId: t.walletOperator(),
	}
	if k, ok := t.adapter().(shoeCutter); ok && !collect {
		if p, limit := k.cutter(t); p != "" {
			req.CutterPlayerId, req.CutTimeLimit = p, durationpb.New(limit)
			req.AwaitPlayerSeeds = false // the cutter's seed instead
		}
	}
	shoe, err := s.shoe.CreateShoe(cctx, req)
	if err != nil {
		return fmt.Errorf("open next shoe: %w", err)
	}
	t.ShoeID, t.Shoes, t.Certification = shoe.GetShoe().GetShoeId(), t.Shoes+1, false
	t.ShoeDecks, t.ShoeDealt, t.ShoeVoidHidden = shoe.GetShoe().GetDecks(), [13]int{}, [13]int{}
	t.Entropy = openedEntropy(shoe.GetShoe())
	return nil
}

// shoeSpent reports whether shoe-svc refused a deal because the shoe can
// deal no new coup.
func shoeSpent(err error) bool {
	switch errs.Reason(err) {
	case "CUT_CARD_OUT", "SHOE_CLOSED", "SHOE_EXHAUSTED":
		return true
	}
	return false
}

// awaitingCut reports whether shoe-svc refused a deal because the shoe
// waits for its cutter (SHOE-CUT): the retry loop deals once it is cut.
func awaitingCut(err error) bool { return errs.Reason(err) == "SHOE_NOT_CUT" }

// handTotal is the HAND-TOTAL of card codes.
func handTotal(codes []string) (int, error) {
	cards := make([]rules.Card, 0, len(codes))
	for _, code := range codes {
		card, err := rules.ParseCard(code)
		if err != nil {
			return 0, err
		}
		cards = append(cards, card)
	}
	return rules.Total(cards), nil
}

func eventOutcome(o rules.Outcome) eventsv1.Outcome { return game.EventOutcome(o) }

// shoeHand is a deal's hand as the shoe records it (at most 32 bytes).
func shoeHand(hand string) string {
	if len(hand) > 32 {
		hand, _, _ = strings.Cut(hand, ":")
	}
	return hand
}

// openedEntropy is the record of a shoe the table has just put in play.
func openedEntropy(shoe *shoev1.Shoe) entropy {
	return entropy{Commitment: shoe.GetCommitment(), Cutter: shoe.GetCutterPlayerId(),
		Collecting: shoe.GetState() == shoev1.ShoeState_SHOE_STATE_AWAITING_SEEDS}
}
