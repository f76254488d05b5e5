package tablesvc

import (
	"time"

	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game/banque"
	"github.com/chemmy/chemmy/table-svc/game/oldbaccarat"
	"github.com/chemmy/chemmy/table-svc/game/puntobanco"
)

// tableState mirrors tablev1.TableState.
type tableState int32

const (
	stateWaiting  tableState = 1 // WAITING_FOR_PLAYERS
	stateOffering tableState = 2 // OFFERING_BANK
	stateBetting  tableState = 3 // BETTING
	stateDealing  tableState = 4 // DEALING (automatic)
	stateDecision tableState = 5 // DECISION
	stateSettling tableState = 6 // SETTLING (automatic)
	stateAuction  tableState = 7 // AUCTION of the first bank
	stateRaise    tableState = 8 // BANK_RAISE: the banker answers over-bank bets
	stateClosed   tableState = 9 // CLOSED: read-only
)

// houseRules are the resolved house rules of a table (RULES.md, last
// section). Amounts in minor units.
type houseRules struct {
	Decks          int32 `json:"decks"`
	CutCardFromEnd int32 `json:"cut_card_from_end"`
	Burn           int32 `json:"burn"`
	MinimumBank    int64 `json:"minimum_bank"`
	MaxSeats       int32 `json:"max_seats"`
	CommissionBP   int64 `json:"commission_bp"`
	Rounding       int32 `json:"commission_rounding"` // tablev1.CommissionRounding
	Option3vs9     bool  `json:"banker_option_3_vs_9"`
	Option5vs4     bool  `json:"banker_option_5_vs_4"`
	BancoFreePlay  bool  `json:"banco_free_play"`
	Direction      int32 `json:"betting_direction"` // tablev1.BettingDirection
	FirstBanker    int32 `json:"first_banker"`      // tablev1.FirstBanker
	HouseLimit     int64 `json:"house_limit,omitempty"`
	BetTimeMS      int32 `json:"bet_time_limit_ms"`
	DecisionTimeMS int32 `json:"decision_time_limit_ms"`
	OfferTimeMS    int32 `json:"bank_offer_time_limit_ms"`
	PassMode       int32 `json:"pass_mode"` // tablev1.PassMode
	FirstCoupFree  bool  `json:"first_coup_exempt,omitempty"`
	HourlyFee      int64 `json:"hourly_fee,omitempty"`
	CutByPlayer    bool  `json:"shoe_cut_by_player,omitempty"`
	// CertRealMoney: a certification table takes banks and bets.
	CertRealMoney bool `json:"certification_real_money,omitempty"`
	// AbandonAfter is the number of bank offers in a row with no taker
	// after which the table closes by itself.
	AbandonAfter int32 `json:"abandon_after_offers,omitempty"`
}

// engineRules returns the rules engine's view of the house rules.
func (h houseRules) engineRules() rules.HouseRules {
	r := rules.HouseRules{
		BankerOption3vs9: h.Option3vs9,
		BankerOption5vs4: h.Option5vs4,
		BancoFreePlay:    h.BancoFreePlay,
		CommissionBP:     h.CommissionBP,
	}
	switch h.Rounding {
	case 2:
		r.CommissionRounding = rules.RoundHalfUp
	case 3:
		r.CommissionRounding = rules.RoundUp
	default:
		r.CommissionRounding = rules.RoundDown
	}
	return r
}

type seat struct {
	Number   int32  `json:"number"`
	PlayerID string `json:"player_id"`
	// Since is the start of the seat time not billed yet (hourly_fee).
	Since time.Time `json:"since,omitzero"`
}

// seatFee is seat time to bill under the hourly_fee house rule, stored
// before it is charged so that a retried charge is the same request.
type seatFee struct {
	ID       string `json:"id"`
	PlayerID string `json:"player_id"`
	Seconds  int64  `json:"seconds"`
}

type bet struct {
	PlayerID string `json:"player_id"`
	Amount   int64  `json:"amount"`
	HoldID   string `json:"hold_id"`
	Banco    bool   `json:"banco,omitempty"`
}

// resize is a hold to bring down to Amount, by the request RequestID.
type resize struct {
	RequestID string `json:"request_id"`
	HoldID    string `json:"hold_id"`
	Amount    int64  `json:"amount"`
}

// choice is a recorded draw/stand decision at an option.
type choice int8

const (
	choiceNone  choice = 0
	choiceDraw  choice = 1
	choiceStand choice = 2
)

