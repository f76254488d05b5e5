package rules

import (
	"errors"
	"testing"
)

func TestCARDValue(t *testing.T) {
	want := map[Rank]int{
		Ace: 1, Two: 2, Three: 3, Four: 4, Five: 5, Six: 6, Seven: 7, Eight: 8, Nine: 9,
		Ten: 0, Jack: 0, Queen: 0, King: 0,
	}
	for r, v := range want {
		for s := Clubs; s <= Spades; s++ {
			c := Card{Rank: r, Suit: s}
			if !c.Valid() {
				t.Errorf("%v: not valid", c)
			}
			if got := c.Value(); got != v {
				t.Errorf("Card{%d,%d}.Value() = %d, want %d", r, s, got, v)
			}
		}
	}
	for _, c := range []Card{{}, {Rank: 14}, {Rank: Ace, Suit: 4}, {Rank: 255, Suit: 255}} {
		if c.Valid() {
			t.Errorf("%+v: Valid() = true", c)
		}
		if c.Value() != 0 || c.Index() != -1 || c.String() != "??" {
			t.Errorf("%+v: Value %d Index %d String %q, want 0 -1 ??", c, c.Value(), c.Index(), c.String())
		}
	}
}

func TestCardString(t *testing.T) {
	tests := []struct {
		card Card
		want string
	}{
		{Card{Ace, Spades}, "AS"},
		{Card{Ten, Diamonds}, "TD"},
		{Card{King, Hearts}, "KH"},
		{Card{Two, Clubs}, "2C"},
		{Card{Nine, Clubs}, "9C"},
		{Card{Jack, Spades}, "JS"},
		{Card{Queen, Diamonds}, "QD"},
	}
	for _, tt := range tests {
		if got := tt.card.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.card, got, tt.want)
		}
		got, err := ParseCard(tt.want)
		if err != nil || got != tt.card {
			t.Errorf("ParseCard(%q) = %+v, %v; want %+v", tt.want, got, err, tt.card)
		}
	}
}

func TestParseCardErrors(t *testing.T) {
	for _, s := range []string{"", "A", "ASX", "as", "aS", "1S", "0S", "10S", "XS", "AX", "??", " AS", "AS ", "\x00\x00"} {
		if c, err := ParseCard(s); !errors.Is(err, ErrInvalidCard) {
			t.Errorf("ParseCard(%q) = %+v, %v; want ErrInvalidCard", s, c, err)
		}
	}
}

func TestCardIndex(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < DeckSize; i++ {
		c, err := CardFromIndex(i)
		if err != nil {
			t.Fatalf("CardFromIndex(%d): %v", i, err)
		}
		if !c.Valid() || c.Index() != i {
			t.Errorf("CardFromIndex(%d) = %+v, Index %d", i, c, c.Index())
		}
		if want := int(c.Suit)*13 + int(c.Rank) - 1; want != i {
			t.Errorf("CardFromIndex(%d) = %+v, formula gives %d", i, c, want)
		}
		p, err := ParseCard(c.String())
		if err != nil || p != c {
			t.Errorf("ParseCard(%q) = %+v, %v; want %+v", c.String(), p, err, c)
		}
		seen[c.String()] = true
	}
	if len(seen) != DeckSize {
		t.Errorf("%d distinct cards, want 52", len(seen))
	}
	for _, i := range []int{-1, 52, 1000, -1 << 40} {
		if _, err := CardFromIndex(i); !errors.Is(err, ErrInvalidCard) {
			t.Errorf("CardFromIndex(%d) err = %v, want ErrInvalidCard", i, err)
		}
	}
}

func TestSHOEDecksNewDecks(t *testing.T) {
	for _, n := range []int{-1, 0} {
		if got := NewDecks(n); got != nil {
			t.Errorf("NewDecks(%d) = %d cards, want nil", n, len(got))
		}
	}
	for _, n := range []int{1, 6, 8} {
		cards := NewDecks(n)
		if len(cards) != n*DeckSize {
			t.Fatalf("NewDecks(%d): %d cards", n, len(cards))
		}
		count := map[Card]int{}
		for i, c := range cards {
			if c.Index() != i%DeckSize {
				t.Fatalf("NewDecks(%d)[%d] = %v, want index %d", n, i, c, i%DeckSize)
			}
			count[c]++
		}
		for c, k := range count {
			if k != n {
				t.Errorf("NewDecks(%d): %v appears %d times", n, c, k)
			}
		}
	}
}

func FuzzParseCard(f *testing.F) {
	for _, s := range []string{"AS", "TD", "KH", "", "as", "10S", "??", "\xff\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCard(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidCard) {
				t.Fatalf("ParseCard(%q) error %v does not wrap ErrInvalidCard", s, err)
			}
			if c != (Card{}) {
				t.Fatalf("ParseCard(%q) returned %+v with an error", s, c)
			}
			return
		}
		if !c.Valid() || c.String() != s {
			t.Fatalf("ParseCard(%q) = %+v (String %q)", s, c, c.String())
		}
	})
}
