package oracle

import "fmt"

// Cell is what the tableau says a hand does on its two-card total.
type Cell int

// The cells.
const (
	// NoDecision: the hand had none to make (a natural ended the coup).
	NoDecision Cell = iota
	// Draw: the tableau draws ("carte").
	Draw
	// Stand: the tableau stands ("non").
	Stand
	// Option: the hand's holder chooses.
	Option
)

func (c Cell) String() string {
	return [...]string{"no decision", "draw", "stand", "option"}[c]
}

// CheminRules are the house rules of chemin de fer's tableau.
type CheminRules struct {
	// Option3vs9, Option5vs4: banker_option_3_vs_9 and
	// banker_option_5_vs_4 (CF-BANKER-DRAW); off, the banker draws there.
	Option3vs9, Option5vs4 bool
	// BancoFreePlay: banco_free_play (CF-BANCO-FREEDOM).
	BancoFreePlay bool
}

// PlayerCell is CF-PLAYER-DRAW: with no natural the player draws on 0-4,
// has the option on 5, stands on 6-7.
func PlayerCell(total int) Cell {
	switch {
	case total <= 4:
		return Draw
	case total == 5:
		return Option
	}
	return Stand
}

// BankerCell is CF-BANKER-DRAW: the banker's cell by his total and the
// third card he gave the player ("" when the player stood). Its table,
// row by row:
//
//	player stood     draws 0-5, stands 6-7
//	third 0 or 1     draws 0-3, stands 4-7
//	third 2 or 3     draws 0-4, stands 5-7
//	third 4 or 5     draws 0-5, stands 6-7; option on 5 against a 4
//	third 6 or 7     draws 0-6, stands 7
//	third 8          draws 0-2, stands 3-7
//	third 9          draws 0-2, stands 4-7; option on 3
//
// An option whose house rule is off draws.
func BankerCell(total int, playerThird string, r CheminRules) (Cell, error) {
	drawsTo := 5 // the highest total he draws on
	if playerThird != "" {
		v, err := Value(playerThird)
		if err != nil {
			return 0, err
		}
		switch v {
		case 0, 1:
			drawsTo = 3
		case 2, 3:
			drawsTo = 4
		case 4, 5:
			drawsTo = 5
			if v == 4 && total == 5 && r.Option5vs4 {
				return Option, nil
			}
		case 6, 7:
			drawsTo = 6
		case 8:
			drawsTo = 2
		case 9:
			drawsTo = 2
			if total == 3 {
				if r.Option3vs9 {
					return Option, nil
				}
				return Draw, nil
			}
		}
	}
	if total <= drawsTo {
		return Draw, nil
	}
	return Stand, nil
}

// Play is a coup of two hands (chemin de fer, punto banco) as the rules
// play it.
type Play struct {
	Outcome                  Outcome
	Natural                  bool
	PlayerTotal, BankerTotal int
	// PlayerCell and BankerCell are what each hand faced (NoDecision when
	// a natural ended the coup); PlayerTableau and BankerTableau the
	// tableau's cell there without banco free play, which a decision
	// whose time ran out follows, drawing at an option (RULES.md,
	// defaults when a decision's time runs out).
	PlayerCell, BankerCell       Cell
	PlayerTableau, BankerTableau Cell
	// PlayerDrew and BankerDrew: the hand has a third card.
	PlayerDrew, BankerDrew bool
	// PlayerPair, BankerPair: the hand's first two cards have the same
	// rank; BankNatural: the banker's first two cards make 8 or 9.
	PlayerPair, BankerPair, BankNatural bool
}

// TimeoutDraw is what a decision of the player's hand (player true) or
// the banker's does when its time runs out: what the tableau does,
// drawing at an option.
func (p Play) TimeoutDraw(player bool) bool {
	if player {
		return p.PlayerTableau != Stand
	}
	return p.BankerTableau != Stand
}

