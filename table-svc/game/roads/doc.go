// Package roads draws the scoreboards ("roads") of one punto banco shoe
// from the results of its coups: the bead plate, the big road and the three
// derived roads (big eye boy, small road, cockroach pig), placed cell by
// cell as the boards at the table show them.
//
// The roads are not in the rule sources (docs/RULES.md has no rule ID for
// them); they follow industry convention, including how ties and
// consecutive ties are drawn. The choices the convention leaves open are
// stated below.
//
// The package is pure: no I/O, no clock, no randomness. [Compute] is a
// function of the results alone, so a table can redraw its roads from its
// history at any time.
//
// # Grids
//
// Every road is a grid Rows (6) cells high and as wide as it needs to be.
// Positions are 0-based; Col counts columns from the left, Row counts rows
// from the top (row 0 is the top row). Cells are filled column by column.
//
// # Bead plate
//
// One bead per coup, ties included, in the order dealt: down the column
// from the top, then the next column, so coup i is at column i/6, row
// i%6. A bead carries the whole [Result] (winner, pairs, natural, totals).
//
// # Big road
//
// One cell per banker or player win. A run of wins by the same side (a
// streak) goes down one column; when the winner changes, the next streak
// starts at the top of the next column. A streak that reaches the bottom
// row, or whose next cell down is already taken by an earlier streak,
// turns right and continues along that row for as long as it lasts (the
// "dragon tail"); it does not come back down even where the cells below
// are free. The next streak still starts one column right of where the
// previous streak started, so it may itself turn right early, above the
// earlier tail. In the rare case that a tail runs along row 0 itself, the
// next streak starts at the first free top cell to its right.
//
// Each cell carries both positions: Col and Row on the 6-row grid, and
// LogicalCol and LogicalRow on a grid of unlimited height: LogicalCol is
// the streak's index (0, 1, 2, ...) and LogicalRow the win's index within
// its streak. The dragon tail changes only the grid position.
//
// Ties take no cell of their own. A tie adds one to the Ties count of the
// last cell drawn (the table marks it with a green slash on that cell, and
// with the number when there are several in a row). Ties dealt before the
// first banker or player win of the shoe have no cell to go on; they are
// held and put on the first cell when it is drawn, counted in its
// LeadingTies, not in Ties, so that Ties always means "ties dealt after
// this cell's coup" (a board that draws both the same way shows
// LeadingTies + Ties). While the shoe has only ties, the big road is one
// placeholder cell at (0, 0) with Winner Tie, LeadingTies the number of
// ties so far and Coup -1; the first banker or player win replaces it.
//
// A cell also carries its coup's PlayerPair, BankerPair and Natural flags
// and the coup's index (Coup). The pairs and naturals of tie coups are on
// the bead plate only.
//
// # Derived roads
//
// Big eye boy, small road and cockroach pig use offsets k = 1, 2 and 3.
// They read the big road's logical columns (the streak lengths), never the
// dragon-tailed grid, and ties play no part in them. Going through the big
// road cells in order, the cell at logical column c, row r gives one mark:
//
//   - Start: a road's first mark comes from the cell at (k, 1); if streak
//     k has only one cell, from the cell at (k+1, 0). Earlier cells give no
//     mark. That is, a cell gives a mark when c == k and r >= 1, or when
//     c >= k+1.
//   - First cell of a streak (r == 0): red if the two streaks before it
//     that are k apart, c-1 and c-1-k, have the same length; blue if not.
//   - Further cells (r >= 1): look at streak c-k. Red if it has a cell at
//     row r too; blue if it ends just above (its length is exactly r); red
//     again if it ended earlier (its length is less than r).
//
// Each road places its marks on its own 6-row grid exactly as the big road
// places wins, with colour in place of winner: a new column when the
// colour changes, the same colour down the column, and dragon tails. Each
// mark keeps its grid and logical positions. Red and blue say nothing
// about banker or player: red means the big road is repeating its pattern,
// blue that it is breaking it.
package roads
