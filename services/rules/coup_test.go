package rules

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// choices answers the choice steps of a coup: draw (true) or stand (false).
type choices struct{ player, banker bool }

// apply performs step s on c with the card next (for deal steps) and the
// choices ch; it returns the new coup. Slices are copied so coups explored
// side by side never share backing arrays.
func apply(c Coup, s Step, next Card, ch choices) Coup {
	c.Player = append([]Card(nil), c.Player...)
	c.Banker = append([]Card(nil), c.Banker...)
	switch s.Kind {
	case StepDealPlayer:
		c.Player = append(c.Player, next)
	case StepDealBanker:
		c.Banker = append(c.Banker, next)
	case StepPlayerChoice:
		if ch.player {
			c.Player = append(c.Player, next)
		} else {
			c.PlayerStood = true
		}
	case StepBankerChoice:
		if ch.banker {
			c.Banker = append(c.Banker, next)
		} else {
			c.BankerStood = true
		}
	}
	return c
}

// play resolves a coup from the shoe order deck, answering choices with ch.
// It returns the final coup, the final step and the kinds and rules of all
// steps on the way.
func play(t testing.TB, deck []Card, banco bool, hr HouseRules, ch choices) (Coup, Step, []string) {
	t.Helper()
	c := Coup{Banco: banco}
	var trail []string
	for i := 0; i < 20; i++ {
		s, err := NextStep(c, hr)
		if err != nil {
			t.Fatalf("NextStep(%+v): %v", c, err)
		}
		trail = append(trail, s.Kind.String()+" "+s.Rule)
		if s.Kind == StepDone {
			return c, s, trail
		}
		var next Card
		needCard := s.Kind == StepDealPlayer || s.Kind == StepDealBanker ||
			(s.Kind == StepPlayerChoice && ch.player) || (s.Kind == StepBankerChoice && ch.banker)
		if needCard {
			if len(deck) == 0 {
				t.Fatalf("deck exhausted at %+v, trail %v", c, trail)
			}
			next, deck = deck[0], deck[1:]
		}
		c = apply(c, s, next, ch)
	}
	t.Fatalf("coup did not end: %+v", c)
	return c, Step{}, nil
}

func handString(h []Card) string {
	s := make([]string, len(h))
	for i, c := range h {
		s[i] = c.String()
	}
	return strings.Join(s, " ")
}

func TestCFDeal(t *testing.T) {
	hr := DefaultHouseRules()
	tests := []struct {
		player, banker string
		want           StepKind
	}{
		{"", "", StepDealPlayer},
		{"9S", "", StepDealBanker},
		{"9S", "9H", StepDealPlayer},
		{"9S 9D", "9H", StepDealBanker},
	}
	for _, tt := range tests {
		for _, banco := range []bool{false, true} {
			got, err := NextStep(Coup{Player: cards(tt.player), Banker: cards(tt.banker), Banco: banco}, hr)
			if err != nil || got != (Step{Kind: tt.want, Rule: "CF-DEAL"}) {
				t.Errorf("P[%s] B[%s]: %+v, %v; want %v CF-DEAL", tt.player, tt.banker, got, err, tt.want)
			}
		}
	}
}

