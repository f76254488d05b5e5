package rules

import "fmt"

// Rank is the rank of a card: 1 (Ace) through 13 (King). The zero value is
// not a rank.
type Rank uint8

// The thirteen ranks.
const (
	Ace   Rank = 1
	Two   Rank = 2
	Three Rank = 3
	Four  Rank = 4
	Five  Rank = 5
	Six   Rank = 6
	Seven Rank = 7
	Eight Rank = 8
	Nine  Rank = 9
	Ten   Rank = 10
	Jack  Rank = 11
	Queen Rank = 12
	King  Rank = 13
)

// Suit is the suit of a card: 0 (Clubs) through 3 (Spades).
type Suit uint8

// The four suits, in the order used by Card.Index and NewDecks.
const (
	Clubs Suit = iota
	Diamonds
	Hearts
	Spades
)

const (
	rankChars = "A23456789TJQK" // rank r is rankChars[r-1]
	suitChars = "CDHS"          // suit s is suitChars[s]

	// DeckSize is the number of cards in one standard deck.
	DeckSize = 52
)

// Valid reports whether r is one of Ace..King.
func (r Rank) Valid() bool { return r >= Ace && r <= King }

// Valid reports whether s is one of Clubs..Spades.
func (s Suit) Valid() bool { return s <= Spades }

// Card is one playing card. The zero value is not a valid card.
type Card struct {
	Rank Rank
	Suit Suit
}

// Valid reports whether c is one of the 52 cards of a standard deck.
func (c Card) Valid() bool { return c.Rank.Valid() && c.Suit.Valid() }

// Value is the point value of c: ten, jack, queen and king count 0, ace 1,
// two to nine their face value. An invalid card counts 0.
func (c Card) Value() int {
	// Source: RULES.md CARD-VALUE
	if c.Suit.Valid() && c.Rank >= Ace && c.Rank <= Nine {
		return int(c.Rank)
	}
	return 0
}

// String returns the two-character form of c: the rank from "A23456789TJQK"
// followed by the suit from "CDHS", e.g. "AS", "TD", "KH". An invalid card
// is "??", which ParseCard rejects.
func (c Card) String() string {
	if !c.Valid() {
		return "??"
	}
	return string([]byte{rankChars[c.Rank-1], suitChars[c.Suit]})
}

// ParseCard is the inverse of Card.String. It accepts exactly the 52
// strings String produces (upper case, two characters); anything else
// returns an error wrapping ErrInvalidCard.
func ParseCard(s string) (Card, error) {
	if len(s) != 2 {
		return Card{}, fmt.Errorf("%w: %q is not two characters", ErrInvalidCard, s)
	}
	r := indexByte(rankChars, s[0])
	u := indexByte(suitChars, s[1])
	if r < 0 || u < 0 {
		return Card{}, fmt.Errorf("%w: %q", ErrInvalidCard, s)
	}
	return Card{Rank: Rank(r + 1), Suit: Suit(u)}, nil
}

func indexByte(s string, b byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == b {
			return i
		}
	}
	return -1
}

// Index returns the position of c in a fresh deck, 0..51:
// int(Suit)*13 + int(Rank)-1. An invalid card returns -1.
func (c Card) Index() int {
	if !c.Valid() {
		return -1
	}
	return int(c.Suit)*13 + int(c.Rank) - 1
}

// CardFromIndex is the inverse of Card.Index. An index outside 0..51
// returns an error wrapping ErrInvalidCard.
func CardFromIndex(i int) (Card, error) {
	if i < 0 || i >= DeckSize {
		return Card{}, fmt.Errorf("%w: index %d outside 0..51", ErrInvalidCard, i)
	}
	return Card{Rank: Rank(i%13 + 1), Suit: Suit(i / 13)}, nil
}

// NewDecks returns n standard 52-card decks, 52*n cards, unshuffled: each
// deck in Index order (clubs ace..king, diamonds, hearts, spades). It is the
// input of shoe building (SHOE-DECKS); shuffling is the caller's job.
// n <= 0 returns nil.
func NewDecks(n int) []Card {
	if n <= 0 {
		return nil
	}
	cards := make([]Card, 0, n*DeckSize)
	for d := 0; d < n; d++ {
		for i := 0; i < DeckSize; i++ {
			c, _ := CardFromIndex(i)
			cards = append(cards, c)
		}
	}
	return cards
}
