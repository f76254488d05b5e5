package rules

import "fmt"

// Rule IDs of the old game with aces at eleven (variant OLD).
const (
	RuleOLDDeal     = "OLD-DEAL"
	RuleOLDNatural  = "OLD-NATURAL"
	RuleOLDDraw     = "OLD-DRAW"
	RuleOLDSettle   = "OLD-SETTLE"
	RuleOLDStake    = "OLD-STAKE"
	RuleOLDBaccarat = "OLD-BACCARAT"
)

// The bounds of an OLD coup: at least three players, so two punters
// (OLD-DECKS); at most as many as two decks can deal three cards each.
const (
	OldMinPunters = 2
	OldMaxPunters = 16
	OldDecks      = 2
)

// OldValue is a card's points in the old game: ace 11, king, queen, jack
// and ten 10, the others their face value (OLD-VALUES). An invalid card is
// 0.
func OldValue(c Card) int {
	// Source: RULES.md OLD-VALUES
	switch {
	case !c.Valid():
		return 0
	case c.Rank == Ace:
		return 11
	case c.Rank >= Ten:
		return 10
	}
	return int(c.Rank)
}

// OldPoints is the sum of the cards' OldValue, e.g. ace and seven are 18.
func OldPoints(cards []Card) int {
	p := 0
	for _, c := range cards {
		p += OldValue(c)
	}
	return p
}

// OldRank orders totals (OLD-RANK): 9, 19, 29 best, then 8, 18, 28, and so
// on; the rank is points modulo 10, 0 being baccarat (10, 20, 30).
func OldRank(points int) int { return points % 10 }

// IsOldBaccarat reports a total of 10, 20 or 30 (OLD-RANK: baccarat).
func IsOldBaccarat(points int) bool { return points > 0 && points%10 == 0 }

// OldCoup is the state of an OLD coup. Seats are numbered clockwise from
// the banker's left neighbour: seat 0 is on his left, seat n-1 on his
// right.
type OldCoup struct {
	// Punters are the punters' hands by seat (2..16 seats).
	Punters [][]Card
	// Banker is the banker's hand.
	Banker []Card
	// Stood[i] records that punter i declined his one card; nil means
	// nobody has. Its length, if set, is len(Punters).
	Stood []bool
	// BankerStood records that the banker declined his card.
	BankerStood bool
}

// OldStep is the answer of NextStepOld.
type OldStep struct {
	// Kind: StepDealPlayer (a card to Seat), StepDealBanker,
	// StepPlayerChoice (Seat may draw), StepBankerChoice, StepDone.
	Kind StepKind
	// Seat is the punter concerned, -1 for the banker.
	Seat int
	// Rule is the RULES.md ID that decided the step.
	Rule string
}

// OldDealOrder is the order in which the deal gives the cards (OLD-DEAL):
// clockwise from the banker's left neighbour, then the banker; then
// counter-clockwise from the punter on his right, the banker last. -1 is
// the banker.
func OldDealOrder(punters int) []int {
	order := make([]int, 0, 2*punters+2)
	for i := 0; i < punters; i++ {
		order = append(order, i)
	}
	order = append(order, -1)
	for i := punters - 1; i >= 0; i-- {
		order = append(order, i)
	}
	return append(order, -1)
}

// OldDrawOrder is the order of the draw (OLD-DRAW): the punter on the
// banker's right, then the one on his left, then alternately outwards;
// the banker last (-1).
func OldDrawOrder(punters int) []int {
	order := make([]int, 0, punters+1)
	for l, r := 0, punters-1; l <= r; l, r = l+1, r-1 {
		order = append(order, r)
		if l != r {
			order = append(order, l)
		}
	}
	return append(order, -1)
}

// oldMayDraw is OLD-DRAW's "less than 4": read as a rank (points modulo
// 10) of 0..3, since two cards never total under 4 points.
func oldMayDraw(points int) bool { return OldRank(points) < 4 }

