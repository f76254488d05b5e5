package roads

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// seq turns "BPT..." into results with no pairs, naturals or totals.
func seq(s string) []Result {
	var out []Result
	for _, ch := range s {
		switch ch {
		case 'B':
			out = append(out, Result{Winner: Banker})
		case 'P':
			out = append(out, Result{Winner: Player})
		case 'T':
			out = append(out, Result{Winner: Tie})
		case ' ':
		default:
			panic("seq: bad letter " + string(ch))
		}
	}
	return out
}

// rep repeats s n times.
func rep(s string, n int) string { return strings.Repeat(s, n) }

// br is a big road cell with the fields most tests look at.
func br(w Winner, col, row, lcol, lrow, ties, coup int) BigRoadCell {
	return BigRoadCell{Winner: w, Col: col, Row: row, LogicalCol: lcol, LogicalRow: lrow, Ties: ties, Coup: coup}
}

const (
	red  = true
	blue = false
)

// dc is a derived road mark.
func dc(isRed bool, col, row, lcol, lrow int) DerivedCell {
	return DerivedCell{Red: isRed, Col: col, Row: row, LogicalCol: lcol, LogicalRow: lrow}
}

func checkRoad[T any](t *testing.T, name string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d cells, want %d\n got %+v\nwant %+v", name, len(got), len(want), got, want)
		return
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("%s[%d] = %+v, want %+v", name, i, got[i], want[i])
		}
	}
}

