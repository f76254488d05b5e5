package roads

import "fmt"

// Rows is the height of every road's grid: rows 0 (top) to 5.
const Rows = 6

// Winner is the outcome of a coup.
type Winner int8

// The three outcomes. The zero value is not a valid Winner.
const (
	Banker Winner = 1
	Player Winner = 2
	Tie    Winner = 3
)

// String returns "Banker", "Player", "Tie", or "Winner(n)" for any other
// value.
func (w Winner) String() string {
	switch w {
	case Banker:
		return "Banker"
	case Player:
		return "Player"
	case Tie:
		return "Tie"
	}
	return fmt.Sprintf("Winner(%d)", int8(w))
}

// Result is what the roads need to know of one coup.
type Result struct {
	// Winner is Banker, Player or Tie.
	Winner Winner
	// PlayerPair and BankerPair: the first two cards of that hand are a
	// pair (same rank).
	PlayerPair, BankerPair bool
	// Natural: either hand had a natural (8 or 9 on its first two cards).
	Natural bool
	// PlayerTotal and BankerTotal are the final hand totals, 0..9. They are
	// carried to the bead plate and not checked.
	PlayerTotal, BankerTotal int
}

// Bead is one coup on the bead plate.
type Bead struct {
	// Col and Row are the grid position: coup i is at Col i/Rows, Row
	// i%Rows (row 0 is the top).
	Col, Row int
	// Result is the coup itself.
	Result Result
}

// BigRoadCell is one banker or player win on the big road, or the
// placeholder of a shoe that so far has only ties.
type BigRoadCell struct {
	// Winner is Banker or Player; Tie only on the placeholder.
	Winner Winner
	// Col and Row are the position on the 6-row grid, after dragon tails.
	Col, Row int
	// LogicalCol is the index of the streak (0, 1, 2, ...) and LogicalRow
	// the position of this win in its streak (0 is the first), as on a grid
	// of unlimited height.
	LogicalCol, LogicalRow int
	// Ties is the number of ties dealt after this cell's coup and before
	// the next banker or player win.
	Ties int
	// LeadingTies is the number of ties dealt before the first banker or
	// player win of the shoe. It is non-zero only on the first cell (and on
	// the placeholder, which carries all the ties of the shoe so far).
	LeadingTies int
	// PlayerPair, BankerPair and Natural are copied from this cell's coup
	// (false on the placeholder; pairs and naturals of tie coups are shown
	// on the bead plate only).
	PlayerPair, BankerPair, Natural bool
	// Coup is the index in the results given to Compute of this cell's
	// coup, or -1 on the placeholder.
	Coup int
}

// DerivedCell is one mark of big eye boy, small road or cockroach pig.
type DerivedCell struct {
	// Red is true for a red mark, false for a blue one.
	Red bool
	// Col and Row are the position on the road's own 6-row grid, after
	// dragon tails.
	Col, Row int
	// LogicalCol is the index of the run of same-coloured marks and
	// LogicalRow the position of this mark in its run.
	LogicalCol, LogicalRow int
}

// Roads are the five scoreboards of one shoe.
type Roads struct {
	// BeadPlate has one bead per coup, ties included, in coup order.
	BeadPlate []Bead
	// BigRoad has one cell per banker or player win, in coup order, with
	// the ties counted on the cells (see the package documentation).
	BigRoad []BigRoadCell
	// BigEyeBoy, SmallRoad and CockroachPig are the derived roads, offsets
	// 1, 2 and 3, one mark per big road cell from the road's start on.
	BigEyeBoy    []DerivedCell
	SmallRoad    []DerivedCell
	CockroachPig []DerivedCell
}

