package chemindefer

import (
	"time"

	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// Phase is where a table stands; the values are those of
// chemmy.table.v1.TableState (the other games' cores use the same field
// of the table record for theirs).
type Phase int32

// The phases of a chemin de fer table.
const (
	PhaseWaiting  Phase = 1 // WAITING_FOR_PLAYERS
	PhaseOffering Phase = 2 // OFFERING_BANK
	PhaseBetting  Phase = 3 // BETTING
	PhaseDealing  Phase = 4 // DEALING (a card is due)
	PhaseDecision Phase = 5 // DECISION (a hand's holder draws or stands)
	PhaseSettling Phase = 6 // SETTLING (the settlement is due)
	PhaseAuction  Phase = 7 // AUCTION of the first bank
	PhaseRaise    Phase = 8 // BANK_RAISE: the banker answers over-bank bets
	PhaseClosed   Phase = 9 // CLOSED: read-only
)

// Rules are a table's resolved house rules (RULES.md, last section; see
// chemmy.table.v1.HouseRules for each one's meaning). Amounts in minor
// units, times in ms. The shell fills in the defaults and checks them.
type Rules struct {
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
	// InactivityMS is the player sessions' inactivity limit (the shell
	// stands an idle player up); 0: none.
	InactivityMS int32 `json:"inactivity_limit_ms,omitempty"`
}

// The values of the rules' enums (chemmy.table.v1).
const (
	DirectionLeft       = 2 // BETTING_DIRECTION_LEFT
	FirstBankerLot      = 2 // FIRST_BANKER_LOT
	FirstBankerAuction  = 3 // FIRST_BANKER_AUCTION
	PassModeAuction     = 2 // PASS_MODE_AUCTION
	roundingHalfUp      = 2 // COMMISSION_ROUNDING_HALF_UP
	roundingUp          = 3 // COMMISSION_ROUNDING_UP
	defaultAbandonAfter = 20
)

// EngineRules is the rules engine's view of the house rules.
func (r Rules) EngineRules() rules.HouseRules {
	hr := rules.HouseRules{
		BankerOption3vs9: r.Option3vs9,
		BankerOption5vs4: r.Option5vs4,
		BancoFreePlay:    r.BancoFreePlay,
		CommissionBP:     r.CommissionBP,
	}
	switch r.Rounding {
	case roundingHalfUp:
		hr.CommissionRounding = rules.RoundHalfUp
	case roundingUp:
		hr.CommissionRounding = rules.RoundUp
	default:
		hr.CommissionRounding = rules.RoundDown
	}
	return hr
}

// Seat is a seated player.
type Seat struct {
	Number   int32  `json:"number"`
	PlayerID string `json:"player_id"`
	// Since is the start of the seat time not billed yet (hourly_fee).
	Since time.Time `json:"since,omitzero"`
}

// SeatFee is seat time to bill under the hourly_fee house rule, stored
// before it is charged so that a retried charge is the same request. ID
// is "fee/<n>" (the shell makes it the table's: "table/<id>/fee/<n>";
// records stored before the core hold the table's id already).
type SeatFee struct {
	ID       string `json:"id"`
	PlayerID string `json:"player_id"`
	Seconds  int64  `json:"seconds"`
}

// Bet is a stake against the bank (or a bid for it), escrowed by a wallet
// hold. Amount in minor units.
type Bet struct {
	PlayerID string `json:"player_id"`
	Amount   int64  `json:"amount"`
	HoldID   string `json:"hold_id"`
	Banco    bool   `json:"banco,omitempty"`
}

// Resize is a hold to bring down to Amount, by the wallet request
// RequestID.
type Resize struct {
	RequestID string `json:"request_id"`
	HoldID    string `json:"hold_id"`
	Amount    int64  `json:"amount"`
}

// Choice is a recorded draw/stand decision at an option.
type Choice int8

// The choices.
const (
	ChoiceNone  Choice = 0
	ChoiceDraw  Choice = 1
	ChoiceStand Choice = 2
)

// Hands of a decision (chemmy.table.v1.Hand).
const (
	HandPlayer int32 = 1
	HandBanker int32 = 2
)

// Coup is one round at a table: the bank at stake, the bets, the cards
// (codes in deal order), the decisions, the result and the settlement.
type Coup struct {
	ID       string `json:"id"`
	Number   int64  `json:"number"`
	BankerID string `json:"banker_id"`
	Bank     int64  `json:"bank"`
	Bets     []Bet  `json:"bets,omitempty"`
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
	PlayerChoice Choice   `json:"player_choice,omitempty"`
	BankerChoice Choice   `json:"banker_choice,omitempty"`
	PlayerStood  bool     `json:"player_stood,omitempty"`
	BankerStood  bool     `json:"banker_stood,omitempty"`
	HandHolder   string   `json:"hand_holder,omitempty"`
	// DecisionHand is HandPlayer or HandBanker while the phase is DECISION.
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

// Covered is the sum of the bets.
func (cp *Coup) Covered() int64 {
	var n int64
	for _, b := range cp.Bets {
		n += b.Amount
	}
	return n
}

// TurnPlayer is the punter whose betting turn it is, or "".
func (cp *Coup) TurnPlayer() string {
	if cp.SuiviAsked != "" {
		return cp.SuiviAsked
	}
	if cp.Turn < len(cp.Order) {
		return cp.Order[cp.Turn]
	}
	return ""
}

// Turned reports whether every card of cp is face up: the coup has a
// result (CF-RESULT).
func (cp *Coup) Turned() bool { return cp.Outcome != 0 }

// HandCards is the card codes of hand (HandPlayer or HandBanker).
func (cp *Coup) HandCards(hand int32) []string {
	if hand == HandBanker {
		return cp.Banker
	}
	return cp.Player
}

// State is a chemin de fer table's whole game state. The shell's record
// keeps it under its own key; a record stored before that holds its
// fields at the record's top level, and the shell still reads it.
type State struct {
	Rules    Rules  `json:"rules"`
	Phase    Phase  `json:"state"`
	Seats    []Seat `json:"seats"`
	NextSeat int32  `json:"next_seat"`
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
	Bids          []Bet    `json:"bids,omitempty"`
	AuctionPassed []string `json:"auction_passed,omitempty"`
	Auctions      int      `json:"auctions,omitempty"`
	// BankerCoups counts the coups the current banker has settled
	// (first_coup_exempt).
	BankerCoups int `json:"banker_coups,omitempty"`
	// PendingFees are seat fees stored and not charged yet; Fees numbers
	// them.
	PendingFees []SeatFee `json:"pending_fees,omitempty"`
	// UnpaidSeconds is, by player, seat time whose fee his balance could
	// not pay: it is added to his next fee at this table.
	UnpaidSeconds map[string]int64 `json:"unpaid_seconds,omitempty"`
	Fees          int              `json:"fees,omitempty"`

	// ShoeToClose: the table closed; its shoe is to be closed (CloseShoe).
	ShoeToClose bool `json:"shoe_to_close,omitempty"`
	// CutCardOut: the cut card came out in this shoe (SHOE-CUT-CARD); a
	// new shoe is due once the coup is settled (SHOE-RESHUFFLE).
	CutCardOut bool `json:"cut_card_out,omitempty"`
	// PendingVoids are holds to release before anything else happens
	// (bets cancelled by a banco, a bank passed or lost).
	PendingVoids []string `json:"pending_voids,omitempty"`
	// PendingResizes are bet holds to cut down to the bet the table
	// decided (CF-BANK-RAISE, excess removed), carried out before the
	// deal: the decision is stored first, so a lost wallet reply is simply
	// retried with the same request id.
	PendingResizes []Resize `json:"pending_resizes,omitempty"`

	Coup        *Coup `json:"coup,omitempty"`
	LastCoup    *Coup `json:"last_coup,omitempty"`
	CoupsPlayed int64 `json:"coups_played"`
	// CoupSeq numbers coups, voided ones included.
	CoupSeq int64 `json:"coup_seq"`

	// WaitKey names the turn the table waits for ("" when none) and
	// Deadline is when its time limit runs out (Turn). The shell reads
	// them for every game: at the other games' tables it sets them from
	// their core's deadline.
	WaitKey  string    `json:"wait_key,omitempty"`
	Deadline time.Time `json:"deadline,omitzero"`
}

// Stake is the part of the bank at stake in a coup: all of it, or the
// house limit (CF-BANK-LIMIT).
func (s *State) Stake() int64 {
	if s.Rules.HouseLimit > 0 && s.Bank > s.Rules.HouseLimit {
		// Source: RULES.md CF-BANK-LIMIT: the excess is set aside, not at stake.
		return s.Rules.HouseLimit
	}
	return s.Bank
}

// HasBet reports whether player has a bet in the coup in play.
func (s *State) HasBet(player string) bool {
	if s.Coup == nil {
		return false
	}
	for _, b := range s.Coup.Bets {
		if b.PlayerID == player {
			return true
		}
	}
	return false
}

// InGallery reports whether player is in the gallery.
func (s *State) InGallery(player string) bool { return contains(s.Gallery, player) }

// SeatOf returns the seat of a player, or nil.
func (s *State) SeatOf(playerID string) *Seat {
	for i := range s.Seats {
		if s.Seats[i].PlayerID == playerID {
			return &s.Seats[i]
		}
	}
	return nil
}

// Around returns the seated players in turn order starting after the
// player `after` (or from the first seat when after is not seated),
// following the betting direction (CF-BET-ORDER: right = higher seat
// numbers first, wrapping). after itself comes last when seated.
func (s *State) Around(after string) []string {
	n := len(s.Seats)
	if n == 0 {
		return nil
	}
	step, start := 1, 0
	if s.Rules.Direction == DirectionLeft {
		step, start = n-1, n-1
	}
	for i, st := range s.Seats {
		if st.PlayerID == after {
			start = (i + step) % n
		}
	}
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, s.Seats[(start+i*step)%n].PlayerID)
	}
	return out
}