// TestCFNatural plays every combination of the four dealt card values and
// checks that naturals, and only naturals, end the coup at once.
func TestCFNatural(t *testing.T) {
	free := DefaultHouseRules()
	free.BancoFreePlay = true
	for _, banco := range []bool{false, true} {
		for p1 := 0; p1 <= 9; p1++ {
			for p2 := 0; p2 <= 9; p2++ {
				for b1 := 0; b1 <= 9; b1++ {
					for b2 := 0; b2 <= 9; b2++ {
						c := Coup{
							Player: []Card{card(p1), card(p2)},
							Banker: []Card{card(b1), card(b2)},
							Banco:  banco,
						}
						pt, bt := (p1+p2)%10, (b1+b2)%10
						got, err := NextStep(c, free)
						if err != nil {
							t.Fatalf("%+v: %v", c, err)
						}
						if pt < 8 && bt < 8 {
							// No natural: the coup goes on to the tableau (under
							// free play, to the player's choice); it can only
							// end here when both hands stand on 6-7.
							switch {
							case got.Natural:
								t.Errorf("P %d B %d: %+v reports a natural", pt, bt, got)
							case banco && got.Kind != StepPlayerChoice:
								t.Errorf("P %d B %d banco free play: %+v, want player_choice", pt, bt, got)
							case !banco && got.Kind == StepDone && (pt < 6 || bt < 6):
								t.Errorf("P %d B %d: %+v ended without a natural", pt, bt, got)
							}
							continue
						}
						want := Step{Kind: StepDone, Outcome: Compare(pt, bt), Natural: true, Rule: "CF-NATURAL-BANKER"}
						if pt >= 8 {
							want.Rule = "CF-NATURAL-PLAYER"
						}
						if got != want {
							t.Errorf("P %d B %d: %+v, want %+v", pt, bt, got, want)
						}
					}
				}
			}
		}
	}
	// The cases the rules name.
	named := []struct {
		name   string
		player string
		banker string
		want   Outcome
		rule   string
	}{
		{"la grande beats la petite", "4S 5D", "3H 5C", OutcomeBankLoses, "CF-NATURAL-PLAYER"},
		{"banker la grande beats player la petite", "4S 4D", "KH 9C", OutcomeBankWins, "CF-NATURAL-PLAYER"},
		{"equal naturals 8 stand off", "4S 4D", "3H 5C", OutcomeStandOff, "CF-NATURAL-PLAYER"},
		{"equal naturals 9 stand off", "9S KD", "4H 5C", OutcomeStandOff, "CF-NATURAL-PLAYER"},
		{"only the player has a natural", "6S 2D", "3H 4C", OutcomeBankLoses, "CF-NATURAL-PLAYER"},
		{"only the banker has a natural", "2S 3D", "4H 4C", OutcomeBankWins, "CF-NATURAL-BANKER"},
		{"banker natural against player 0", "KS QD", "AH 8C", OutcomeBankWins, "CF-NATURAL-BANKER"},
	}
	for _, tt := range named {
		got, err := NextStep(Coup{Player: cards(tt.player), Banker: cards(tt.banker)}, DefaultHouseRules())
		want := Step{Kind: StepDone, Outcome: tt.want, Natural: true, Rule: tt.rule}
		if err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", tt.name, got, err, want)
		}
	}
}

func TestCFPlayerDrawNextStep(t *testing.T) {
	hr := DefaultHouseRules()
	banker := []Card{card(3), card(0)} // 3: no natural; draws when the player stands
	for total := 0; total <= 7; total++ {
		c := Coup{Player: []Card{card(total), card(0)}, Banker: banker}
		got, err := NextStep(c, hr)
		if err != nil {
			t.Fatalf("player %d: %v", total, err)
		}
		var want Step
		switch {
		case total <= 4:
			want = Step{Kind: StepDealPlayer, Rule: "CF-PLAYER-DRAW"}
		case total == 5:
			want = Step{Kind: StepPlayerChoice, Rule: "CF-PLAYER-DRAW"}
		default: // stands; the banker's 3 against a stand draws
			want = Step{Kind: StepDealBanker, Rule: "CF-BANKER-DRAW"}
		}
		if got != want {
			t.Errorf("player %d: %+v, want %+v", total, got, want)
		}
	}
}