// PlayChemin judges a chemin de fer coup from its cards, each hand in
// the order dealt: every card one the rules call for or a holder chose
// at an option, none missing. banco: the coup was played banco (for
// CF-BANCO-FREEDOM). An error says which rule the cards break.
func PlayChemin(player, banker []string, r CheminRules, banco bool) (Play, error) {
	return play(player, banker, r, banco && r.BancoFreePlay, false)
}

// PlayPuntoBanco judges a punto banco coup: PB-TABLEAU, chemin de fer's
// with every option removed (the player draws on 5; the banker draws on
// 3 after giving a 9 and on 5 after giving a 4).
func PlayPuntoBanco(player, banker []string) (Play, error) {
	return play(player, banker, CheminRules{}, false, true)
}

func play(player, banker []string, r CheminRules, free, fixed bool) (Play, error) {
	var p Play
	if len(player) < 2 || len(player) > 3 || len(banker) < 2 || len(banker) > 3 {
		return p, fmt.Errorf("oracle: hands of %d and %d cards: a hand has two or three (HAND-SIZE)", len(player), len(banker))
	}
	p2, err := Total(player[:2])
	if err != nil {
		return p, err
	}
	b2, err := Total(banker[:2])
	if err != nil {
		return p, err
	}
	if p.PlayerTotal, err = Total(player); err != nil {
		return p, err
	}
	if p.BankerTotal, err = Total(banker); err != nil {
		return p, err
	}
	p.PlayerPair, p.BankerPair, p.BankNatural = Pair(player), Pair(banker), b2 >= 8
	p.PlayerDrew, p.BankerDrew = len(player) == 3, len(banker) == 3
	if p2 >= 8 || b2 >= 8 {
		// CF-NATURAL-PLAYER, CF-NATURAL-BANKER: a natural is shown at once
		// and ends the coup: 9 beats 8, equal naturals stand off, a lone
		// natural wins.
		if p.PlayerDrew || p.BankerDrew {
			return p, fmt.Errorf("oracle: %v / %v: a natural (%d / %d) ends the coup, yet a third card was dealt (CF-NATURAL-PLAYER, CF-NATURAL-BANKER)", player, banker, p2, b2)
		}
		p.Natural = true
		p.Outcome = compare(p2, b2)
		return p, nil
	}
	// CF-PLAYER-DRAW (PB-TABLEAU: he draws on 5).
	p.PlayerTableau = PlayerCell(p2)
	if fixed && p.PlayerTableau == Option {
		p.PlayerTableau = Draw
	}
	p.PlayerCell = p.PlayerTableau
	if free {
		p.PlayerCell = Option // CF-BANCO-FREEDOM
	}
	if err := follows("player", p.PlayerCell, p2, p.PlayerDrew); err != nil {
		return p, fmt.Errorf("%v / %v: %w (CF-PLAYER-DRAW)", player, banker, err)
	}
	third := ""
	if p.PlayerDrew {
		third = player[2]
	}
	// CF-BANKER-DRAW (PB-TABLEAU: no option).
	if p.BankerTableau, err = BankerCell(b2, third, r); err != nil {
		return p, err
	}
	p.BankerCell = p.BankerTableau
	if free {
		p.BankerCell = Option // CF-BANCO-FREEDOM: then so may the banker
	}
	if err := follows("banker", p.BankerCell, b2, p.BankerDrew); err != nil {
		return p, fmt.Errorf("%v / %v: %w (CF-BANKER-DRAW, the player's third card %q)", player, banker, err, third)
	}
	p.Outcome = compare(p.PlayerTotal, p.BankerTotal) // CF-RESULT
	return p, nil
}

// follows checks a hand's third card against its cell.
func follows(hand string, c Cell, total int, drew bool) error {
	switch {
	case c == Draw && !drew:
		return fmt.Errorf("the %s must draw on %d and has no third card", hand, total)
	case c == Stand && drew:
		return fmt.Errorf("the %s must stand on %d and drew", hand, total)
	}
	return nil
}