// coup is one round at a table.
type coup struct {
	ID       string `json:"id"`
	Number   int64  `json:"number"`
	BankerID string `json:"banker_id"`
	Bank     int64  `json:"bank"`
	Bets     []bet  `json:"bets,omitempty"`
	Banco    bool   `json:"banco,omitempty"`
	// Order is the betting order of the punters seated when the coup
	// began (CF-BET-ORDER); Turn indexes it.
	Order []string `json:"order"`
	Turn  int      `json:"turn"`
	// Round counts betting rounds opened again after nobody bet.
	Round int `json:"round,omitempty"`
	// SuiviAsked is the banco suivi holder, asked whether he takes over a
	// banco another punter called (CF-BANCO-PRIORITY); "" otherwise.
	SuiviAsked string `json:"suivi_asked,omitempty"`

	Player       []string `json:"player,omitempty"` // card codes
	Banker       []string `json:"banker,omitempty"`
	CardsDealt   int      `json:"cards_dealt,omitempty"`
	PlayerChoice choice   `json:"player_choice,omitempty"`
	BankerChoice choice   `json:"banker_choice,omitempty"`
	PlayerStood  bool     `json:"player_stood,omitempty"`
	BankerStood  bool     `json:"banker_stood,omitempty"`
	HandHolder   string   `json:"hand_holder,omitempty"`
	// DecisionHand is 1 (player) or 2 (banker) while state is DECISION.
	DecisionHand int32  `json:"decision_hand,omitempty"`
	DecisionBy   string `json:"decision_by,omitempty"`

	Outcome    rules.Outcome `json:"outcome,omitempty"`
	Natural    bool          `json:"natural,omitempty"`
	Settled    bool          `json:"settled,omitempty"`
	Winnings   int64         `json:"winnings,omitempty"`
	Commission int64         `json:"commission,omitempty"`
	BankerNet  int64         `json:"banker_net,omitempty"`
	NewBank    int64         `json:"new_bank,omitempty"`
	SettleTime time.Time     `json:"settle_time,omitzero"`
	Voided     bool          `json:"voided,omitempty"`
	VoidReason string        `json:"void_reason,omitempty"`
}

// covered is the sum of the bets.
func (c *coup) covered() int64 {
	var n int64
	for _, b := range c.Bets {
		n += b.Amount
	}
	return n
}

// turnPlayer is the punter whose betting turn it is, or "".
func (c *coup) turnPlayer() string {
	if c.SuiviAsked != "" {
		return c.SuiviAsked
	}
	if c.Turn < len(c.Order) {
		return c.Order[c.Turn]
	}
	return ""
}