// Compute draws the roads of a shoe from its coup results, in the order
// they were dealt. It is a pure function of results; calling it again
// with one more result gives the roads after one more coup. Empty input
// gives empty roads (nil slices). It panics if a Winner is not Banker,
// Player or Tie.
func Compute(results []Result) Roads {
	var rd Roads
	var big grid
	leading := 0
	for i, res := range results {
		rd.BeadPlate = append(rd.BeadPlate, Bead{Col: i / Rows, Row: i % Rows, Result: res})
		switch res.Winner {
		case Banker, Player:
		case Tie:
			if n := len(rd.BigRoad); n > 0 {
				rd.BigRoad[n-1].Ties++
			} else {
				leading++
			}
			continue
		default:
			panic(fmt.Sprintf("roads: result %d has invalid winner %d", i, res.Winner))
		}
		cell := BigRoadCell{
			Winner:     res.Winner,
			PlayerPair: res.PlayerPair,
			BankerPair: res.BankerPair,
			Natural:    res.Natural,
			Coup:       i,
		}
		if len(rd.BigRoad) == 0 {
			cell.LeadingTies = leading
		}
		cell.Col, cell.Row, cell.LogicalCol, cell.LogicalRow = big.place(int(res.Winner))
		rd.BigRoad = append(rd.BigRoad, cell)
	}
	if len(rd.BigRoad) == 0 {
		if leading > 0 {
			rd.BigRoad = []BigRoadCell{{Winner: Tie, LeadingTies: leading, Coup: -1}}
		}
		return rd
	}
	lengths := streakLengths(rd.BigRoad)
	rd.BigEyeBoy = derive(rd.BigRoad, lengths, 1)
	rd.SmallRoad = derive(rd.BigRoad, lengths, 2)
	rd.CockroachPig = derive(rd.BigRoad, lengths, 3)
	return rd
}

// streakLengths returns the number of wins in each streak (logical
// column) of a big road without placeholder.
func streakLengths(big []BigRoadCell) []int {
	lengths := make([]int, big[len(big)-1].LogicalCol+1)
	for _, c := range big {
		lengths[c.LogicalCol]++
	}
	return lengths
}

// derive computes the derived road with offset k (1 big eye boy, 2 small
// road, 3 cockroach pig) from the big road's logical columns. A streak's
// length only matters once a later streak exists or for rows it already
// has, so the final lengths give the same marks as drawing coup by coup.
func derive(big []BigRoadCell, lengths []int, k int) []DerivedCell {
	var out []DerivedCell
	var g grid
	for _, cell := range big {
		c, r := cell.LogicalCol, cell.LogicalRow
		if c < k || (c == k && r == 0) {
			continue // before the road's start: (k, 1), else (k+1, 0)
		}
		var red bool
		if r == 0 {
			// First win of a new streak: did the two streaks k apart
			// that precede it have the same length?
			red = lengths[c-1] == lengths[c-1-k]
		} else {
			// Compare with streak c-k at the same depth: an entry there
			// is red, the first empty row below its end is blue, and
			// further empty rows are red again.
			switch l := lengths[c-k]; {
			case l > r:
				red = true
			case l == r:
				red = false
			default:
				red = true
			}
		}
		d := DerivedCell{Red: red}
		key := 0
		if red {
			key = 1
		}
		d.Col, d.Row, d.LogicalCol, d.LogicalRow = g.place(key)
		out = append(out, d)
	}
	return out
}

// grid places a sequence of keys on a 6-row grid the way the big road
// places wins: a new streak (key change) starts at the top of the next
// column, the same key goes one row down, and a streak that meets the
// bottom or an occupied cell turns right for good (the dragon tail).
type grid struct {
	occupied map[[2]int]bool
	started  bool
	key      int  // key of the current streak
	startCol int  // column where the current streak began
	col, row int  // grid position of the last cell placed
	tailing  bool // the current streak has turned right
	lcol     int  // logical column of the current streak
	lrow     int  // logical row of the last cell placed
}

// place puts the next key on the grid and returns its grid position and
// its logical position (streak index, index within the streak).
func (g *grid) place(key int) (col, row, lcol, lrow int) {
	if g.occupied == nil {
		g.occupied = make(map[[2]int]bool)
	}
	switch {
	case !g.started:
		g.started = true
	case key != g.key:
		// The next streak starts one column right of where the previous
		// one started, unless a dragon tail along row 0 is there: then at
		// the first free top cell after it.
		c := g.startCol + 1
		for g.occupied[[2]int{c, 0}] {
			c++
		}
		g.startCol, g.col, g.row, g.tailing = c, c, 0, false
		g.lcol, g.lrow = g.lcol+1, 0
	default:
		g.lrow++
		if !g.tailing && g.row+1 < Rows && !g.occupied[[2]int{g.col, g.row + 1}] {
			g.row++
		} else {
			// Every earlier cell on this row lies left of this streak's
			// start column (the cells it went down through were free), so
			// the cells to the right are always free.
			g.tailing = true
			g.col++
		}
	}
	g.key = key
	g.occupied[[2]int{g.col, g.row}] = true
	return g.col, g.row, g.lcol, g.lrow
}