func TestNextStepCoups(t *testing.T) {
	def := DefaultHouseRules()
	off := def
	off.BankerOption3vs9, off.BankerOption5vs4 = false, false
	free := def
	free.BancoFreePlay = true
	draw, stand := true, false

	tests := []struct {
		name           string
		deck           string // shoe order: P B P B, then third cards
		banco          bool
		hr             HouseRules
		ch             choices
		player, banker string // final hands
		want           Outcome
		natural        bool
		trail          string // the steps after the deal, comma-separated
	}{
		{name: "CF-NATURAL-PLAYER 9 vs 8", deck: "4S 3H 5D 5C", hr: def,
			player: "4S 5D", banker: "3H 5C", want: OutcomeBankLoses, natural: true,
			trail: "done CF-NATURAL-PLAYER"},
		{name: "CF-NATURAL-BANKER", deck: "2C 4H 3D 4S", hr: def,
			player: "2C 3D", banker: "4H 4S", want: OutcomeBankWins, natural: true,
			trail: "done CF-NATURAL-BANKER"},
		{name: "CF-PLAYER-DRAW on 4, CF-BANKER-DRAW 3 stands vs 8", deck: "AC KH 3D 3S 8H", hr: def,
			player: "AC 3D 8H", banker: "KH 3S", want: OutcomeBankWins,
			trail: "deal_player CF-PLAYER-DRAW, done CF-RESULT"},
		{name: "player stands on 6, banker draws on 5", deck: "6C 2H KD 3S 4D", hr: def,
			player: "6C KD", banker: "2H 3S 4D", want: OutcomeBankWins,
			trail: "deal_banker CF-BANKER-DRAW, done CF-RESULT"},
		{name: "player stands on 7, banker stands on 6", deck: "7C 6H KD KS", hr: def,
			player: "7C KD", banker: "6H KS", want: OutcomeBankLoses,
			trail: "done CF-RESULT"},
		{name: "both stand on 7: stand-off", deck: "7C 7H KD KS", hr: def,
			player: "7C KD", banker: "7H KS", want: OutcomeStandOff,
			trail: "done CF-STANDOFF"},
		{name: "player option on 5 stands, banker 5 draws vs stood", deck: "5C 2H KD 3S AD", hr: def, ch: choices{stand, stand},
			player: "5C KD", banker: "2H 3S AD", want: OutcomeBankWins,
			trail: "player_choice CF-PLAYER-DRAW, deal_banker CF-BANKER-DRAW, done CF-RESULT"},
		{name: "player option on 5 draws, banker 5 vs 4 option stands", deck: "5C 2H KD 3S 4D", hr: def, ch: choices{draw, stand},
			player: "5C KD 4D", banker: "2H 3S", want: OutcomeBankLoses,
			trail: "player_choice CF-PLAYER-DRAW, banker_choice CF-BANKER-DRAW, done CF-RESULT"},
		{name: "banker 5 vs 4 option off draws", deck: "5C 2H KD 3S 4D 3H", hr: off, ch: choices{draw, stand},
			player: "5C KD 4D", banker: "2H 3S 3H", want: OutcomeBankLoses,
			trail: "player_choice CF-PLAYER-DRAW, deal_banker CF-BANKER-DRAW, done CF-RESULT"},
		{name: "banker 3 vs 9 option draws", deck: "2C AH KD 2S 9D 5H", hr: def, ch: choices{draw, draw},
			player: "2C KD 9D", banker: "AH 2S 5H", want: OutcomeBankWins,
			trail: "deal_player CF-PLAYER-DRAW, banker_choice CF-BANKER-DRAW, done CF-RESULT"},
		{name: "banker 3 vs 9 option stands", deck: "2C AH KD 2S 9D", hr: def, ch: choices{draw, stand},
			player: "2C KD 9D", banker: "AH 2S", want: OutcomeBankWins,
			trail: "deal_player CF-PLAYER-DRAW, banker_choice CF-BANKER-DRAW, done CF-RESULT"},
		{name: "banker 3 vs 9 option off draws", deck: "2C AH KD 2S 9D 5H", hr: off,
			player: "2C KD 9D", banker: "AH 2S 5H", want: OutcomeBankWins,
			trail: "deal_player CF-PLAYER-DRAW, deal_banker CF-BANKER-DRAW, done CF-RESULT"},
		{name: "banker 6 draws vs 7 and stand-off", deck: "KC 3H AD 3S 7D 2H", hr: def,
			player: "KC AD 7D", banker: "3H 3S 2H", want: OutcomeStandOff,
			trail: "deal_player CF-PLAYER-DRAW, deal_banker CF-BANKER-DRAW, done CF-STANDOFF"},
		{name: "banco without banco_free_play follows the tableau", deck: "2C 7H KD KS 3D", banco: true, hr: def,
			player: "2C KD 3D", banker: "7H KS", want: OutcomeBankWins,
			trail: "deal_player CF-PLAYER-DRAW, done CF-RESULT"},
		{name: "CF-BANCO-FREEDOM player stands on 2, banker draws on 7", deck: "2C 7H KD KS 5D", banco: true, hr: free, ch: choices{stand, draw},
			player: "2C KD", banker: "7H KS 5D", want: OutcomeStandOff,
			trail: "player_choice CF-BANCO-FREEDOM, banker_choice CF-BANCO-FREEDOM, done CF-STANDOFF"},
		{name: "CF-BANCO-FREEDOM player draws on 7, banker stands on 0", deck: "7C KH KD QS AD", banco: true, hr: free, ch: choices{draw, stand},
			player: "7C KD AD", banker: "KH QS", want: OutcomeBankLoses,
			trail: "player_choice CF-BANCO-FREEDOM, banker_choice CF-BANCO-FREEDOM, done CF-RESULT"},
		{name: "free play house rule without banco follows the tableau", deck: "7C KH KD QS AD", hr: free, ch: choices{draw, stand},
			player: "7C KD", banker: "KH QS AD", want: OutcomeBankLoses,
			trail: "deal_banker CF-BANKER-DRAW, done CF-RESULT"},
		{name: "free play naturals still end the coup", deck: "9C KH KD QS", banco: true, hr: free,
			player: "9C KD", banker: "KH QS", want: OutcomeBankLoses, natural: true,
			trail: "done CF-NATURAL-PLAYER"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, s, trail := play(t, cards(tt.deck), tt.banco, tt.hr, tt.ch)
			if got := handString(c.Player); got != tt.player {
				t.Errorf("player %q, want %q", got, tt.player)
			}
			if got := handString(c.Banker); got != tt.banker {
				t.Errorf("banker %q, want %q", got, tt.banker)
			}
			if s.Outcome != tt.want || s.Natural != tt.natural {
				t.Errorf("outcome %v natural %v, want %v %v", s.Outcome, s.Natural, tt.want, tt.natural)
			}
			if len(trail) < 4 || trail[0] != "deal_player CF-DEAL" || trail[1] != "deal_banker CF-DEAL" ||
				trail[2] != "deal_player CF-DEAL" || trail[3] != "deal_banker CF-DEAL" {
				t.Fatalf("deal trail %v", trail)
			}
			if got := strings.Join(trail[4:], ", "); got != tt.trail {
				t.Errorf("trail %q, want %q", got, tt.trail)
			}
		})
	}
}