// TestComputeHandWorked checks whole shoes worked out by hand from the
// rules in doc.go.
func TestComputeHandWorked(t *testing.T) {
	tests := []struct {
		name        string
		seq         string
		big         []BigRoadCell
		beb, sr, cp []DerivedCell
	}{
		{
			// A streak of seven players runs off the bottom and tails
			// right; two ties sit on the lone banker.
			name: "BBBPPBTTPPPPPPP",
			seq:  "BBB PP B TT PPPPPPP",
			big: []BigRoadCell{
				br(Banker, 0, 0, 0, 0, 0, 0),
				br(Banker, 0, 1, 0, 1, 0, 1),
				br(Banker, 0, 2, 0, 2, 0, 2),
				br(Player, 1, 0, 1, 0, 0, 3),
				br(Player, 1, 1, 1, 1, 0, 4),
				br(Banker, 2, 0, 2, 0, 2, 5),
				br(Player, 3, 0, 3, 0, 0, 8),
				br(Player, 3, 1, 3, 1, 0, 9),
				br(Player, 3, 2, 3, 2, 0, 10),
				br(Player, 3, 3, 3, 3, 0, 11),
				br(Player, 3, 4, 3, 4, 0, 12),
				br(Player, 3, 5, 3, 5, 0, 13),
				br(Player, 4, 5, 3, 6, 0, 14),
			},
			// Streak lengths 3 2 1 7.
			beb: []DerivedCell{
				dc(red, 0, 0, 0, 0),  // (1,1): streak 0 has row 1
				dc(blue, 1, 0, 1, 0), // (2,0): 2 != 3
				dc(blue, 1, 1, 1, 1), // (3,0): 1 != 2
				dc(blue, 1, 2, 1, 2), // (3,1): streak 2 ends just above
				dc(red, 2, 0, 2, 0),  // (3,2..6): streak 2 ended earlier
				dc(red, 2, 1, 2, 1),
				dc(red, 2, 2, 2, 2),
				dc(red, 2, 3, 2, 3),
				dc(red, 2, 4, 2, 4),
			},
			sr: []DerivedCell{
				dc(blue, 0, 0, 0, 0), // (3,0): 1 != 3
				dc(red, 1, 0, 1, 0),  // (3,1): streak 1 has row 1
				dc(blue, 2, 0, 2, 0), // (3,2): streak 1 ends just above
				dc(red, 3, 0, 3, 0),  // (3,3..6)
				dc(red, 3, 1, 3, 1),
				dc(red, 3, 2, 3, 2),
				dc(red, 3, 3, 3, 3),
			},
			cp: []DerivedCell{
				dc(red, 0, 0, 0, 0),  // (3,1): streak 0 has row 1
				dc(red, 0, 1, 0, 1),  // (3,2)
				dc(blue, 1, 0, 1, 0), // (3,3): streak 0 ends just above
				dc(red, 2, 0, 2, 0),  // (3,4..6)
				dc(red, 2, 1, 2, 1),
				dc(red, 2, 2, 2, 2),
			},
		},
		{
			// The player streak is blocked by the banker's tail on row 5
			// and tails along row 4; the next banker streak is blocked by
			// that and tails along row 3. Big eye boy gets a run of 12
			// reds that tails along its own row 5.
			name: "blocked tails",
			seq:  rep("B", 8) + rep("P", 8) + rep("B", 5) + "P" + "B",
			big: []BigRoadCell{
				br(Banker, 0, 0, 0, 0, 0, 0),
				br(Banker, 0, 1, 0, 1, 0, 1),
				br(Banker, 0, 2, 0, 2, 0, 2),
				br(Banker, 0, 3, 0, 3, 0, 3),
				br(Banker, 0, 4, 0, 4, 0, 4),
				br(Banker, 0, 5, 0, 5, 0, 5),
				br(Banker, 1, 5, 0, 6, 0, 6),
				br(Banker, 2, 5, 0, 7, 0, 7),
				br(Player, 1, 0, 1, 0, 0, 8),
				br(Player, 1, 1, 1, 1, 0, 9),
				br(Player, 1, 2, 1, 2, 0, 10),
				br(Player, 1, 3, 1, 3, 0, 11),
				br(Player, 1, 4, 1, 4, 0, 12),
				br(Player, 2, 4, 1, 5, 0, 13),
				br(Player, 3, 4, 1, 6, 0, 14),
				br(Player, 4, 4, 1, 7, 0, 15),
				br(Banker, 2, 0, 2, 0, 0, 16),
				br(Banker, 2, 1, 2, 1, 0, 17),
				br(Banker, 2, 2, 2, 2, 0, 18),
				br(Banker, 2, 3, 2, 3, 0, 19),
				br(Banker, 3, 3, 2, 4, 0, 20),
				br(Player, 3, 0, 3, 0, 0, 21),
				br(Banker, 4, 0, 4, 0, 0, 22),
			},
			// Streak lengths 8 8 5 1 1.
			beb: []DerivedCell{
				dc(red, 0, 0, 0, 0), // (1,1..7): streak 0 is longer
				dc(red, 0, 1, 0, 1),
				dc(red, 0, 2, 0, 2),
				dc(red, 0, 3, 0, 3),
				dc(red, 0, 4, 0, 4),
				dc(red, 0, 5, 0, 5),
				dc(red, 1, 5, 0, 6),
				dc(red, 2, 5, 0, 7), // (2,0): 8 == 8
				dc(red, 3, 5, 0, 8), // (2,1..4)
				dc(red, 4, 5, 0, 9),
				dc(red, 5, 5, 0, 10),
				dc(red, 6, 5, 0, 11),
				dc(blue, 1, 0, 1, 0), // (3,0): 5 != 8
				dc(blue, 1, 1, 1, 1), // (4,0): 1 != 5
			},
			sr: []DerivedCell{
				dc(red, 0, 0, 0, 0), // (2,1..4): streak 0 is longer
				dc(red, 0, 1, 0, 1),
				dc(red, 0, 2, 0, 2),
				dc(red, 0, 3, 0, 3),
				dc(blue, 1, 0, 1, 0), // (3,0): 5 != 8
				dc(blue, 1, 1, 1, 1), // (4,0): 1 != 8
			},
			cp: []DerivedCell{
				dc(blue, 0, 0, 0, 0), // (4,0): 1 != 8
			},
		},
		{
			// Nested tails climb up to row 0: the player streak at column 5
			// tails along row 0 over columns 6 and 7, so the next streak
			// starts at column 8, the first free top cell.
			name: "tail along row 0",
			seq:  rep("B", 7) + rep("P", 6) + rep("B", 5) + rep("P", 4) + rep("B", 3) + rep("P", 3) + "B" + "P",
			big: []BigRoadCell{
				br(Banker, 0, 0, 0, 0, 0, 0),
				br(Banker, 0, 1, 0, 1, 0, 1),
				br(Banker, 0, 2, 0, 2, 0, 2),
				br(Banker, 0, 3, 0, 3, 0, 3),
				br(Banker, 0, 4, 0, 4, 0, 4),
				br(Banker, 0, 5, 0, 5, 0, 5),
				br(Banker, 1, 5, 0, 6, 0, 6),
				br(Player, 1, 0, 1, 0, 0, 7),
				br(Player, 1, 1, 1, 1, 0, 8),
				br(Player, 1, 2, 1, 2, 0, 9),
				br(Player, 1, 3, 1, 3, 0, 10),
				br(Player, 1, 4, 1, 4, 0, 11),
				br(Player, 2, 4, 1, 5, 0, 12),
				br(Banker, 2, 0, 2, 0, 0, 13),
				br(Banker, 2, 1, 2, 1, 0, 14),
				br(Banker, 2, 2, 2, 2, 0, 15),
				br(Banker, 2, 3, 2, 3, 0, 16),
				br(Banker, 3, 3, 2, 4, 0, 17),
				br(Player, 3, 0, 3, 0, 0, 18),
				br(Player, 3, 1, 3, 1, 0, 19),
				br(Player, 3, 2, 3, 2, 0, 20),
				br(Player, 4, 2, 3, 3, 0, 21),
				br(Banker, 4, 0, 4, 0, 0, 22),
				br(Banker, 4, 1, 4, 1, 0, 23),
				br(Banker, 5, 1, 4, 2, 0, 24),
				br(Player, 5, 0, 5, 0, 0, 25),
				br(Player, 6, 0, 5, 1, 0, 26),
				br(Player, 7, 0, 5, 2, 0, 27),
				br(Banker, 8, 0, 6, 0, 0, 28),
				br(Player, 9, 0, 7, 0, 0, 29),
			},
			// Streak lengths 7 6 5 4 3 3 1 1.
			beb: []DerivedCell{
				dc(red, 0, 0, 0, 0), // (1,1..5)
				dc(red, 0, 1, 0, 1),
				dc(red, 0, 2, 0, 2),
				dc(red, 0, 3, 0, 3),
				dc(red, 0, 4, 0, 4),
				dc(blue, 1, 0, 1, 0), // (2,0): 6 != 7
				dc(red, 2, 0, 2, 0),  // (2,1..4)
				dc(red, 2, 1, 2, 1),
				dc(red, 2, 2, 2, 2),
				dc(red, 2, 3, 2, 3),
				dc(blue, 3, 0, 3, 0), // (3,0): 5 != 6
				dc(red, 4, 0, 4, 0),  // (3,1..3)
				dc(red, 4, 1, 4, 1),
				dc(red, 4, 2, 4, 2),
				dc(blue, 5, 0, 5, 0), // (4,0): 4 != 5
				dc(red, 6, 0, 6, 0),  // (4,1..2)
				dc(red, 6, 1, 6, 1),
				dc(blue, 7, 0, 7, 0), // (5,0): 3 != 4
				dc(red, 8, 0, 8, 0),  // (5,1..2)
				dc(red, 8, 1, 8, 1),
				dc(red, 8, 2, 8, 2),  // (6,0): 3 == 3
				dc(blue, 9, 0, 9, 0), // (7,0): 1 != 3
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compute(seq(tt.seq))
			checkRoad(t, "BigRoad", got.BigRoad, tt.big)
			if tt.beb != nil {
				checkRoad(t, "BigEyeBoy", got.BigEyeBoy, tt.beb)
			}
			if tt.sr != nil {
				checkRoad(t, "SmallRoad", got.SmallRoad, tt.sr)
			}
			if tt.cp != nil {
				checkRoad(t, "CockroachPig", got.CockroachPig, tt.cp)
			}
		})
	}
}

