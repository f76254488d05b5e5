package tablesvc

import (
	"github.com/chemmy/chemmy/table-svc/game"
)

// The inactivity rules of each game (sessions.go): who is seated, whom
// the game's rules allow to stand up now, and what a banker does first.

// idler is a game's part of the inactivity limit (every adapter is one:
// gameCore).
type idler interface {
	// seated are the table's seated players, in seat order.
	seated(t *table) []string
	// standable are the seated players who may be stood up now: none
	// while a coup is dealt, decided or settled; never a player with
	// money in the coup in play, nor a banker with a bet against him.
	standable(t *table) []string
	// giveUpBank is the command with which p gives up his bank before he
	// leaves; nil when he holds none or when Leave gives it up itself.
	giveUpBank(t *table, p string) game.Command
}

func seatedPlayers(t *table) []string { return t.core().seated(t) }

func standable(t *table) []string { return t.core().standable(t) }

func giveUpBank(t *table, p string) game.Command { return t.core().giveUpBank(t, p) }

// keep are the players of seats for whom skip is false.
func keep[S any](seats []S, id func(S) string, skip func(p string) bool) []string {
	var out []string
	for _, st := range seats {
		if p := id(st); !skip(p) {
			out = append(out, p)
		}
	}
	return out
}

func never(string) bool { return false }