// NextStepOld is the hand state machine of the old game (OLD-*). Choices
// made where the text is open:
//
//   - "less than 4" is a rank of 0..3 (points 10-13, 20-22 too): two cards
//     always total at least 4 points, so the literal reading never applies.
//   - The banker draws under the same condition as the punters, last.
//   - A natural is a two-card 8, 9, 18 or 19 in any hand; then nobody draws
//     and the coup is settled as dealt (OLD-NATURAL).
//
// Errors wrap ErrIllegalState.
func NextStepOld(c OldCoup) (OldStep, error) {
	n := len(c.Punters)
	if n < OldMinPunters || n > OldMaxPunters {
		// Source: RULES.md OLD-DECKS (at least three players)
		return OldStep{}, fmt.Errorf("%w: OLD-DECKS: %d punters, want %d..%d", ErrIllegalState, n, OldMinPunters, OldMaxPunters)
	}
	if c.Stood != nil && len(c.Stood) != n {
		return OldStep{}, fmt.Errorf("%w: %d stand flags for %d punters", ErrIllegalState, len(c.Stood), n)
	}
	stood := func(i int) bool {
		if i < 0 {
			return c.BankerStood
		}
		return c.Stood != nil && c.Stood[i]
	}
	hand := func(i int) []Card {
		if i < 0 {
			return c.Banker
		}
		return c.Punters[i]
	}
	anyStood := c.BankerStood
	for i := -1; i < n; i++ {
		h := hand(i)
		for j, card := range h {
			if !card.Valid() {
				return OldStep{}, fmt.Errorf("%w: %w: seat %d card %d is %+v", ErrIllegalState, ErrInvalidCard, i, j, card)
			}
		}
		if len(h) > maxHand {
			return OldStep{}, fmt.Errorf("%w: HAND-SIZE: seat %d has %d cards", ErrIllegalState, i, len(h))
		}
		anyStood = anyStood || stood(i)
	}
	// The deal: the first hand in deal order short of its card is next,
	// and no hand may be ahead of the deal.
	order := OldDealOrder(n)
	dealt := make(map[int]int, n+1)
	for k, seat := range order {
		dealt[seat]++
		if len(hand(seat)) >= dealt[seat] {
			continue
		}
		// The deal stops here: every later hand must have no more than
		// it was dealt so far.
		for i := -1; i < n; i++ {
			want := dealt[i]
			if i == seat {
				want--
			}
			if len(hand(i)) != want {
				return OldStep{}, fmt.Errorf("%w: %s: seat %d has %d cards at deal step %d", ErrIllegalState, RuleOLDDeal, i, len(hand(i)), k)
			}
		}
		if anyStood {
			return OldStep{}, fmt.Errorf("%w: %s: a hand stood before the deal was complete", ErrIllegalState, RuleOLDDeal)
		}
		// Source: RULES.md OLD-DEAL
		if seat < 0 {
			return OldStep{Kind: StepDealBanker, Seat: -1, Rule: RuleOLDDeal}, nil
		}
		return OldStep{Kind: StepDealPlayer, Seat: seat, Rule: RuleOLDDeal}, nil
	}
	natural := false
	for i := -1; i < n; i++ {
		if OldRank(OldPoints(hand(i)[:2])) >= 8 {
			natural = true
		}
	}
	if natural {
		// Source: RULES.md OLD-NATURAL (with a 9/19/8/18 anywhere, nobody draws)
		for i := -1; i < n; i++ {
			if len(hand(i)) > 2 || stood(i) {
				return OldStep{}, fmt.Errorf("%w: %s: seat %d played on after a natural", ErrIllegalState, RuleOLDNatural, i)
			}
		}
		return OldStep{Kind: StepDone, Seat: -1, Rule: RuleOLDNatural}, nil
	}
	// The draw, in order; each may take one card (OLD-DRAW).
	pending := -2
	for _, seat := range OldDrawOrder(n) {
		h := hand(seat)
		may := oldMayDraw(OldPoints(h[:2]))
		acted := len(h) == 3 || stood(seat)
		switch {
		case len(h) == 3 && (!may || stood(seat)):
			return OldStep{}, fmt.Errorf("%w: %s: seat %d drew on %d points", ErrIllegalState, RuleOLDDraw, seat, OldPoints(h[:2]))
		case stood(seat) && !may:
			return OldStep{}, fmt.Errorf("%w: %s: seat %d declined a draw it had no right to", ErrIllegalState, RuleOLDDraw, seat)
		case acted && pending != -2:
			return OldStep{}, fmt.Errorf("%w: %s: seat %d acted before seat %d", ErrIllegalState, RuleOLDDraw, seat, pending)
		case !acted && may && pending == -2:
			pending = seat
		}
	}
	if pending != -2 {
		// Source: RULES.md OLD-DRAW (less than 4 may draw one card, in order)
		if pending < 0 {
			return OldStep{Kind: StepBankerChoice, Seat: -1, Rule: RuleOLDDraw}, nil
		}
		return OldStep{Kind: StepPlayerChoice, Seat: pending, Rule: RuleOLDDraw}, nil
	}
	return OldStep{Kind: StepDone, Seat: -1, Rule: RuleOLDSettle}, nil
}