// table is a table's persisted record.
type table struct {
	ID       string     `json:"id"`
	Rules    houseRules `json:"rules"`
	State    tableState `json:"state"`
	Seats    []seat     `json:"seats"`
	NextSeat int32      `json:"next_seat"`
	// Gallery are the spectators, in joining order (CF-GALLERY).
	Gallery []string `json:"gallery,omitempty"`
	// BancoSuivi is the punter who called banco in the last coup and lost
	// (CF-BANCO-PRIORITY); his right lasts until the next coup's first bet.
	BancoSuivi string `json:"banco_suivi,omitempty"`

	BankerID string `json:"banker_id,omitempty"`
	// Bank is the banker's whole bank, all of it held by the wallet; at
	// most HouseLimit of it is at stake in a coup (CF-BANK-LIMIT).
	Bank       int64  `json:"bank,omitempty"`
	BankHoldID string `json:"bank_hold_id,omitempty"`
	// OfferedID is the player the bank is offered to (OFFERING_BANK).
	OfferedID string `json:"offered_id,omitempty"`
	// Offers counts the offers of the bank made at this table; Untaken
	// those in a row that nobody took (abandon_after_offers).
	Offers  int `json:"offers,omitempty"`
	Untaken int `json:"untaken,omitempty"`
	// OpenOffer is the amount of a passed bank auctioned at the bank just
	// held (pass_mode auction), 0 otherwise; OpenOfferFrom passed it.
	OpenOffer     int64  `json:"open_offer,omitempty"`
	OpenOfferFrom string `json:"open_offer_from,omitempty"`
	// Bids of the auction of the first bank, rising; AuctionPassed are
	// the players who said they will not bid; Auctions counts auctions.
	Bids          []bet    `json:"bids,omitempty"`
	AuctionPassed []string `json:"auction_passed,omitempty"`
	Auctions      int      `json:"auctions,omitempty"`
	// BankerCoups counts the coups the current banker has settled
	// (first_coup_exempt).
	BankerCoups int `json:"banker_coups,omitempty"`
	// PendingFees are seat fees stored and not charged yet; Fees numbers
	// them.
	PendingFees []seatFee `json:"pending_fees,omitempty"`
	// UnpaidSeconds is, by player, seat time whose fee his balance could
	// not pay: it is added to his next fee at this table.
	UnpaidSeconds map[string]int64 `json:"unpaid_seconds,omitempty"`
	Fees          int              `json:"fees,omitempty"`

	ShoeID string `json:"shoe_id"`
	Shoes  int    `json:"shoes"`
	// ShoeToClose: the table closed; its shoe is closed by the saga.
	ShoeToClose bool `json:"shoe_to_close,omitempty"`
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
	CutCardOut     bool    `json:"cut_card_out,omitempty"`
	// PendingVoids are holds to release before anything else happens
	// (bets cancelled by a banco, a bank passed or lost).
	PendingVoids []string `json:"pending_voids,omitempty"`
	// PendingResizes are bet holds to cut down to the bet the table
	// decided (CF-BANK-RAISE, excess removed), carried out before the
	// deal: the decision is stored first, so a lost wallet reply is simply
	// retried with the same request id.
	PendingResizes []resize `json:"pending_resizes,omitempty"`

	Coup        *coup `json:"coup,omitempty"`
	LastCoup    *coup `json:"last_coup,omitempty"`
	CoupsPlayed int64 `json:"coups_played"`
	// CoupSeq numbers coups, voided ones included.
	CoupSeq int64 `json:"coup_seq"`
	// WaitKey names the turn the table waits for ("" when none) and
	// Deadline is when it runs out; see deadline.go.
	WaitKey  string    `json:"wait_key,omitempty"`
	Deadline time.Time `json:"deadline,omitzero"`
	EventSeq uint64    `json:"event_seq"`
	Created  time.Time `json:"created"`

	// Variant is the game (tablev1.Variant); 0 for chemin de fer.
	Variant int32 `json:"variant,omitempty"`
	// PuntoBanco is the state of a punto banco table's game core
	// (core.go); the chemin de fer fields above are then unused but for
	// the shoe's bookkeeping, State and the counters, which follow it.
	PuntoBanco *puntobanco.State `json:"punto_banco,omitempty"`
	// Old is the state of an old baccarat table's core.
	Old *oldbaccarat.State `json:"old_baccarat,omitempty"`
	// Banque is the state of a baccarat banque table's core.
	Banque *banque.State `json:"banque,omitempty"`
}

// stake is the part of the bank at stake in a coup: all of it, or the
// house limit (CF-BANK-LIMIT).
func (t *table) stake() int64 {
	if t.Rules.HouseLimit > 0 && t.Bank > t.Rules.HouseLimit {
		// Source: RULES.md CF-BANK-LIMIT: the excess is set aside, not at stake.
		return t.Rules.HouseLimit
	}
	return t.Bank
}

// hasBet reports whether player has a bet in the coup in play.
func (t *table) hasBet(player string) bool {
	if t.Coup == nil {
		return false
	}
	for _, b := range t.Coup.Bets {
		if b.PlayerID == player {
			return true
		}
	}
	return false
}

// inGallery reports whether player is in the gallery.
func (t *table) inGallery(player string) bool {
	for _, g := range t.Gallery {
		if g == player {
			return true
		}
	}
	return false
}

// seatOf returns the seat of a player, or nil.
func (t *table) seatOf(playerID string) *seat {
	for i := range t.Seats {
		if t.Seats[i].PlayerID == playerID {
			return &t.Seats[i]
		}
	}
	return nil
}

// around returns the seated players in turn order starting after the
// player `after` (or from the first seat when after is not seated),
// following the betting direction (CF-BET-ORDER: right = higher seat
// numbers first, wrapping). after itself comes last when seated.
func (t *table) around(after string) []string {
	n := len(t.Seats)
	if n == 0 {
		return nil
	}
	step, start := 1, 0
	if t.Rules.Direction == 2 { // BETTING_DIRECTION_LEFT
		step, start = n-1, n-1
	}
	for i, s := range t.Seats {
		if s.PlayerID == after {
			start = (i + step) % n
		}
	}
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, t.Seats[(start+i*step)%n].PlayerID)
	}
	return out
}
