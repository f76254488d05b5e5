package banque

import "github.com/chemmy/chemmy/table-svc/game"

// The idle rule at baccarat banque: whom the shell may stand up when his
// session's inactivity limit runs out, and how.

// Seated are the table's seated players, both sides, in seat order.
func Seated(s State) []string {
	var out []string
	for _, st := range s.Seats {
		out = append(out, st.PlayerID)
	}
	return out
}

// Standable are the seated players who may be stood up now, in seat
// order: in the betting, those without a bet in the coup, and the banker
// before any bet (he passes the bank first, GiveUpBank, BQ-BANK); in an
// auction, all but the highest bidder and the winner whose fee is due;
// nobody while a coup is dealt, decided or settled, nor at a closed
// table.
func Standable(s State) []string {
	if s.Phase != PhaseBetting && s.Phase != PhaseAuction {
		return nil
	}
	bets := s.Coup != nil && len(s.Coup.Bets) > 0
	var out []string
	for _, st := range s.Seats {
		if !standable(s, st.PlayerID, bets) {
			continue
		}
		out = append(out, st.PlayerID)
	}
	return out
}

// standable reports whether p may be stood up (Standable); bets: the
// coup has a bet.
func standable(s State, p string, bets bool) bool {
	switch {
	case s.Coup != nil && hasBet(s.Coup, p):
		return false
	case p == s.Banker:
		return !bets && s.Phase == PhaseBetting
	case s.Auction != nil:
		return s.Auction.HighPlayerID != p && (s.Auction.Fee == nil || s.Auction.Fee.PlayerID != p)
	}
	return true
}

// GiveUpBank is the command with which player gives up his bank before
// he is stood up: the banker passes it, and it is auctioned again
// (BQ-BANK); nil for anyone else.
func GiveUpBank(s State, player string) game.Command {
	if s.Banker != "" && s.Banker == player {
		return PassBank{PlayerID: player}
	}
	return nil
}
