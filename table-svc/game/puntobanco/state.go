package puntobanco

import (
	"fmt"
	"strconv"
	"time"

	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// MaxBets bounds the bets of one coup (RESOURCE_EXHAUSTED TABLE_FULL
// beyond): the state stays a bounded record.
const MaxBets = 500

// Rules are a table's resolved house rules (defaults filled in by the
// shell; see chemmy.table.v1.PuntoBancoRules for each one's meaning).
// Amounts in minor units, times in ms.
type Rules struct {
	Decks           int32          `json:"decks"`
	CutCardFromEnd  int32          `json:"cut_card_from_end"`
	Burn            int32          `json:"burn"`
	MaxSeats        int32          `json:"max_seats"`
	MinBet          int64          `json:"min_bet"`
	MaxBet          int64          `json:"max_bet,omitempty"`
	HouseLimit      int64          `json:"house_limit,omitempty"`
	CommissionBP    int64          `json:"commission_bp"`
	Rounding        rules.Rounding `json:"commission_rounding"`
	NoCommission    bool           `json:"no_commission,omitempty"`
	TiePays         int64          `json:"tie_pays"`
	BankNaturalPays int64          `json:"bank_natural_pays"`
	BankNaturalOff  bool           `json:"bank_natural_bet_off,omitempty"`
	PairBets        bool           `json:"pair_bets,omitempty"`
	PairPays        int64          `json:"pair_pays"`
	BettingWindowMS int32          `json:"betting_window_ms"`
	ResultPauseMS   int32          `json:"result_pause_ms"`
}

// Validate checks every rule's range; the error's reason is
// INVALID_HOUSE_RULE.
func (r Rules) Validate() error {
	bad := func(format string, args ...any) error {
		return game.Refuse(game.InvalidArgument, ReasonInvalidHouseRule, format, args...)
	}
	switch {
	case r.Decks != 6 && r.Decks != 8:
		// Source: RULES.md PB-DECKS (6 or 8 decks)
		return bad("decks must be 6 or 8 (PB-DECKS), got %d", r.Decks)
	case r.CutCardFromEnd < 6 || r.CutCardFromEnd > 16:
		return bad("cut_card_from_end must be 6..16, got %d", r.CutCardFromEnd)
	case r.Burn < 3 || r.Burn > 4:
		return bad("burn must be 3 or 4, got %d", r.Burn)
	case r.MaxSeats < 1 || r.MaxSeats > 15:
		return bad("max_seats must be 1..15, got %d", r.MaxSeats)
	case r.MinBet < 1:
		return bad("min_bet must be > 0, got %d", r.MinBet)
	case r.MaxBet < 0 || (r.MaxBet > 0 && r.MaxBet < r.MinBet):
		return bad("max_bet must be 0 (none) or >= min_bet %d, got %d", r.MinBet, r.MaxBet)
	case r.HouseLimit < 0 || (r.HouseLimit > 0 && r.HouseLimit < r.MinBet):
		return bad("house_limit must be 0 (none) or >= min_bet %d, got %d", r.MinBet, r.HouseLimit)
	case r.BettingWindowMS < 1000 || r.BettingWindowMS > 600000:
		return bad("betting_window_ms must be 1000..600000, got %d", r.BettingWindowMS)
	case r.ResultPauseMS < 0 || r.ResultPauseMS > 60000:
		return bad("result_pause_ms must be 0..60000, got %d", r.ResultPauseMS)
	}
	if err := r.EngineRules().Validate(); err != nil {
		return bad("%v", err)
	}
	return nil
}

// EngineRules is the rules engine's view of the payouts (PB-BETS).
func (r Rules) EngineRules() rules.PuntoBancoRules {
	return rules.PuntoBancoRules{
		CommissionBP: r.CommissionBP, CommissionRounding: r.Rounding, NoCommission: r.NoCommission,
		TiePays: r.TiePays, BankNaturalPays: r.BankNaturalPays, PairPays: r.PairPays,
	}
}

// Spot is what a bet is on (PB-BETS); the values are those of
// chemmy.table.v1.BetSpot.
type Spot int8

// The spots of the layout.
const (
	SpotBank        Spot = 1
	SpotPlayer      Spot = 2
	SpotTie         Spot = 3
	SpotBankNatural Spot = 4
	SpotPlayerPair  Spot = 5
	SpotBankPair    Spot = 6
)

// String is the spot's name in events: "bank", "player", "tie",
// "bank_natural", "player_pair", "bank_pair".
func (s Spot) String() string {
	switch s {
	case SpotBank:
		return "bank"
	case SpotPlayer:
		return "player"
	case SpotTie:
		return "tie"
	case SpotBankNatural:
		return "bank_natural"
	case SpotPlayerPair:
		return "player_pair"
	case SpotBankPair:
		return "bank_pair"
	}
	return "spot(" + strconv.Itoa(int(s)) + ")"
}

// Bet returns the rules engine's bet of the spot.
func (s Spot) Bet() rules.PuntoBancoBet {
	switch s {
	case SpotBank:
		return rules.BetBank
	case SpotPlayer:
		return rules.BetPlayer
	case SpotTie:
		return rules.BetTie
	case SpotBankNatural:
		return rules.BetBankNatural
	case SpotPlayerPair:
		return rules.BetPlayerPair
	case SpotBankPair:
		return rules.BetBankPair
	}
	return 0
}

// Phase is where the coup cycle stands.
type Phase int8

// The phases; the values are those of chemmy.table.v1.TableState.
const (
	PhaseBetting  Phase = 3
	PhaseDealing  Phase = 4
	PhaseSettling Phase = 6
	PhaseClosed   Phase = 9
	PhaseResult   Phase = 10
)

// Bet is one stake on the layout, escrowed by a wallet hold. Amounts in
// minor units; Won, Commission and Lost are set by the settlement.
type Bet struct {
	PlayerID   string `json:"player_id"`
	Spot       Spot   `json:"spot"`
	Amount     int64  `json:"amount"`
	HoldID     string `json:"hold_id"`
	Won        int64  `json:"won,omitempty"`
	Commission int64  `json:"commission,omitempty"`
	Lost       int64  `json:"lost,omitempty"`
}

// Coup is one coup: its bets, cards (codes in deal order), result and
// settlement.
type Coup struct {
	ID     string   `json:"id"`
	Number int64    `json:"number"`
	Bets   []Bet    `json:"bets,omitempty"`
	Player []string `json:"player,omitempty"`
	Banker []string `json:"banker,omitempty"`
	// The result, once the tableau is done (Decided).
	Decided     bool          `json:"decided,omitempty"`
	Outcome     rules.Outcome `json:"outcome,omitempty"`
	Natural     bool          `json:"natural,omitempty"`
	BankNatural bool          `json:"bank_natural,omitempty"`
	PlayerPair  bool          `json:"player_pair,omitempty"`
	BankerPair  bool          `json:"banker_pair,omitempty"`
	PlayerTotal int           `json:"player_total,omitempty"`
	BankerTotal int           `json:"banker_total,omitempty"`
	// The settlement.
	Settled    bool      `json:"settled,omitempty"`
	SettleTime time.Time `json:"settle_time,omitzero"`
	Commission int64     `json:"commission,omitempty"`
	HouseNet   int64     `json:"house_net,omitempty"`
	Voided     bool      `json:"voided,omitempty"`
	VoidReason string    `json:"void_reason,omitempty"`
}

// Seat is a seated player.
type Seat struct {
	PlayerID string `json:"player_id"`
	Number   int32  `json:"number"`
}

// Result is one coup of the shoe as the roads draw it.
type Result struct {
	Outcome     rules.Outcome `json:"outcome"`
	PlayerTotal int           `json:"player_total"`
	BankerTotal int           `json:"banker_total"`
	PlayerPair  bool          `json:"player_pair,omitempty"`
	BankerPair  bool          `json:"banker_pair,omitempty"`
	Natural     bool          `json:"natural,omitempty"`
}

// State is a punto banco table's whole game state.
type State struct {
	Rules    Rules     `json:"rules"`
	Phase    Phase     `json:"phase"`
	Deadline time.Time `json:"deadline,omitzero"`
	Seats    []Seat    `json:"seats,omitempty"`
	NextSeat int32     `json:"next_seat,omitempty"`
	// Coup is the coup being bet (nil before its first bet) or played.
	Coup     *Coup `json:"coup,omitempty"`
	LastCoup *Coup `json:"last_coup,omitempty"`
	// CoupSeq numbers coups, voided ones included; CoupsPlayed counts the
	// settled ones.
	CoupSeq     int64 `json:"coup_seq"`
	CoupsPlayed int64 `json:"coups_played"`
	// PauseOver: the result's pause ended while the new shoe was still to
	// open; the table stays in RESULT and the betting opens with the shoe.
	PauseOver bool `json:"pause_over,omitempty"`
	// Results are the current shoe's coups, for the roads.
	Results []Result `json:"results,omitempty"`
	// The shoe in play and the holds to release (shared with the shell).
	game.Bookkeeping
}

// New is a table's initial state: betting open, on the shoe shoeID.
func New(r Rules, shoeID string) (State, error) {
	if err := r.Validate(); err != nil {
		return State{}, err
	}
	return State{Rules: r, Phase: PhaseBetting, Bookkeeping: game.Bookkeeping{ShoeID: shoeID, ShoeNumber: 1}}, nil
}

// clone is a deep copy of s.
func (s State) clone() State {
	c := s
	c.Seats = append([]Seat(nil), s.Seats...)
	c.Coup, c.LastCoup = s.Coup.clone(), s.LastCoup.clone()
	c.Results = append([]Result(nil), s.Results...)
	c.Bookkeeping = s.Bookkeeping.Clone()
	return c
}

func (cp *Coup) clone() *Coup {
	if cp == nil {
		return nil
	}
	c := *cp
	c.Bets = append([]Bet(nil), cp.Bets...)
	c.Player = append([]string(nil), cp.Player...)
	c.Banker = append([]string(nil), cp.Banker...)
	return &c
}

// String describes the state in one line, for logs and test failures.
func (s State) String() string {
	coup := "none"
	if s.Coup != nil {
		coup = fmt.Sprintf("%s#%d bets=%d P=%v B=%v", s.Coup.ID, s.Coup.Number, len(s.Coup.Bets), s.Coup.Player, s.Coup.Banker)
	}
	return fmt.Sprintf("phase=%d deadline=%v coup=%s played=%d shoe=%d results=%d", s.Phase, s.Deadline, coup, s.CoupsPlayed, s.ShoeNumber, len(s.Results))
}
