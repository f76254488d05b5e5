package oldbaccarat

import "github.com/chemmy/chemmy/table-svc/game"

// The idle rule at the old game: whom the shell may stand up when his
// session's inactivity limit runs out, and how.

// Seated are the table's seated players, in seat order.
func Seated(s State) []string {
	var out []string
	for _, st := range s.Seats {
		out = append(out, st.PlayerID)
	}
	return out
}

// Standable are the seated players who may be stood up now, in seat
// order: while the bank waits for players, is offered or auctioned (not
// a bidder: his bid stands until the auction closes), and in the staking
// those without a stake; the banker only in the staking, before the
// coup's first stake (Leave then ends his bank, OLD-BACCARAT); nobody
// while a coup is cut, dealt, decided or settled, nor at a closed table.
func Standable(s State) []string {
	switch s.Phase {
	case PhaseWaiting, PhaseOffering, PhaseStaking, PhaseAuction:
	default:
		return nil
	}
	staked := s.Coup != nil && len(s.Coup.Hands) > 0
	var out []string
	for _, st := range s.Seats {
		if standable(s, st.PlayerID, staked) {
			out = append(out, st.PlayerID)
		}
	}
	return out
}

// standable reports whether p may be stood up (Standable); staked: the
// coup has a stake.
func standable(s State, p string, staked bool) bool {
	switch {
	case s.Coup != nil && hasStake(s.Coup, p):
		return false
	case p == s.BankerID:
		return !staked && s.Phase == PhaseStaking
	case s.Auction != nil:
		for _, b := range s.Auction.Bids {
			if b.PlayerID == p {
				return false
			}
		}
	}
	return true
}

func hasStake(cp *Coup, p string) bool {
	for _, h := range cp.Hands {
		if h.PlayerID == p {
			return true
		}
	}
	return false
}

// GiveUpBank is the command with which player gives up his bank before
// he is stood up: none at the old game, whose Leave ends the bank itself
// (OLD-BACCARAT).
func GiveUpBank(State, string) game.Command { return nil }
