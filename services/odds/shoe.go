package odds

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/chemmy/chemmy/services/rules"
)

// MaxCards is the largest shoe this package enumerates: 20 decks. It keeps
// every weight, a product of at most six counts, below 2^63.
const MaxCards = 20 * rules.DeckSize

// coupCards is the most cards one coup uses (HAND-SIZE: 3 + 3).
const coupCards = 6

// rankChars names the ranks in Shoe.String and ParseShoe, Ace first.
const rankChars = "A23456789TJQK"

// Shoe is a shoe composition: how many cards of each rank are still in the
// shoe. Suits do not matter to any variant.
type Shoe struct {
	// Ranks[r-1] is the number of cards of rank r (rules.Ace..rules.King).
	Ranks [13]int
	// Infinite draws every card with replacement: Ranks are then relative
	// frequencies that never deplete (the infinite-deck model of the
	// literature; InfiniteShoe is one deck's proportions).
	Infinite bool
}

// Decks is a full shoe of n standard decks (SHOE-DECKS): 4n cards of each
// rank.
func Decks(n int) Shoe {
	var s Shoe
	for i := range s.Ranks {
		s.Ranks[i] = 4 * n
	}
	return s
}

// InfiniteShoe is the infinite-deck model: each rank drawn with
// probability 1/13 whatever was dealt before.
func InfiniteShoe() Shoe {
	s := Decks(1)
	for i := range s.Ranks {
		s.Ranks[i] = 1
	}
	s.Infinite = true
	return s
}

// Cards is the number of cards in the shoe.
func (s Shoe) Cards() int {
	n := 0
	for _, c := range s.Ranks {
		n += c
	}
	return n
}

// Validate checks that every count is >= 0, that the shoe holds at least
// min cards (a finite shoe) or one (an infinite one), and at most MaxCards.
// Errors wrap ErrInvalidShoe.
func (s Shoe) validate(min int) error {
	n := 0
	for i, c := range s.Ranks {
		if c < 0 || c > MaxCards {
			return fmt.Errorf("%w: %d cards of rank %c", ErrInvalidShoe, c, rankChars[i])
		}
		n += c
	}
	if n > MaxCards {
		return fmt.Errorf("%w: %d cards, more than %d", ErrInvalidShoe, n, MaxCards)
	}
	if s.Infinite {
		min = 1
	}
	if n < min {
		return fmt.Errorf("%w: %d cards, a coup needs %d", ErrInvalidShoe, n, min)
	}
	return nil
}

// Validate checks that s can deal a coup: counts >= 0, at least six cards
// (one for an infinite shoe), at most MaxCards. Errors wrap ErrInvalidShoe.
func (s Shoe) Validate() error { return s.validate(coupCards) }

// Remove returns s without the given cards (cards dealt from it). A card
// the shoe does not hold, or an invalid card, is an error wrapping
// ErrInvalidShoe. An infinite shoe is returned unchanged.
func (s Shoe) Remove(cards ...rules.Card) (Shoe, error) {
	for _, c := range cards {
		if !c.Valid() {
			return s, fmt.Errorf("%w: %w: %+v", ErrInvalidShoe, rules.ErrInvalidCard, c)
		}
		if s.Infinite {
			continue
		}
		if s.Ranks[c.Rank-1] == 0 {
			return s, fmt.Errorf("%w: no %c left for %v", ErrInvalidShoe, rankChars[c.Rank-1], c)
		}
		s.Ranks[c.Rank-1]--
	}
	return s, nil
}

// add returns s with cards put back (finite shoes only).
func (s Shoe) add(cards ...rules.Card) Shoe {
	if s.Infinite {
		return s
	}
	for _, c := range cards {
		s.Ranks[c.Rank-1]++
	}
	return s
}

// String is the composition as ParseShoe reads it, e.g.
// "A=32,2=32,...,K=32", with an "inf:" prefix for an infinite shoe.
func (s Shoe) String() string {
	var b strings.Builder
	if s.Infinite {
		b.WriteString("inf:")
	}
	for i, c := range s.Ranks {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte(rankChars[i])
		b.WriteByte('=')
		b.WriteString(strconv.Itoa(c))
	}
	return b.String()
}

// ParseShoe reads a composition "RANK=COUNT,..." with ranks from
// "A23456789TJQK" (also "10" for T, lower case accepted). A rank not listed
// has count 0; a rank listed twice is an error. A prefix "inf:" makes an
// infinite shoe with those relative frequencies. Errors wrap ErrInvalidShoe.
func ParseShoe(text string) (Shoe, error) {
	var s Shoe
	text = strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(text, "inf:"); ok {
		s.Infinite, text = true, rest
	}
	var seen [13]bool
	for _, part := range strings.Split(text, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, count, ok := strings.Cut(part, "=")
		if !ok {
			return Shoe{}, fmt.Errorf("%w: %q is not RANK=COUNT", ErrInvalidShoe, part)
		}
		name = strings.ToUpper(strings.TrimSpace(name))
		if name == "10" {
			name = "T"
		}
		r := strings.Index(rankChars, name)
		if len(name) != 1 || r < 0 {
			return Shoe{}, fmt.Errorf("%w: unknown rank %q", ErrInvalidShoe, name)
		}
		if seen[r] {
			return Shoe{}, fmt.Errorf("%w: rank %q listed twice", ErrInvalidShoe, name)
		}
		seen[r] = true
		n, err := strconv.Atoi(strings.TrimSpace(count))
		if err != nil || n < 0 || n > MaxCards {
			return Shoe{}, fmt.Errorf("%w: count %q of rank %s", ErrInvalidShoe, count, name)
		}
		s.Ranks[r] = n
	}
	return s, s.Validate()
}

// deck is a shoe reduced to card values (CARD-VALUE), the state of an
// enumeration. take and put draw and return one card of a value.
type deck struct {
	c   [10]int64
	n   int64
	inf bool
}

func newDeck(s Shoe) deck {
	var d deck
	for i, c := range s.Ranks {
		// Source: RULES.md CARD-VALUE (ten and faces count 0, ace 1)
		d.c[rules.Card{Rank: rules.Rank(i + 1)}.Value()] += int64(c)
		d.n += int64(c)
	}
	d.inf = s.Infinite
	return d
}

// take returns the weight of drawing value v (the count left) and removes
// one such card; a zero weight removes nothing.
func (d *deck) take(v int) int64 {
	w := d.c[v]
	if w > 0 && !d.inf {
		d.c[v]--
		d.n--
	}
	return w
}

// put returns a card taken with a positive weight.
func (d *deck) put(v int) {
	if !d.inf {
		d.c[v]++
		d.n++
	}
}

// fill is the table of weights of unused positions: fill[k] is the number
// of orderings of the depth-k positions a coup that used k cards leaves
// unused, so every leaf is counted as a deal of depth cards.
func (d deck) fill(depth int) []int64 {
	f := make([]int64, depth+1)
	for k := 0; k <= depth; k++ {
		w := int64(1)
		for j := k; j < depth; j++ {
			if d.inf {
				w *= d.n
			} else {
				w *= d.n - int64(j)
			}
		}
		f[k] = w
	}
	return f
}