func TestNextStepIllegal(t *testing.T) {
	def := DefaultHouseRules()
	off := def
	off.BankerOption3vs9, off.BankerOption5vs4 = false, false
	free := def
	free.BancoFreePlay = true

	tests := []struct {
		name           string
		player, banker string
		playerStood    bool
		bankerStood    bool
		banco          bool
		hr             HouseRules
	}{
		{name: "HAND-SIZE player 4 cards", player: "AC AD AH AS", banker: "KC KD KH"},
		{name: "HAND-SIZE banker 4 cards", player: "AC AD AH", banker: "KC KD KH AS"},
		{name: "CF-DEAL banker first", banker: "AC"},
		{name: "CF-DEAL banker two ahead", player: "AC", banker: "2C 3C"},
		{name: "CF-DEAL player two ahead", player: "AC 2C"},
		{name: "CF-DEAL player third before banker second", player: "AC 2C 3C", banker: "4C"},
		{name: "CF-DEAL banker three, player none", banker: "AC 2C 3C"},
		{name: "CF-DEAL player stood during deal", player: "AC", banker: "2C", playerStood: true},
		{name: "CF-DEAL banker stood during deal", player: "AC 5D", banker: "2C", bankerStood: true},
		{name: "CF-NATURAL-PLAYER then player third", player: "4C 4D AH", banker: "2C 3C"},
		{name: "CF-NATURAL-PLAYER then banker third", player: "4C 5D", banker: "2C 3C AH"},
		{name: "CF-NATURAL-BANKER then player third", player: "2C 3C AH", banker: "4C 5D"},
		{name: "CF-NATURAL-BANKER then banker third", player: "2C 3C", banker: "4C 4D AH"},
		{name: "CF-NATURAL-PLAYER then player stood", player: "4C 4D", banker: "2C 3C", playerStood: true},
		{name: "CF-NATURAL-BANKER then banker stood", player: "2C 4C", banker: "4C 4D", bankerStood: true},
		{name: "CF-NATURAL both under free play then player third", player: "9C KD AH", banker: "9D KC", banco: true, hr: free},
		{name: "CF-PLAYER-DRAW third card on 6", player: "6C KD AH", banker: "2C 3C"},
		{name: "CF-PLAYER-DRAW third card on 7", player: "3C 4D AH", banker: "2C KC"},
		{name: "CF-PLAYER-DRAW stood with third card", player: "5C KD AH", banker: "2C 3C", playerStood: true},
		{name: "CF-PLAYER-DRAW stood on 4", player: "4C KD", banker: "2C 3C", playerStood: true},
		{name: "CF-PLAYER-DRAW stood on 0", player: "KC QD", banker: "2C 3C", playerStood: true},
		{name: "CF-BANKER-DRAW banker third before player draws on 3", player: "3C KD", banker: "2C 3C AH"},
		{name: "CF-BANKER-DRAW banker third before player chooses on 5", player: "5C KD", banker: "2C 3C AH"},
		{name: "CF-BANKER-DRAW banker stood before player draws", player: "3C KD", banker: "2C 3C", bankerStood: true},
		{name: "CF-BANKER-DRAW banker stood before player chooses", player: "5C KD", banker: "2C 3C", bankerStood: true},
		{name: "CF-BANCO-FREEDOM banker third before player chooses", player: "7C KD", banker: "2C 3C AH", banco: true, hr: free},
		{name: "CF-BANKER-DRAW third on 6 vs stood", player: "7C KD", banker: "3C 3D AH"},
		{name: "CF-BANKER-DRAW third on 7 vs stood", player: "6C KD", banker: "3C 4D AH"},
		{name: "CF-BANKER-DRAW third on 3 vs 8", player: "2C KD 8H", banker: "3C KD AH"},
		{name: "CF-BANKER-DRAW third on 4 vs ace", player: "2C KD AH", banker: "4C KD AS"},
		{name: "CF-BANKER-DRAW third on 6 vs 5", player: "2C KD 5H", banker: "6C KD AS"},
		{name: "CF-BANKER-DRAW stood on 5 vs stood", player: "6C KD", banker: "5C KD", bankerStood: true},
		{name: "CF-BANKER-DRAW stood on 2 vs 9", player: "2C KD 9H", banker: "2D KS", bankerStood: true},
		{name: "CF-BANKER-DRAW stood on 3 vs 9 with option off", player: "2C KD 9H", banker: "3D KS", bankerStood: true, hr: off},
		{name: "CF-BANKER-DRAW stood on 5 vs 4 with option off", player: "2C KD 4H", banker: "5D KS", bankerStood: true, hr: off},
		{name: "CF-BANKER-DRAW stood with third card", player: "6C KD", banker: "5C KD AH", bankerStood: true},
		{name: "CF-BANCO-FREEDOM banker stood with third card", player: "6C KD", banker: "5C KD AH", bankerStood: true, banco: true, hr: free},
		{name: "CF-BANCO-FREEDOM player stood with third card", player: "6C KD AH", banker: "5C KD", playerStood: true, banco: true, hr: free},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hr := tt.hr
			if hr == (HouseRules{}) {
				hr = def
			}
			c := Coup{Player: cards(tt.player), Banker: cards(tt.banker), PlayerStood: tt.playerStood, BankerStood: tt.bankerStood, Banco: tt.banco}
			got, err := NextStep(c, hr)
			if !errors.Is(err, ErrIllegalState) {
				t.Fatalf("NextStep = %+v, %v; want ErrIllegalState", got, err)
			}
			if got != (Step{}) {
				t.Errorf("NextStep returned %+v with an error", got)
			}
		})
	}

	// Invalid cards wrap both sentinels.
	for _, c := range []Coup{
		{Player: []Card{{}}},
		{Player: []Card{{Rank: Ace, Suit: 4}}},
		{Player: cards("AC"), Banker: []Card{{Rank: 14}}},
		{Player: cards("AC 2C 3C"), Banker: []Card{{Rank: King}, {Rank: 0}, {Rank: King}}},
	} {
		_, err := NextStep(c, def)
		if !errors.Is(err, ErrIllegalState) || !errors.Is(err, ErrInvalidCard) {
			t.Errorf("NextStep(%+v) err = %v, want ErrIllegalState and ErrInvalidCard", c, err)
		}
	}
}