// TestDerivedStart checks where each derived road starts: at the big road
// cell (k, 1), or at (k+1, 0) when streak k has a single cell.
func TestDerivedStart(t *testing.T) {
	tests := []struct {
		seq  string
		k    int
		want []DerivedCell
	}{
		{"BP", 1, nil},
		{"BPP", 1, []DerivedCell{dc(blue, 0, 0, 0, 0)}}, // (1,1): streak 0 ends just above
		{"BBPP", 1, []DerivedCell{dc(red, 0, 0, 0, 0)}}, // (1,1): streak 0 has row 1
		{"BPB", 1, []DerivedCell{dc(red, 0, 0, 0, 0)}},  // (2,0): 1 == 1
		{"BBPB", 1, []DerivedCell{dc(blue, 0, 0, 0, 0)}},
		{"BPB", 2, nil},
		{"BBPPB", 2, nil}, // streak 2 has one cell, no streak 3 yet
		{"BPBB", 2, []DerivedCell{dc(blue, 0, 0, 0, 0)}}, // (2,1)
		{"BBPBB", 2, []DerivedCell{dc(red, 0, 0, 0, 0)}}, // (2,1)
		{"BPBP", 2, []DerivedCell{dc(red, 0, 0, 0, 0)}},  // (3,0): 1 == 1
		{"BPPBP", 2, []DerivedCell{dc(red, 0, 0, 0, 0)}}, // (3,0): streaks 2 and 0 are both 1 long
		{"BPBP", 3, nil},
		{"BPBPP", 3, []DerivedCell{dc(blue, 0, 0, 0, 0)}},  // (3,1)
		{"BBPBPP", 3, []DerivedCell{dc(red, 0, 0, 0, 0)}},  // (3,1)
		{"BPBPB", 3, []DerivedCell{dc(red, 0, 0, 0, 0)}},   // (4,0): 1 == 1
		{"BBPBPB", 3, []DerivedCell{dc(blue, 0, 0, 0, 0)}}, // (4,0): 1 != 2
		{"TTBPTBTP", 3, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("k%d_%s", tt.k, tt.seq), func(t *testing.T) {
			got := Compute(seq(tt.seq))
			road := [...][]DerivedCell{nil, got.BigEyeBoy, got.SmallRoad, got.CockroachPig}[tt.k]
			checkRoad(t, "road", road, tt.want)
		})
	}
}

