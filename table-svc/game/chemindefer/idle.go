package chemindefer

import "github.com/chemmy/chemmy/table-svc/game"

// The idle rule at chemin de fer: whom the shell may stand up when his
// session's inactivity limit runs out (the house rule
// inactivity_limit_ms), and how.

// Seated are the table's seated players, in seat order (the gallery is
// not seated).
func Seated(s State) []string {
	var out []string
	for _, st := range s.Seats {
		out = append(out, st.PlayerID)
	}
	return out
}

// Standable are the seated players who may be stood up now, in seat
// order: between coups and in the betting (nobody while a coup is dealt,
// decided, settled or its bank raised, nor at a closed table); never a
// punter with a bet in the coup, nor the banker once a bet (or a banco)
// is against his bank, nor the highest bidder of an auction. A banker
// who leaves passes the bank (CF-PASS).
func Standable(s State) []string {
	switch s.Phase {
	case PhaseDealing, PhaseDecision, PhaseSettling, PhaseRaise, PhaseClosed:
		return nil
	}
	bets := s.Coup != nil && (len(s.Coup.Bets) > 0 || s.Coup.Banco)
	n := len(s.Bids)
	var out []string
	for _, st := range s.Seats {
		p := st.PlayerID
		if s.HasBet(p) || p == s.BankerID && bets || s.Phase == PhaseAuction && n > 0 && s.Bids[n-1].PlayerID == p {
			continue
		}
		out = append(out, p)
	}
	return out
}

// GiveUpBank is the command with which player gives up his bank before
// he is stood up: none at chemin de fer, whose Leave passes the bank
// itself (CF-PASS).
func GiveUpBank(State, string) game.Command { return nil }
