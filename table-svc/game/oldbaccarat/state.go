package oldbaccarat

import (
	"fmt"
	"strings"
	"time"

	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// Decks is the shoe the shell opens for the table: two full decks, 104
// cards (OLD-DECKS).
const Decks = rules.OldDecks

// MinPlayers is the fewest seated players who can play a coup: the banker
// and two punters (OLD-DECKS).
const MinPlayers = rules.OldMinPunters + 1

// Rules are a table's house rules. Amounts in minor units, times in ms.
type Rules struct {
	// MaxSeats: 3..17 (the banker and up to 16 punters, OLD-DECKS).
	MaxSeats int32 `json:"max_seats"`
	// MinBank is the smallest bid for the bank, > 0 (OLD-BANKER).
	MinBank int64 `json:"min_bank"`
	// MinStake and MaxStake (0: none) bound a punter's stake.
	MinStake int64 `json:"min_stake"`
	MaxStake int64 `json:"max_stake,omitempty"`
	// MaxMoveTop bounds the cards the banker may move from the top to the
	// bottom after the cut (OLD-CUT), 0..52; 0 switches the step off.
	MaxMoveTop int32 `json:"max_move_top"`
	// The time limits: the auction's window from its first bid, the
	// staking window from the first stake, the banker's cut announcement,
	// a draw decision, the bank offered after a baccarat; 1000..600000.
	AuctionWindowMS int32 `json:"auction_window_ms"`
	StakingWindowMS int32 `json:"staking_window_ms"`
	CutMS           int32 `json:"cut_ms"`
	DecisionMS      int32 `json:"decision_ms"`
	BankOfferMS     int32 `json:"bank_offer_ms"`
	// StandOnTimeout: a player whose decision time runs out stands; by
	// default he draws (OLD-DRAW).
	StandOnTimeout bool `json:"stand_on_timeout,omitempty"`
}

// DefaultRules are the defaults of every house rule: 7 seats, a bank of at
// least 10000 and stakes of at least 100 (no maximum), up to 10 top cards
// moved, 30 s for the auction and the staking, 15 s for a cut or a
// decision, 30 s for the bank offered after a baccarat, drawing on a
// timeout.
func DefaultRules() Rules {
	return Rules{MaxSeats: 7, MinBank: 10000, MinStake: 100, MaxMoveTop: 10, AuctionWindowMS: 30000,
		StakingWindowMS: 30000, CutMS: 15000, DecisionMS: 15000, BankOfferMS: 30000}
}

// Validate checks every rule's range; the error's reason is
// INVALID_HOUSE_RULE.
func (r Rules) Validate() error {
	bad := func(format string, args ...any) error {
		return game.Refuse(game.InvalidArgument, ReasonInvalidHouseRule, format, args...)
	}
	window := func(ms int32) bool { return ms >= 1000 && ms <= 600000 }
	switch {
	case r.MaxSeats < MinPlayers || r.MaxSeats > rules.OldMaxPunters+1:
		// Source: RULES.md OLD-DECKS (at least three players; two decks deal 16 punters at most)
		return bad("max_seats must be %d..%d (OLD-DECKS), got %d", MinPlayers, rules.OldMaxPunters+1, r.MaxSeats)
	case r.MinStake < 1 || r.MinStake > game.MaxAmount:
		return bad("min_stake must be 1..2^50, got %d", r.MinStake)
	case r.MaxStake < 0 || (r.MaxStake > 0 && r.MaxStake < r.MinStake):
		return bad("max_stake must be 0 (none) or >= min_stake %d, got %d", r.MinStake, r.MaxStake)
	case r.MinBank < 2*r.MinStake || r.MinBank > 1<<50:
		// Source: RULES.md OLD-STAKE (the bank holds double each stake)
		return bad("min_bank must cover one minimum stake twice (>= %d) and be at most 2^50, got %d", 2*r.MinStake, r.MinBank)
	case r.MaxMoveTop < 0 || r.MaxMoveTop > 52:
		return bad("max_move_top must be 0..52, got %d", r.MaxMoveTop)
	case !window(r.AuctionWindowMS), !window(r.StakingWindowMS), !window(r.CutMS), !window(r.DecisionMS), !window(r.BankOfferMS):
		return bad("time limits must be 1000..600000 ms, got auction %d, staking %d, cut %d, decision %d, bank offer %d",
			r.AuctionWindowMS, r.StakingWindowMS, r.CutMS, r.DecisionMS, r.BankOfferMS)
	}
	return nil
}

// Phase is where the table stands.
type Phase int8

// The phases; the values are those of chemmy.table.v1.TableState.
const (
	PhaseWaiting  Phase = 1 // fewer than three seated and no banker
	PhaseOffering Phase = 2 // the bank is offered to a baccarat punter
	PhaseStaking  Phase = 3 // punters stake against the bank
	PhaseDealing  Phase = 4 // the cut announcement, the deal, a card drawn
	PhaseDecision Phase = 5 // a hand's holder decides to draw or stand
	PhaseSettling Phase = 6 // the wallet moves the coup's money
	PhaseAuction  Phase = 7 // the bank is auctioned
	PhaseClosed   Phase = 9 // closed by the staff
)

// Seat is a seated player; seat numbers run clockwise.
type Seat struct {
	PlayerID string `json:"player_id"`
	Number   int32  `json:"number"`
}

// BankBid is a bid for the bank, escrowed by a hold (OLD-BANKER).
type BankBid struct {
	PlayerID string `json:"player_id"`
	Amount   int64  `json:"amount"`
	HoldID   string `json:"hold_id"`
}

// Auction is the bank's auction in progress.
type Auction struct {
	Round  int32     `json:"round"`
	Bids   []BankBid `json:"bids,omitempty"`
	Passed []string  `json:"passed,omitempty"`
}

// Hand is a punter in a coup: his stake (escrowed by a hold), his cards
// (codes in deal order) and, once decided, his points and net.
type Hand struct {
	PlayerID string   `json:"player_id"`
	Seat     int32    `json:"seat"`
	Stake    int64    `json:"stake"`
	HoldID   string   `json:"hold_id"`
	Cards    []string `json:"cards,omitempty"`
	Stood    bool     `json:"stood,omitempty"`
	// Set with the result: OLD-VALUES points and the net (negative: lost)
	// with the rule that settled the hand.
	Points int    `json:"points,omitempty"`
	Net    int64  `json:"net,omitempty"`
	Rule   string `json:"rule,omitempty"`
}

// Coup is one coup. Before its staking closes Hands are the stakes in the
// order made; from then on, the punters clockwise from the banker's left
// (seat i of rules.OldCoup).
type Coup struct {
	ID         string   `json:"id"`
	Number     int64    `json:"number"`
	BankerID   string   `json:"banker_id"`
	Bank       int64    `json:"bank"`
	BankHoldID string   `json:"bank_hold_id"`
	Hands      []Hand   `json:"hands,omitempty"`
	Passed     []string `json:"passed,omitempty"`
	// StakingClosed: the stakes are fixed and ordered.
	StakingClosed bool `json:"staking_closed,omitempty"`
	// The cut (OLD-CUT): CutDue while the banker may announce a move;
	// MoveTop cards to move, Moved once the shoe did.
	CutDue  bool  `json:"cut_due,omitempty"`
	MoveTop int32 `json:"move_top,omitempty"`
	Moved   bool  `json:"moved,omitempty"`
	// The banker's hand.
	Banker      []string `json:"banker,omitempty"`
	BankerStood bool     `json:"banker_stood,omitempty"`
	// DrawDue: DrawSeat (a punter's index in Hands, -1 the banker) chose
	// to draw and his card is due.
	DrawDue  bool `json:"draw_due,omitempty"`
	DrawSeat int  `json:"draw_seat,omitempty"`
	// The result.
	Decided      bool          `json:"decided,omitempty"`
	Outcome      rules.Outcome `json:"outcome,omitempty"`
	Natural      bool          `json:"natural,omitempty"`
	Split        bool          `json:"split,omitempty"`
	BankerPoints int           `json:"banker_points,omitempty"`
	BankerNet    int64         `json:"banker_net,omitempty"`
	// NextBanker is the punter whose baccarat takes the bank
	// (OLD-BACCARAT), "" when none.
	NextBanker string `json:"next_banker,omitempty"`
	// The settlement or the void.
	Settled    bool      `json:"settled,omitempty"`
	SettleTime time.Time `json:"settle_time,omitzero"`
	Voided     bool      `json:"voided,omitempty"`
	VoidReason string    `json:"void_reason,omitempty"`
}

// State is an old baccarat table's whole game state.
type State struct {
	Rules    Rules     `json:"rules"`
	Phase    Phase     `json:"phase"`
	Deadline time.Time `json:"deadline,omitzero"`
	Seats    []Seat    `json:"seats,omitempty"`
	NextSeat int32     `json:"next_seat,omitempty"`
	// The bank: its holder, his seat, its amount and its hold.
	BankerID   string `json:"banker_id,omitempty"`
	BankerSeat int32  `json:"banker_seat,omitempty"`
	Bank       int64  `json:"bank,omitempty"`
	BankHoldID string `json:"bank_hold_id,omitempty"`
	// Auction is the bank's auction (AUCTION); AuctionRounds counts them.
	Auction       *Auction `json:"auction,omitempty"`
	AuctionRounds int32    `json:"auction_rounds,omitempty"`
	// OfferedTo is the baccarat punter the bank is offered to (OFFERING).
	OfferedTo string `json:"offered_to,omitempty"`
	// Coup is the coup being staked (nil before its first stake) or played.
	Coup     *Coup `json:"coup,omitempty"`
	LastCoup *Coup `json:"last_coup,omitempty"`
	// CoupSeq numbers coups, voided ones included; CoupsPlayed counts the
	// settled ones.
	CoupSeq     int64 `json:"coup_seq"`
	CoupsPlayed int64 `json:"coups_played"`
	// FreshShoe: no card was dealt from the shoe in play yet (its
	// banker's move after the cut is due, OLD-CUT).
	FreshShoe bool `json:"fresh_shoe,omitempty"`
	// The shoe in play and the holds to release (shared with the shell).
	game.Bookkeeping
}

// New is a table's initial state: waiting for three players, on the shoe
// shoeID (two decks, cut by the shoe service).
func New(r Rules, shoeID string) (State, error) {
	if err := r.Validate(); err != nil {
		return State{}, err
	}
	return State{Rules: r, Phase: PhaseWaiting, Bookkeeping: game.Bookkeeping{ShoeID: shoeID, ShoeNumber: 1}, FreshShoe: true}, nil
}

func remove(list []string, s string) []string {
	out := list[:0]
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// clone is a deep copy of s.
func (s State) clone() State {
	c := s
	c.Seats = append([]Seat(nil), s.Seats...)
	if s.Auction != nil {
		au := *s.Auction
		au.Bids = append([]BankBid(nil), s.Auction.Bids...)
		au.Passed = append([]string(nil), s.Auction.Passed...)
		c.Auction = &au
	}
	c.Coup, c.LastCoup = s.Coup.clone(), s.LastCoup.clone()
	c.Bookkeeping = s.Bookkeeping.Clone()
	return c
}

func (cp *Coup) clone() *Coup {
	if cp == nil {
		return nil
	}
	c := *cp
	c.Hands = append([]Hand(nil), cp.Hands...)
	for i := range c.Hands {
		c.Hands[i].Cards = append([]string(nil), cp.Hands[i].Cards...)
	}
	c.Passed = append([]string(nil), cp.Passed...)
	c.Banker = append([]string(nil), cp.Banker...)
	return &c
}

// String describes the state in one line, for logs and test failures.
func (s State) String() string {
	coup := "none"
	if cp := s.Coup; cp != nil {
		var hands []string
		for _, h := range cp.Hands {
			hands = append(hands, fmt.Sprintf("%s:%d%v", h.PlayerID, h.Stake, h.Cards))
		}
		coup = fmt.Sprintf("%s#%d banker=%s%v hands=[%s] passed=%v cut=%v/%d", cp.ID, cp.Number, cp.BankerID, cp.Banker,
			strings.Join(hands, " "), cp.Passed, cp.CutDue, cp.MoveTop)
	}
	return fmt.Sprintf("phase=%d deadline=%v seats=%d banker=%s bank=%d coup=%s played=%d shoe=%d voids=%v",
		s.Phase, s.Deadline, len(s.Seats), s.BankerID, s.Bank, coup, s.CoupsPlayed, s.ShoeNumber, s.PendingVoids)
}