// TestTies checks the tie conventions: ties count on the last cell, ties
// before the first win are LeadingTies on the first cell, and a shoe of
// only ties has one placeholder cell.
func TestTies(t *testing.T) {
	lead := func(c BigRoadCell, n int) BigRoadCell { c.LeadingTies = n; return c }
	tests := []struct {
		name string
		seq  string
		big  []BigRoadCell
	}{
		{"empty", "", nil},
		{"one tie", "T", []BigRoadCell{{Winner: Tie, LeadingTies: 1, Coup: -1}}},
		{"only ties", "TTT", []BigRoadCell{{Winner: Tie, LeadingTies: 3, Coup: -1}}},
		{"leading ties", "TTBBPT", []BigRoadCell{
			lead(br(Banker, 0, 0, 0, 0, 0, 2), 2),
			br(Banker, 0, 1, 0, 1, 0, 3),
			br(Player, 1, 0, 1, 0, 1, 4),
		}},
		{"leading and consecutive ties", "TBTTTPTT", []BigRoadCell{
			lead(br(Banker, 0, 0, 0, 0, 3, 1), 1),
			br(Player, 1, 0, 1, 0, 2, 5),
		}},
		{"tie does not break a streak", "BTBTTB", []BigRoadCell{
			br(Banker, 0, 0, 0, 0, 1, 0),
			br(Banker, 0, 1, 0, 1, 2, 2),
			br(Banker, 0, 2, 0, 2, 0, 5),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compute(seq(tt.seq))
			checkRoad(t, "BigRoad", got.BigRoad, tt.big)
			if len(got.BeadPlate) != len(tt.seq) {
				t.Errorf("bead plate has %d beads, want %d", len(got.BeadPlate), len(tt.seq))
			}
			if got.BigEyeBoy != nil || got.SmallRoad != nil || got.CockroachPig != nil {
				t.Errorf("derived roads of %q = %v %v %v, want none", tt.seq, got.BigEyeBoy, got.SmallRoad, got.CockroachPig)
			}
		})
	}
}

