// Package rules is the pure rules engine of the baccarat family: card
// values and hand totals, the drawing tableau, the hand state machine of
// one coup, and the settlement of a coup in integer minor units, for chemin
// de fer (coup.go, tableau.go, settle.go), punto banco (puntobanco.go),
// baccarat banque (banque.go) and the old game with aces at eleven
// (old.go).
//
// Every rule implemented here carries the ID of its source in
// shared/RULES.md (for example CF-BANKER-DRAW). House rules are never
// hard-coded; they arrive in a [HouseRules] value.
//
// The package must never do I/O, read the clock, or use randomness: every
// function is a deterministic function of its arguments, so the table
// service can replay and audit any coup. Shuffling belongs to the shoe
// service; this package only lists the cards of fresh decks ([NewDecks]).
package rules
