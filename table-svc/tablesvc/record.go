package tablesvc

import (
	"time"

	"google.golang.org/protobuf/proto"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/currency"
)

// table is a table's persisted record: the shell's fields and the
// state of the table's game (game).
//
// The shell's fields below the ID are its own or a copy, made by the
// game's adapter after every change (adapter.sync), of what the shared
// machinery reads of any game: the phase, the counters, shoe_to_close
// and the turn's clock. They keep the JSON names of the record as it
// was stored when chemin de fer's state was the record's top level, so
// such a record still reads (UnmarshalJSON).
type table struct {
	ID string `json:"id"`
	// Operator is the operator (tenant) the table belongs to, the
	// creator's (operator.go); empty for a table stored before tables had
	// operators: DefaultOperator's (table.operator).
	Operator string `json:"operator_id,omitempty"`
	// Rules are the house rules the shell applies whatever the game.
	Rules shellRules `json:"rules"`
	// Phase is where the game stands (a copy of its core's).
	Phase tablev1.TableState `json:"state"`
	// CoupsPlayed counts settled coups; CoupSeq numbers coups, voided
	// ones included (copies of the core's).
	CoupsPlayed int64 `json:"coups_played"`
	CoupSeq     int64 `json:"coup_seq"`
	// ShoeToClose: the table closed; its shoe is to be closed.
	ShoeToClose bool `json:"shoe_to_close,omitempty"`
	// WaitKey names the time limit running ("" when none) and Deadline is
	// when it runs out (deadline.go): the game's turn, window or pause.
	WaitKey  string    `json:"wait_key,omitempty"`
	Deadline time.Time `json:"deadline,omitzero"`

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
	// game is the state of the table's game core, a pointer to its
	// package's State: its adapter reads and writes it, and keeps it in
	// the JSON record under its own key (games.go).
	game any

	// Currency is the table's currency (currency.go); empty for a table
	// stored before tables had one (the wallet's default).
	Currency string `json:"currency,omitempty"`
	// CurrencyExponent is Currency's exponent (its minor unit), as the
	// wallet gave it when the table opened; nil for a table stored before
	// (tableExponent, currency.go).
	CurrencyExponent *int32 `json:"currency_exponent,omitempty"`
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

// shellRules are the house rules the shell applies at every game's
// table, resolved at CreateTable: the shoe's (decks, cut card, burn;
// SHOE-*), whether a certification shoe plays for money, and the seat
// inactivity limit (sessions.go). Times in ms. The JSON names are those
// of chemin de fer's rules, which a record stored them among.
type shellRules struct {
	Decks          int32 `json:"decks"`
	CutCardFromEnd int32 `json:"cut_card_from_end"`
	Burn           int32 `json:"burn"`
	CertRealMoney  bool  `json:"certification_real_money,omitempty"`
	InactivityMS   int32 `json:"inactivity_limit_ms,omitempty"`
}

// entropy is the record of the current shoe's player seeds.
type entropy struct {
	// Commitment is the shoe's commitment (SHA-256 of its server seed);
	// empty for a certification shoe.
	Commitment []byte `json:"commitment,omitempty"`
	// Collecting: the shoe takes commitments (shoe-svc AWAITING_SEEDS);
	// Commitments holds them by player id.
	Collecting  bool              `json:"collecting,omitempty"`
	Commitments map[string][]byte `json:"commitments,omitempty"`
	// CommitBy: the commitment round of a shoe opened while a coup waited
	// for its first card ends then; zero: at the first card.
	CommitBy time.Time `json:"commit_by,omitzero"`
	// Revealing: the commitments are fixed (seed_commitments_fixed); the
	// table waits for the seeds until RevealBy.
	Revealing bool      `json:"revealing,omitempty"`
	RevealBy  time.Time `json:"reveal_by,omitzero"`
	// Seeds are the revealed seeds by player id (each checked against
	// his commitment). A record stored before commitments may hold seeds
	// given in plain while collecting: they are handed over as they are.
	Seeds map[string]string `json:"seeds,omitempty"`
	// Seeded: the shoe's order is fixed; By are the players whose seeds
	// are in it, sorted (shoe-svc's answer).
	Seeded bool     `json:"seeded,omitempty"`
	By     []string `json:"by,omitempty"`
	// Cutter is the named cutter (shoe_cut_by_player), whose Cut gives
	// the shoe's seed instead.
	Cutter string `json:"cutter,omitempty"`
}

// session is a seated player's session at a table.
type session struct {
	ID string `json:"id"`
	// Active is the time of his last action at the table.
	Active time.Time `json:"active"`
	// Seated is when the session started; Coups, Net and Checks are his
	// coups played, their net result and the reality checks he had in it
	// (realitycheck.go).
	Seated time.Time `json:"seated,omitzero"`
	Coups  int64     `json:"coups,omitempty"`
	Net    int64     `json:"net,omitempty"`
	Checks int64     `json:"checks,omitempty"`
	// Answered is the last reality check he answered; Stop, when he
	// answered one "stop": when he is due to be stood up (his answer; a
	// minute later each time the game refused it) (realitycheck.go).
	Answered int64     `json:"answered,omitempty"`
	Stop     time.Time `json:"stop,omitzero"`
}

// stakeVerdict is the wallet's verdict on a banker's new bank of amount,
// given with the settlement (SettleCoupResponse.banker_stake; nil check:
// none given). It lives only in memory, from the settlement to keepBank.
type stakeVerdict struct {
	amount int64
	check  *walletv1.StakeCheck
}

// settlement is a settlement's transfers, for the coup coupID.
type settlement struct {
	coupID    string
	transfers []*walletv1.Transfer
}

// unnamed is the game of a record or request that names none (the
// registry, games.go, sets it).
var unnamed tablev1.Variant

// canonical is the game a variant names: unnamed where none is named (a
// record or request from before the other games).
func canonical(v tablev1.Variant) tablev1.Variant {
	if v == tablev1.Variant_VARIANT_UNSPECIFIED {
		return unnamed
	}
	return v
}

// tableExponent is the exponent of t's currency: as stored, else (a
// table stored before exponents) ISO 4217's for an ISO code; nil when
// neither says.
func (t *table) tableExponent() *int32 {
	if t.CurrencyExponent != nil {
		return proto.Int32(*t.CurrencyExponent)
	}
	if e, ok := currency.ISO(t.Currency); ok {
		return proto.Int32(int32(e))
	}
	return nil
}

// account is the id of player's wallet account in t's currency.
func (t *table) account(player string) string { return "player:" + player + t.AccountSuffix }