// TestTiesMakeNoMarks checks that inserting ties anywhere leaves the
// derived roads unchanged.
func TestTiesMakeNoMarks(t *testing.T) {
	plain := Compute(seq("BBPBPPBPBBBPPBPB"))
	tied := Compute(seq("TBTBPTTBPPBTPBBTBPPTTTBPTB"))
	for _, r := range []struct {
		name      string
		got, want []DerivedCell
	}{
		{"BigEyeBoy", tied.BigEyeBoy, plain.BigEyeBoy},
		{"SmallRoad", tied.SmallRoad, plain.SmallRoad},
		{"CockroachPig", tied.CockroachPig, plain.CockroachPig},
	} {
		if len(r.want) == 0 {
			t.Fatalf("%s: the plain sequence gives no marks; the test proves nothing", r.name)
		}
		checkRoad(t, r.name, r.got, r.want)
	}
}

// TestFlagsAndBeads checks that beads carry whole results and big road
// cells carry their own coup's pairs and natural, not a tie's.
func TestFlagsAndBeads(t *testing.T) {
	results := []Result{
		{Winner: Tie, PlayerPair: true, PlayerTotal: 6, BankerTotal: 6},
		{Winner: Banker, BankerPair: true, Natural: true, PlayerTotal: 7, BankerTotal: 9},
		{Winner: Tie, BankerPair: true, Natural: true, PlayerTotal: 8, BankerTotal: 8},
		{Winner: Player, PlayerPair: true, BankerPair: true, PlayerTotal: 5, BankerTotal: 3},
		{Winner: Player, PlayerTotal: 4, BankerTotal: 2},
		{Winner: Banker, PlayerTotal: 0, BankerTotal: 1},
		{Winner: Banker, PlayerPair: true, PlayerTotal: 2, BankerTotal: 3},
	}
	got := Compute(results)
	wantBeads := []Bead{
		{0, 0, results[0]}, {0, 1, results[1]}, {0, 2, results[2]}, {0, 3, results[3]},
		{0, 4, results[4]}, {0, 5, results[5]}, {1, 0, results[6]},
	}
	checkRoad(t, "BeadPlate", got.BeadPlate, wantBeads)
	wantBig := []BigRoadCell{
		{Winner: Banker, LeadingTies: 1, Ties: 1, BankerPair: true, Natural: true, Coup: 1},
		{Winner: Player, Col: 1, LogicalCol: 1, PlayerPair: true, BankerPair: true, Coup: 3},
		{Winner: Player, Col: 1, Row: 1, LogicalCol: 1, LogicalRow: 1, Coup: 4},
		{Winner: Banker, Col: 2, LogicalCol: 2, Coup: 5},
		{Winner: Banker, Col: 2, Row: 1, LogicalCol: 2, LogicalRow: 1, PlayerPair: true, Coup: 6},
	}
	checkRoad(t, "BigRoad", got.BigRoad, wantBig)
}

func TestBeadPlateColumns(t *testing.T) {
	got := Compute(seq(rep("BPT", 5)))
	for i, b := range got.BeadPlate {
		if b.Col != i/6 || b.Row != i%6 {
			t.Errorf("bead %d at (%d,%d), want (%d,%d)", i, b.Col, b.Row, i/6, i%6)
		}
	}
	if last := got.BeadPlate[14]; last.Col != 2 || last.Row != 2 || last.Result.Winner != Tie {
		t.Errorf("bead 14 = %+v, want a tie at (2,2)", last)
	}
}

func TestInvalidWinnerPanics(t *testing.T) {
	for _, w := range []Winner{0, 4, -1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Compute with winner %d did not panic", w)
				}
			}()
			Compute([]Result{{Winner: Banker}, {Winner: w}})
		}()
	}
}

