// Package chemindefer is the pure game core of a chemin de fer table
// (RULES.md CF-*): a punter banks (offered in turn, by lot or by
// auction: CF-FIRST-BANKER), the punters bet against the bank in turn
// (CF-BET-ORDER) or call banco (CF-BANCO, CF-BANCO-PRIORITY), the banker
// answers bets over the bank (CF-BANK-RAISE), the player's hand is held
// by the largest bet (CF-HAND-HOLDER), the holders decide at the options
// (CF-PLAYER-DRAW, CF-BANKER-DRAW), the coup is settled by the wallet
// and the bank is held or lost (CF-HOLD, CF-LOSE).
//
// It follows the contract of package game: Apply(state, input) returns
// the new state and its events (or, for a command that waits for money,
// the hold or the bank raise to make first) or a *game.Error (nothing
// changed); Pending names the effect due (release holds, close the shoe
// of a closed table, charge seat fees, cut holds back, open a new shoe,
// deal a card, settle); Deadline is when a Tick is due. No I/O, no clock,
// no randomness: the input brings the time, the new coup's id, the first
// banker's lot, the cards and the wallet's answers.
//
// Beside the contract's part that says who sees which card (Sees,
// Hidden, Shown, HolderOf, FaceDown: view.go), the package says whom the
// shell may stand up when idle (Seated, Standable, GiveUpBank: idle.go)
// and when a banker's limits are asked again after a settlement
// (KeptBank, bank.go).
//
// Coup cycle:
//
//	WAITING --2 seated--> OFFERING (or AUCTION) --bank taken--> BETTING
//	BETTING --covered, banco, or all had their turn--> DEALING (or BANK_RAISE)
//	BANK_RAISE --RaiseBank or Tick--> DEALING
//	DEALING --CardDealt...--> DECISION --DecideDraw or Tick--> DEALING ...
//	DEALING --the tableau done--> SETTLING --Settled--> BETTING (held) or OFFERING (lost)
//
// What is the core's and what is the shell's. The table record of the
// shell (table-svc/tablesvc, record.go) embeds State anonymously, so its
// fields are stored at the same JSON keys as before the core. State holds
// the game: the house rules, the phase ("state"), the seats and the
// gallery, the bank and its hold, the offers and the auction, the coup in
// play and the last one, the counters (coups_played, coup_seq), the seat
// fees, the holds to release or cut back (pending_voids,
// pending_resizes), cut_card_out and shoe_to_close, and the turn's clock
// (wait_key, deadline: the turn the table waits for and when its time
// runs out, stamped by Apply from Input.Now whenever the turn changes).
// The record keeps the shell's own fields beside this state (stored under
// the record's key chemin_de_fer): the table's id, its event sequence,
// when it was created, its variant, the shoe's bookkeeping (shoe id and
// number, certification, decks, the ranks dealt and hidden, for the
// odds), and a copy of what the shared machinery reads of any game (the
// phase, the counters, shoe_to_close, the turn's clock).
//
// Ids the core makes: a coup is named by Input.NewID; a card's request id
// is "<coup_id>/card/<n>"; the settlement's, the coup id; a bet cut back,
// "<coup_id>/trim/<hold_id>"; a seat fee, "fee/<n>" (the shell prefixes
// the table). Holds (AcceptBank, BidBank, PlaceBet, CallBanco) are placed
// by the shell, under its escrow intents, when Apply answers Outcome.Hold
// (game.HoldCommand); the bank's raise, when it answers Outcome.Raise
// (RaiseBank.Resized). Seat fees are billed by the clock: ChargeFees is
// carried out only from a stored state (StoredFirst).
package chemindefer