// EngineCoup is the rules engine's view of a coup.
func EngineCoup(cp *Coup) (rules.Coup, error) {
	player, err := game.ParseCards(cp.Player)
	if err != nil {
		return rules.Coup{}, err
	}
	banker, err := game.ParseCards(cp.Banker)
	return rules.Coup{Player: player, Banker: banker, PlayerStood: cp.PlayerStood, BankerStood: cp.BankerStood, Banco: cp.Banco}, err
}

// clone is a deep copy of s (nil slices stay nil: the stored JSON is
// the same).
func (s State) clone() State {
	c := s
	c.Seats, c.Gallery, c.Bids = cloneSlice(s.Seats), cloneSlice(s.Gallery), cloneSlice(s.Bids)
	c.AuctionPassed, c.PendingFees = cloneSlice(s.AuctionPassed), cloneSlice(s.PendingFees)
	c.PendingVoids, c.PendingResizes = cloneSlice(s.PendingVoids), cloneSlice(s.PendingResizes)
	if s.UnpaidSeconds != nil {
		c.UnpaidSeconds = make(map[string]int64, len(s.UnpaidSeconds))
		for k, v := range s.UnpaidSeconds {
			c.UnpaidSeconds[k] = v
		}
	}
	c.Coup, c.LastCoup = s.Coup.clone(), s.LastCoup.clone()
	return c
}

func (cp *Coup) clone() *Coup {
	if cp == nil {
		return nil
	}
	c := *cp
	c.Bets = cloneSlice(cp.Bets)
	c.Order = cloneSlice(cp.Order)
	c.Player = cloneSlice(cp.Player)
	c.Banker = cloneSlice(cp.Banker)
	return &c
}

// cloneSlice copies s, nil staying nil.
func cloneSlice[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func removeString(list []string, v string) []string {
	out := list[:0:0]
	for _, x := range list {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}
