// Package puntobanco is the pure game core of a punto banco table (RULES.md
// PB-*): the house banks every coup (PB-BANK), anyone bets on the bank,
// the player, a tie, the bank's natural or the pairs, a betting window on a
// timer closes the betting, the coup is dealt by the fixed tableau
// (PB-TABLEAU) and settled without anyone acting, the result is shown for
// a pause, and the next coup's betting opens.
//
// It follows the contract of package game: Apply(state, input) returns
// the new state and its events or a *game.Error (nothing changed); Pending
// names the effect due (a card to deal, a settlement, holds to release, a
// new shoe); Deadline is when a Tick is due. No I/O, no clock, no
// randomness: the input brings the time, the ids, the cards and the
// wallet's answers. Every card is face up (Sees, Hidden, Shown, HolderOf,
// FaceDown: view.go); whom the shell may stand up when idle: Seated,
// Standable, GiveUpBank (idle.go).
//
// Coup cycle:
//
//	BETTING (no deadline) --first bet--> BETTING (window) --Tick--> DEALING
//	DEALING --CardDealt...--> SETTLING --Settled--> RESULT (pause)
//	RESULT --Tick--> BETTING (no deadline)
//
// A new shoe is opened during the pause after the coup in which the cut
// card came out (SHOE-CUT-CARD); the shoe's results (the roads) start
// again. The croupier may void the coup in play before its settlement
// (CF-ERROR applies to every game): its bets are returned.
package puntobanco