func TestNextStepLegalFlags(t *testing.T) {
	def := DefaultHouseRules()
	free := def
	free.BancoFreePlay = true
	tests := []struct {
		name           string
		player, banker string
		playerStood    bool
		bankerStood    bool
		banco          bool
		hr             HouseRules
		want           Step
	}{
		{name: "PlayerStood on a forced stand is accepted", player: "6C KD", banker: "6D KS", playerStood: true, hr: def,
			want: Step{Kind: StepDone, Outcome: OutcomeStandOff, Rule: "CF-STANDOFF"}},
		{name: "BankerStood on a forced stand is accepted", player: "6C KD", banker: "7D KS", bankerStood: true, hr: def,
			want: Step{Kind: StepDone, Outcome: OutcomeBankWins, Rule: "CF-RESULT"}},
		{name: "player chose stand on 5", player: "5C KD", banker: "6D KS", playerStood: true, hr: def,
			want: Step{Kind: StepDone, Outcome: OutcomeBankWins, Rule: "CF-RESULT"}},
		{name: "banker chose stand on 3 vs 9", player: "2C KD 9H", banker: "3D KS", bankerStood: true, hr: def,
			want: Step{Kind: StepDone, Outcome: OutcomeBankWins, Rule: "CF-RESULT"}},
		{name: "CF-BANCO-FREEDOM player stood on 0", player: "KC KD", banker: "3D KS", playerStood: true, banco: true, hr: free,
			want: Step{Kind: StepBankerChoice, Rule: "CF-BANCO-FREEDOM"}},
		{name: "CF-BANCO-FREEDOM banker stood on 0", player: "KC KD", banker: "KH KS", playerStood: true, bankerStood: true, banco: true, hr: free,
			want: Step{Kind: StepDone, Outcome: OutcomeStandOff, Rule: "CF-STANDOFF"}},
		{name: "CF-BANCO-FREEDOM both drew on 7", player: "7C KD AH", banker: "7D KS AS", banco: true, hr: free,
			want: Step{Kind: StepDone, Outcome: OutcomeStandOff, Rule: "CF-STANDOFF"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Coup{Player: cards(tt.player), Banker: cards(tt.banker), PlayerStood: tt.playerStood, BankerStood: tt.bankerStood, Banco: tt.banco}
			got, err := NextStep(c, tt.hr)
			if err != nil || got != tt.want {
				t.Errorf("NextStep = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// explore walks every coup reachable by following NextStep, dealing every
// card value at each deal and taking both answers at each choice. visit is
// called for every reached state with its step and its probability under an
// infinite shoe when choices are answered by ch (0 for states off that
// path). With byTotal, the second card of each hand is always a ten: every
// pair of two-card totals still occurs, at a hundredth of the states.
func explore(t *testing.T, c Coup, hr HouseRules, ch choices, byTotal bool, p float64, visit func(Coup, Step, float64)) {
	s, err := NextStep(c, hr)
	if err != nil {
		t.Fatalf("reachable state %+v: %v", c, err)
	}
	visit(c, s, p)
	switch s.Kind {
	case StepDone:
		return
	case StepDealPlayer, StepDealBanker:
		values := 10
		if byTotal && (s.Kind == StepDealPlayer && len(c.Player) == 1 || s.Kind == StepDealBanker && len(c.Banker) == 1) {
			values = 1
		}
		for v := 0; v < values; v++ {
			explore(t, apply(c, s, card(v), ch), hr, ch, byTotal, p*valueWeight(v), visit)
		}
	case StepPlayerChoice, StepBankerChoice:
		chosen := ch.player
		if s.Kind == StepBankerChoice {
			chosen = ch.banker
		}
		for _, draw := range []bool{true, false} {
			q := p
			if draw != chosen {
				q = 0
			}
			alt := ch
			alt.player, alt.banker = draw, draw
			if draw {
				for v := 0; v <= 9; v++ {
					explore(t, apply(c, s, card(v), alt), hr, ch, byTotal, q*valueWeight(v), visit)
				}
			} else {
				explore(t, apply(c, s, Card{}, alt), hr, ch, byTotal, q, visit)
			}
		}
	}
}

// valueWeight is the chance of a card value from an infinite shoe.
func valueWeight(v int) float64 {
	if v == 0 {
		return 4.0 / 13
	}
	return 1.0 / 13
}

// TestCoupReachable checks the state machine against itself: every state
// reached by following NextStep is legal, ends with two or three cards a
// hand, and any action NextStep did not ask for is refused. It explores by
// total (see explore) to stay fast under -race; TestCoupPuntoBancoOdds
// walks every card combination.
func TestCoupReachable(t *testing.T) {
	def := DefaultHouseRules()
	off := def
	off.BankerOption3vs9, off.BankerOption5vs4 = false, false
	free := def
	free.BancoFreePlay = true
	tests := []struct {
		name  string
		hr    HouseRules
		banco bool
	}{
		{"default", def, false},
		{"options_off", off, false},
		{"banco_free_play", free, true},
	}
	extra := card(1)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			states := 0
			explore(t, Coup{Banco: tt.banco}, tt.hr, choices{true, true}, true, 1, func(c Coup, s Step, _ float64) {
				states++
				mustFail := func(what string, bad Coup) {
					if _, err := NextStep(bad, tt.hr); !errors.Is(err, ErrIllegalState) {
						t.Fatalf("%s after %+v (step %+v) accepted: %v", what, c, s, err)
					}
				}
				withPlayer := c
				withPlayer.Player = append(append([]Card(nil), c.Player...), extra)
				withBanker := c
				withBanker.Banker = append(append([]Card(nil), c.Banker...), extra)
				switch s.Kind {
				case StepDone:
					if len(c.Player) < 2 || len(c.Player) > 3 || len(c.Banker) < 2 || len(c.Banker) > 3 {
						t.Fatalf("done with hands %v / %v", c.Player, c.Banker)
					}
					if s.Outcome != Compare(Total(c.Player), Total(c.Banker)) {
						t.Fatalf("%+v: outcome %v", c, s.Outcome)
					}
					mustFail("a player card", withPlayer)
					mustFail("a banker card", withBanker)
				case StepDealPlayer, StepPlayerChoice:
					mustFail("a banker card", withBanker)
					if s.Kind == StepPlayerChoice || len(c.Player) >= 2 {
						stood := c
						stood.BankerStood = true
						mustFail("a banker stand", stood)
					}
				case StepDealBanker, StepBankerChoice:
					mustFail("a player card", withPlayer)
				}
			})
			t.Logf("%d reachable states", states)
		})
	}
}

// TestCoupPuntoBancoOdds plays every coup from an infinite shoe with the
// options off and the player drawing on 5, which is the punto banco
// tableau, and compares the result with its published eight-deck odds
// (bank 45.86%, player 44.62%, tie 9.52%); the infinite shoe differs from
// eight decks by less than 0.05 percentage points.
func TestCoupPuntoBancoOdds(t *testing.T) {
	hr := DefaultHouseRules()
	hr.BankerOption3vs9, hr.BankerOption5vs4 = false, false
	var prob [4]float64
	explore(t, Coup{}, hr, choices{true, true}, false, 1, func(_ Coup, s Step, p float64) {
		if s.Kind == StepDone {
			prob[s.Outcome] += p
		}
	})
	total := prob[1] + prob[2] + prob[3]
	if math.Abs(total-1) > 1e-9 {
		t.Fatalf("probabilities sum to %v", total)
	}
	want := map[Outcome]float64{OutcomeBankWins: 0.4586, OutcomeBankLoses: 0.4462, OutcomeStandOff: 0.0952}
	for o, w := range want {
		if math.Abs(prob[o]-w) > 0.0005 {
			t.Errorf("%v: %.5f, want %.4f", o, prob[o], w)
		}
	}
	t.Logf("bank wins %.6f, bank loses %.6f, stand-off %.6f", prob[1], prob[2], prob[3])
}

// decodeFuzzCard maps a byte to a card: mostly valid cards, some invalid.
func decodeFuzzCard(b byte) Card {
	if b < 4*DeckSize {
		c, _ := CardFromIndex(int(b) % DeckSize)
		return c
	}
	return Card{Rank: Rank(b & 15), Suit: Suit(b >> 4 & 7)}
}

func decodeFuzzHand(bs []byte) []Card {
	if len(bs) > 5 {
		bs = bs[:5]
	}
	var h []Card
	for _, b := range bs {
		h = append(h, decodeFuzzCard(b))
	}
	return h
}

func FuzzNextStep(f *testing.F) {
	f.Add([]byte{}, []byte{}, uint8(0), uint8(1))
	f.Add([]byte{3, 4}, []byte{8, 9}, uint8(0), uint8(0))
	f.Add([]byte{1, 9, 20}, []byte{2, 0}, uint8(0x30), uint8(7))
	f.Add([]byte{4, 0, 8}, []byte{2, 0, 5}, uint8(0x02), uint8(7))
	f.Add([]byte{6, 0}, []byte{5, 0}, uint8(0x0c), uint8(7))
	f.Add([]byte{255, 0}, []byte{5, 0}, uint8(0xff), uint8(210))
	f.Fuzz(func(t *testing.T, pb, bb []byte, flags, next uint8) {
		c := Coup{
			Player:      decodeFuzzHand(pb),
			Banker:      decodeFuzzHand(bb),
			PlayerStood: flags&1 != 0,
			BankerStood: flags&2 != 0,
			Banco:       flags&4 != 0,
		}
		hr := HouseRules{
			BancoFreePlay:    flags&8 != 0,
			BankerOption3vs9: flags&16 != 0,
			BankerOption5vs4: flags&32 != 0,
		}
		s, err := NextStep(c, hr)
		if err != nil {
			if !errors.Is(err, ErrIllegalState) {
				t.Fatalf("NextStep(%+v) error %v does not wrap ErrIllegalState", c, err)
			}
			if s != (Step{}) {
				t.Fatalf("NextStep(%+v) returned %+v with an error", c, s)
			}
			return
		}
		if s.Rule == "" {
			t.Fatalf("%+v: step %+v without a rule", c, s)
		}
		nextCard, _ := CardFromIndex(int(next) % DeckSize)
		legal := func(what string, n Coup) {
			if _, err := NextStep(n, hr); err != nil {
				t.Fatalf("%s after %+v (step %+v) refused: %v", what, c, s, err)
			}
		}
		illegal := func(what string, n Coup) {
			if _, err := NextStep(n, hr); !errors.Is(err, ErrIllegalState) {
				t.Fatalf("%s after %+v (step %+v) accepted: %v", what, c, s, err)
			}
		}
		withPlayer, withBanker := c, c
		withPlayer.Player = append(append([]Card(nil), c.Player...), nextCard)
		withBanker.Banker = append(append([]Card(nil), c.Banker...), nextCard)
		switch s.Kind {
		case StepDone:
			if !s.Outcome.Valid() || s.Outcome != Compare(Total(c.Player), Total(c.Banker)) {
				t.Fatalf("%+v: done with outcome %v", c, s.Outcome)
			}
			illegal("a player card", withPlayer)
			illegal("a banker card", withBanker)
		case StepDealPlayer:
			legal("the player card asked for", withPlayer)
		case StepDealBanker:
			legal("the banker card asked for", withBanker)
		case StepPlayerChoice:
			legal("a player draw", withPlayer)
			stood := c
			stood.PlayerStood = true
			legal("a player stand", stood)
		case StepBankerChoice:
			legal("a banker draw", withBanker)
			stood := c
			stood.BankerStood = true
			legal("a banker stand", stood)
		default:
			t.Fatalf("%+v: unknown step %+v", c, s)
		}
		if s.Kind != StepDone && (s.Outcome != 0 || s.Natural) {
			t.Fatalf("%+v: step %+v carries an outcome", c, s)
		}
	})
}

func TestStepKindString(t *testing.T) {
	for k, want := range map[StepKind]string{
		0: "invalid", StepDealPlayer: "deal_player", StepDealBanker: "deal_banker",
		StepPlayerChoice: "player_choice", StepBankerChoice: "banker_choice", StepDone: "done",
	} {
		if k.String() != want {
			t.Errorf("StepKind(%d) = %q, want %q", int(k), k.String(), want)
		}
	}
}

func BenchmarkNextStepCoup(b *testing.B) {
	hr := DefaultHouseRules()
	deck := cards("2C AH KD 2S 9D 5H") // a coup with both third cards
	var player, banker [3]Card
	b.ReportAllocs()
	for b.Loop() {
		c := Coup{Player: player[:0], Banker: banker[:0]}
		d := deck
		for {
			s, err := NextStep(c, hr)
			if err != nil {
				b.Fatal(err)
			}
			if s.Kind == StepDone {
				break
			}
			switch s.Kind {
			case StepDealPlayer:
				c.Player = append(c.Player, d[0])
			case StepDealBanker, StepBankerChoice:
				c.Banker = append(c.Banker, d[0])
			default:
				b.Fatal(fmt.Sprint("unexpected step ", s.Kind))
			}
			d = d[1:]
		}
	}
}