func TestWinnerString(t *testing.T) {
	for w, want := range map[Winner]string{Banker: "Banker", Player: "Player", Tie: "Tie", 0: "Winner(0)"} {
		if got := w.String(); got != want {
			t.Errorf("Winner(%d).String() = %q, want %q", int8(w), got, want)
		}
	}
}

// randomShoe returns n results with long streaks now and then, so that
// dragon tails, nested tails and ties all occur.
func randomShoe(rng *rand.Rand, n int) []Result {
	var out []Result
	for len(out) < n {
		w := Winner(1 + rng.IntN(3))
		run := 1
		if w != Tie && rng.IntN(4) == 0 {
			run = 1 + rng.IntN(12)
		}
		for i := 0; i < run && len(out) < n; i++ {
			out = append(out, Result{Winner: w})
		}
	}
	return out
}

// checkPlacement checks the grid invariants of a road of keys (winner or
// colour) placed with the big road rules: inside 6 rows, no two cells in
// one place, logical positions counting streaks, each streak going down
// from row 0 and then only right, each streak starting at the first free
// top cell right of the previous start.
func checkPlacement(t *testing.T, name string, keys []int, col, row, lcol, lrow []int) {
	t.Helper()
	seen := map[[2]int]int{}
	startCol := -1
	for i := range keys {
		if row[i] < 0 || row[i] >= Rows || col[i] < 0 {
			t.Fatalf("%s[%d] at (%d,%d): off the grid", name, i, col[i], row[i])
		}
		if j, ok := seen[[2]int{col[i], row[i]}]; ok {
			t.Fatalf("%s[%d] and [%d] both at (%d,%d)", name, j, i, col[i], row[i])
		}
		seen[[2]int{col[i], row[i]}] = i
		newStreak := i == 0 || keys[i] != keys[i-1]
		switch {
		case i == 0:
			if col[i] != 0 || row[i] != 0 || lcol[i] != 0 || lrow[i] != 0 {
				t.Fatalf("%s[0] at (%d,%d) logical (%d,%d), want all 0", name, col[i], row[i], lcol[i], lrow[i])
			}
			startCol = 0
		case newStreak:
			if row[i] != 0 || col[i] <= startCol || lcol[i] != lcol[i-1]+1 || lrow[i] != 0 {
				t.Fatalf("%s[%d] starts a streak at (%d,%d) logical (%d,%d) after start column %d", name, i, col[i], row[i], lcol[i], lrow[i], startCol)
			}
			want := startCol + 1
			for {
				if _, ok := seen[[2]int{want, 0}]; !ok || want == col[i] {
					break
				}
				want++
			}
			if col[i] != want {
				t.Fatalf("%s[%d] starts a streak at column %d, want %d (first free top cell right of %d)", name, i, col[i], want, startCol)
			}
			startCol = col[i]
		default:
			down := col[i] == col[i-1] && row[i] == row[i-1]+1
			right := col[i] == col[i-1]+1 && row[i] == row[i-1]
			turnedBefore := col[i-1] != startCol
			if !(down && !turnedBefore) && !right || lcol[i] != lcol[i-1] || lrow[i] != lrow[i-1]+1 {
				t.Fatalf("%s[%d] at (%d,%d) logical (%d,%d) does not continue [%d] at (%d,%d)", name, i, col[i], row[i], lcol[i], lrow[i], i-1, col[i-1], row[i-1])
			}
			if right && !turnedBefore && row[i] < Rows-1 {
				if _, ok := seen[[2]int{col[i-1], row[i-1] + 1}]; !ok {
					t.Fatalf("%s[%d] turned right at (%d,%d) with the cell below free", name, i, col[i-1], row[i-1])
				}
			}
		}
	}
}

