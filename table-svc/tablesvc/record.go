package tablesvc

import (
	"time"

	"github.com/chemmy/chemmy/table-svc/game/banque"
	"github.com/chemmy/chemmy/table-svc/game/chemindefer"
	"github.com/chemmy/chemmy/table-svc/game/oldbaccarat"
	"github.com/chemmy/chemmy/table-svc/game/puntobanco"
)

// table is a table's persisted record.
type table struct {
	ID string `json:"id"`
	// State is the chemin de fer game state (package chemindefer, its
	// doc says what is the core's): embedded, its fields are stored at the
	// record's top level. At the other games' tables only its phase, its
	// counters, shoe_to_close and the turn's clock (WaitKey, Deadline) are
	// used, copied from their core by the shell (gameCore.sync,
	// coreDeadline); the shoe's rules (decks, cut card, burn) and
	// certification_real_money are read by the shoe machinery of every
	// game.
	chemindefer.State

	ShoeID string `json:"shoe_id"`
	Shoes  int    `json:"shoes"`
	// Certification: the current shoe is a prepared order (a
	// certification shoe), not a shuffle.
	Certification bool `json:"certification,omitempty"`
	// ShoeDecks is the current shoe's deck count; 0 for a shoe made from a
	// given order, whose composition the table does not know.
	ShoeDecks int32 `json:"shoe_decks,omitempty"`
	// ShoeDealt counts, by rank (ace first), the cards dealt to coups from
	// the current shoe: with the burned cards, what has left the shoe.
	ShoeDealt [13]int `json:"shoe_dealt"`
	// ShoeVoidHidden counts, by rank, the face-down cards of coups voided
	// in the current shoe: secret to all but auditors, so the odds count
	// them as still in the shoe.
	ShoeVoidHidden [13]int `json:"shoe_void_hidden,omitzero"`
	// Entropy is the current shoe's player seeds (seeds.go).
	Entropy entropy `json:"entropy,omitzero"`
	// SeedWithheld are the players who withheld a committed seed at this
	// table (seeds.go): no seed of theirs is taken here again. Sorted.
	SeedWithheld []string `json:"seed_withheld,omitempty"`

	EventSeq uint64    `json:"event_seq"`
	Created  time.Time `json:"created"`

	// Variant is the game (tablev1.Variant); 0 for chemin de fer.
	Variant int32 `json:"variant,omitempty"`
	// PuntoBanco is the state of a punto banco table's game core
	// (core.go).
	PuntoBanco *puntobanco.State `json:"punto_banco,omitempty"`
	// Old is the state of an old baccarat table's core.
	Old *oldbaccarat.State `json:"old_baccarat,omitempty"`
	// Banque is the state of a baccarat banque table's core.
	Banque *banque.State `json:"banque,omitempty"`

	// Currency is the table's currency (currency.go); empty for a table
	// stored before tables had one (the wallet's default).
	Currency string `json:"currency,omitempty"`
	// AccountSuffix is what the table's wallet account ids end with:
	// "@<CUR>" outside the wallet's default currency, else "".
	AccountSuffix string `json:"account_suffix,omitempty"`
	// Sessions are the seated players' sessions (sessions.go), by player.
	Sessions map[string]*session `json:"sessions,omitempty"`

	// settled is the last settlement's wallet transfers, for the round
	// history (round_transfers.go); not stored with the table.
	settled *settlement

	// stake is the wallet's verdict on the banker's new bank, from the
	// settlement to keepBank (in memory only: bank_limits.go).
	stake stakeVerdict
}

// cf reports whether t plays chemin de fer.
func (t *table) cf() bool { return t.PuntoBanco == nil && t.Old == nil && t.Banque == nil }
