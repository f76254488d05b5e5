package puntobanco

import "github.com/chemmy/chemmy/table-svc/game"

// The idle rule at punto banco: whom the shell may stand up when his
// session's inactivity limit runs out.

// Seated are the table's seated players, in seat order.
func Seated(s State) []string {
	var out []string
	for _, st := range s.Seats {
		out = append(out, st.PlayerID)
	}
	return out
}

// Standable are the seated players who may be stood up now, in seat
// order: in the betting those without a bet in the coup, and everyone
// during the result's pause; nobody while a coup is dealt or settled, nor
// at a closed table.
func Standable(s State) []string {
	if s.Phase != PhaseBetting && s.Phase != PhaseResult {
		return nil
	}
	var out []string
	for _, st := range s.Seats {
		if s.Coup != nil && hasBet(s.Coup, st.PlayerID) {
			continue
		}
		out = append(out, st.PlayerID)
	}
	return out
}

func hasBet(cp *Coup, p string) bool {
	for _, b := range cp.Bets {
		if b.PlayerID == p {
			return true
		}
	}
	return false
}

// GiveUpBank is the command with which player gives up his bank before
// he is stood up: none, the house banks (PB-BANK).
func GiveUpBank(State, string) game.Command { return nil }