// TestRandomShoes checks invariants on many random shoes, including a
// second formulation of the derived road colours and that computing a
// shorter history gives a prefix of every road.
func TestRandomShoes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 300; n++ {
		results := randomShoe(rng, rng.IntN(90))
		rd := Compute(results)
		if len(rd.BeadPlate) != len(results) {
			t.Fatalf("shoe %d: %d beads for %d coups", n, len(rd.BeadPlate), len(results))
		}
		var wins []BigRoadCell
		ties := 0
		for _, r := range results {
			if r.Winner == Tie {
				ties++
			}
		}
		counted := 0
		for _, c := range rd.BigRoad {
			counted += c.Ties + c.LeadingTies
			if c.Winner != Tie {
				wins = append(wins, c)
			}
		}
		if counted != ties {
			t.Fatalf("shoe %d: big road counts %d ties, the shoe has %d", n, counted, ties)
		}
		if len(wins) != len(results)-ties {
			t.Fatalf("shoe %d: %d big road wins for %d non-tie coups", n, len(wins), len(results)-ties)
		}
		var keys, col, row, lcol, lrow []int
		for _, c := range wins {
			keys, col, row = append(keys, int(c.Winner)), append(col, c.Col), append(row, c.Row)
			lcol, lrow = append(lcol, c.LogicalCol), append(lrow, c.LogicalRow)
		}
		checkPlacement(t, fmt.Sprintf("shoe %d BigRoad", n), keys, col, row, lcol, lrow)

		// Streak membership, to recompute colours another way: for r >= 1
		// a mark is red when cells (c-k, r) and (c-k, r-1) are both
		// present or both absent.
		has := map[[2]int]bool{}
		length := map[int]int{}
		for _, c := range wins {
			has[[2]int{c.LogicalCol, c.LogicalRow}] = true
			length[c.LogicalCol]++
		}
		for k, road := range [][]DerivedCell{rd.BigEyeBoy, rd.SmallRoad, rd.CockroachPig} {
			k++
			var want []bool
			for _, c := range wins {
				col, r := c.LogicalCol, c.LogicalRow
				switch {
				case col < k, col == k && r == 0:
				case r == 0:
					want = append(want, length[col-1] == length[col-1-k])
				default:
					want = append(want, has[[2]int{col - k, r}] == has[[2]int{col - k, r - 1}])
				}
			}
			if len(road) != len(want) {
				t.Fatalf("shoe %d k=%d: %d marks, want %d", n, k, len(road), len(want))
			}
			var keys, col, row, lcol, lrow []int
			for i, d := range road {
				if d.Red != want[i] {
					t.Fatalf("shoe %d k=%d mark %d: red=%v, want %v", n, k, i, d.Red, want[i])
				}
				key := 0
				if d.Red {
					key = 1
				}
				keys, col, row = append(keys, key), append(col, d.Col), append(row, d.Row)
				lcol, lrow = append(lcol, d.LogicalCol), append(lrow, d.LogicalRow)
			}
			checkPlacement(t, fmt.Sprintf("shoe %d k=%d", n, k), keys, col, row, lcol, lrow)
		}

		// A shorter history draws a prefix of the same roads (only the tie
		// counts on the last cells may grow).
		if len(results) > 0 {
			cut := rng.IntN(len(results))
			part := Compute(results[:cut])
			if !reflect.DeepEqual(part.BeadPlate, rd.BeadPlate[:cut]) && cut > 0 {
				t.Fatalf("shoe %d: bead plate of the first %d coups is not a prefix", n, cut)
			}
			for i, c := range part.BigRoad {
				if c.Winner == Tie {
					continue
				}
				full := rd.BigRoad[i]
				c.Ties, full.Ties = 0, 0
				if c != full {
					t.Fatalf("shoe %d: big road cell %d of the first %d coups = %+v, full shoe %+v", n, i, cut, c, full)
				}
			}
			for k, pair := range [][2][]DerivedCell{{part.BigEyeBoy, rd.BigEyeBoy}, {part.SmallRoad, rd.SmallRoad}, {part.CockroachPig, rd.CockroachPig}} {
				if len(pair[0]) > len(pair[1]) || !reflect.DeepEqual(pair[0], pair[1][:len(pair[0])]) && len(pair[0]) > 0 {
					t.Fatalf("shoe %d k=%d: road of the first %d coups is not a prefix", n, k+1, cut)
				}
			}
		}
	}
}
