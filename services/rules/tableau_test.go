package rules

import "testing"

func TestCFPlayerDraw(t *testing.T) {
	want := []Decision{
		0: DecisionDraw, 1: DecisionDraw, 2: DecisionDraw, 3: DecisionDraw, 4: DecisionDraw,
		5: DecisionOption,
		6: DecisionStand, 7: DecisionStand,
		8: DecisionStand, 9: DecisionStand, // naturals never reach the tableau
	}
	for total, w := range want {
		if got := PlayerDecision(total); got != w {
			t.Errorf("PlayerDecision(%d) = %v, want %v", total, got, w)
		}
	}
	for _, total := range []int{-1, 10, 100} {
		if got := PlayerDecision(total); got != DecisionStand {
			t.Errorf("PlayerDecision(%d) = %v, want stand", total, got)
		}
	}
}

// The banker's tableau of RULES.md CF-BANKER-DRAW, one row per banker total
// 0..7, one column per player's third card: "player stood", then values
// 0..9. D draw, S stand, O banker's option.
var (
	bankerTableOptionsOn = [8]string{
		//   st 0 1 2 3 4 5 6 7 8 9
		0: "D D D D D D D D D D D",
		1: "D D D D D D D D D D D",
		2: "D D D D D D D D D D D",
		3: "D D D D D D D D D S O",
		4: "D S S D D D D D D S S",
		5: "D S S S S O D D D S S",
		6: "S S S S S S S D D S S",
		7: "S S S S S S S S S S S",
	}
	// With banker_option_3_vs_9 and banker_option_5_vs_4 off the banker
	// draws in those cells (004).
	bankerTableOptionsOff = [8]string{
		//   st 0 1 2 3 4 5 6 7 8 9
		0: "D D D D D D D D D D D",
		1: "D D D D D D D D D D D",
		2: "D D D D D D D D D D D",
		3: "D D D D D D D D D S D",
		4: "D S S D D D D D D S S",
		5: "D S S S S D D D D S S",
		6: "S S S S S S S D D S S",
		7: "S S S S S S S S S S S",
	}
)

var decisionLetter = map[byte]Decision{'D': DecisionDraw, 'S': DecisionStand, 'O': DecisionOption}

// ranksOfValue lists every rank with the given CARD-VALUE.
func ranksOfValue(v int) []Rank {
	if v == 0 {
		return []Rank{Ten, Jack, Queen, King}
	}
	return []Rank{Rank(v)}
}

func TestCFBankerDraw(t *testing.T) {
	on := DefaultHouseRules()
	off := on
	off.BankerOption3vs9, off.BankerOption5vs4 = false, false
	only3 := off
	only3.BankerOption3vs9 = true
	only5 := off
	only5.BankerOption5vs4 = true

	tests := []struct {
		name  string
		hr    HouseRules
		table [8]string
	}{
		{"options_on", on, bankerTableOptionsOn},
		{"options_off", off, bankerTableOptionsOff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for total, row := range tt.table {
				// Column 0: the player stood.
				if got, want := BankerDecision(total, nil, tt.hr), decisionLetter[row[0]]; got != want {
					t.Errorf("banker %d, player stood: %v, want %v", total, got, want)
				}
				for v := 0; v <= 9; v++ {
					want := decisionLetter[row[2*(v+1)]]
					for _, r := range ranksOfValue(v) {
						for s := Clubs; s <= Spades; s++ {
							third := Card{Rank: r, Suit: s}
							if got := BankerDecision(total, &third, tt.hr); got != want {
								t.Errorf("banker %d, player's third %v: %v, want %v", total, third, got, want)
							}
						}
					}
				}
			}
		})
	}

	// Each option house rule controls its own cell only.
	nine, four := Card{Rank: Nine, Suit: Hearts}, Card{Rank: Four, Suit: Spades}
	cells := []struct {
		hr          HouseRules
		want3vs9    Decision
		want5vs4    Decision
		description string
	}{
		{only3, DecisionOption, DecisionDraw, "banker_option_3_vs_9 on, banker_option_5_vs_4 off"},
		{only5, DecisionDraw, DecisionOption, "banker_option_3_vs_9 off, banker_option_5_vs_4 on"},
	}
	for _, c := range cells {
		if got := BankerDecision(3, &nine, c.hr); got != c.want3vs9 {
			t.Errorf("%s: 3 vs 9 = %v, want %v", c.description, got, c.want3vs9)
		}
		if got := BankerDecision(5, &four, c.hr); got != c.want5vs4 {
			t.Errorf("%s: 5 vs 4 = %v, want %v", c.description, got, c.want5vs4)
		}
	}
}

func TestCFBankerDrawOutOfRange(t *testing.T) {
	hr := DefaultHouseRules()
	two := card(2)
	bad := Card{Rank: 0, Suit: Clubs}
	tests := []struct {
		total int
		third *Card
	}{
		{8, nil}, {9, nil}, {-1, nil}, {10, &two}, {8, &two}, {9, &two}, {0, &bad},
	}
	for _, tt := range tests {
		if got := BankerDecision(tt.total, tt.third, hr); got != DecisionStand {
			t.Errorf("BankerDecision(%d, %v) = %v, want stand", tt.total, tt.third, got)
		}
	}
}

func TestDecisionString(t *testing.T) {
	for d, want := range map[Decision]string{0: "invalid", DecisionStand: "stand", DecisionDraw: "draw", DecisionOption: "option"} {
		if d.String() != want {
			t.Errorf("Decision(%d).String() = %q, want %q", int(d), d.String(), want)
		}
	}
}
