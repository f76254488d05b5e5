package banque

import (
	"fmt"
	"strconv"
	"time"

	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// MaxBets bounds the bets of one coup (RESOURCE_EXHAUSTED TABLE_FULL
// beyond); with one bet per seated player it is never reached by a
// valid table, and it keeps the state a bounded record.
const MaxBets = 64

// Rules are a table's resolved house rules (DefaultRules gives the
// defaults; the shell fills in what a table leaves unset). Amounts in
// minor units, times in ms.
type Rules struct {
	// Decks in the shoe: 3 only (BQ-DECKS). The shoe's cut card and burn
	// are the shell's to pass to the shoe service (SHOE-CUT-CARD 6..16,
	// default 8; SHOE-BURN 3 or 4, default 3).
	Decks          int32 `json:"decks"`
	CutCardFromEnd int32 `json:"cut_card_from_end"`
	Burn           int32 `json:"burn"`
	// MaxSeatsPerSide bounds each side's seats (right and left), 1..7;
	// default 6.
	MaxSeatsPerSide int32 `json:"max_seats_per_side"`
	// MinBet is the smallest bet, > 0; default 100. A bank that can no
	// longer cover it is exhausted.
	MinBet int64 `json:"min_bet"`
	// MaxBet is the largest single bet, 0 (default) for none but the bank.
	MaxBet int64 `json:"max_bet,omitempty"`
	// HouseBank: the house holds the bank and covers every bet (BQ-BANK
	// "usually held by the house"); default off: the bank is auctioned.
	HouseBank bool `json:"house_bank,omitempty"`
	// HouseLimit is, with a house bank, the most all the bets of a coup
	// may total; 0 (default) for none. Not allowed with an auctioned bank
	// (the bank is the limit).
	HouseLimit int64 `json:"house_limit,omitempty"`
	// MinimumBank is the lowest bid in an auction of the bank, >= MinBet;
	// default 1000.
	MinimumBank int64 `json:"minimum_bank"`
	// CommissionBP is a commission on the banker's net winnings of a coup,
	// basis points 0..10000, taken from the bank by the wallet's
	// settlement; default 0 (BQ-BANK: the house took its 2.5% at the
	// auction). Must be 0 with a house bank.
	CommissionBP int64 `json:"commission_bp,omitempty"`
	// Rounding rounds the auction fee and the commission; zero is down.
	Rounding rules.Rounding `json:"rounding,omitempty"`
	// AuctionTimeLimitMS: an auction closes this long after its first
	// bid, 1000..600000; default 30000.
	AuctionTimeLimitMS int32 `json:"auction_time_limit_ms"`
	// BetTimeLimitMS: a punter's betting turn, 1000..600000; default
	// 30000; when it runs out he passes.
	BetTimeLimitMS int32 `json:"bet_time_limit_ms"`
	// DecisionTimeLimitMS: a draw/stand decision, 1000..600000; default
	// 30000; when it runs out the player on 5 draws and the banker does
	// what the chemin de fer tableau does against the hand carrying more
	// money, drawing at an option cell.
	DecisionTimeLimitMS int32 `json:"decision_time_limit_ms"`
	// BancoBothTables (BQ-BETS "banco on both hands", a house rule):
	// the punter in turn, before any bet of the coup, may call banco: he
	// bets the whole bank on both tables (à cheval, BQ-CHEVAL), whatever
	// max_bet, and the betting closes. Default off; only with an
	// auctioned bank (a house bank has no size to call).
	BancoBothTables bool `json:"banco_both_tables,omitempty"`
}

// DefaultRules are the defaults of every house rule (auctioned bank).
func DefaultRules() Rules {
	return Rules{Decks: 3, CutCardFromEnd: 8, Burn: 3, MaxSeatsPerSide: 6, MinBet: 100, MinimumBank: 1000,
		Rounding: rules.RoundDown, AuctionTimeLimitMS: 30000, BetTimeLimitMS: 30000, DecisionTimeLimitMS: 30000}
}

// Validate checks every rule's range; the error's reason is
// INVALID_HOUSE_RULE.
func (r Rules) Validate() error {
	bad := func(format string, args ...any) error {
		return game.Refuse(game.InvalidArgument, ReasonInvalidHouseRule, format, args...)
	}
	limit := func(ms int32) bool { return ms >= 1000 && ms <= 600000 }
	switch {
	case r.Decks != 3:
		// Source: RULES.md BQ-DECKS (3 decks)
		return bad("decks must be 3 (BQ-DECKS), got %d", r.Decks)
	case r.CutCardFromEnd < 6 || r.CutCardFromEnd > 16:
		return bad("cut_card_from_end must be 6..16, got %d", r.CutCardFromEnd)
	case r.Burn < 3 || r.Burn > 4:
		return bad("burn must be 3 or 4, got %d", r.Burn)
	case r.MaxSeatsPerSide < 1 || r.MaxSeatsPerSide > 7:
		return bad("max_seats_per_side must be 1..7, got %d", r.MaxSeatsPerSide)
	case r.MinBet < 1:
		return bad("min_bet must be > 0, got %d", r.MinBet)
	case r.MaxBet < 0 || (r.MaxBet > 0 && r.MaxBet < r.MinBet):
		return bad("max_bet must be 0 (none) or >= min_bet %d, got %d", r.MinBet, r.MaxBet)
	case r.HouseLimit < 0 || (r.HouseLimit > 0 && r.HouseLimit < r.MinBet):
		return bad("house_limit must be 0 (none) or >= min_bet %d, got %d", r.MinBet, r.HouseLimit)
	case r.HouseLimit > 0 && !r.HouseBank:
		return bad("house_limit is for a house bank; an auctioned bank is its own limit")
	case !r.HouseBank && r.MinimumBank < r.MinBet:
		return bad("minimum_bank must be >= min_bet %d, got %d", r.MinBet, r.MinimumBank)
	case r.CommissionBP < 0 || r.CommissionBP > rules.MaxCommissionBP:
		return bad("commission_bp must be 0..10000, got %d", r.CommissionBP)
	case r.CommissionBP > 0 && r.HouseBank:
		return bad("commission_bp must be 0 with a house bank (the house would pay itself)")
	case r.Rounding < 0 || r.Rounding > rules.RoundUp:
		return bad("rounding %d is not a rounding", int(r.Rounding))
	case !limit(r.AuctionTimeLimitMS) || !limit(r.BetTimeLimitMS) || !limit(r.DecisionTimeLimitMS):
		return bad("time limits must be 1000..600000 ms, got auction %d, bet %d, decision %d",
			r.AuctionTimeLimitMS, r.BetTimeLimitMS, r.DecisionTimeLimitMS)
	case r.BancoBothTables && r.HouseBank:
		return bad("banco_both_tables needs an auctioned bank: a house bank has no size to call")
	}
	return nil
}

// Side is where a seat is or what a bet is on (BQ-BETS); the values are
// those of chemmy.wallet.v1.BanqueSide and of rules.Table.
type Side int8

// The sides. A seat is on the right or the left; a bet may also be à
// cheval (both tables, BQ-CHEVAL).
const (
	SideRight  Side = 1
	SideLeft   Side = 2
	SideCheval Side = 3
)

// String is "right", "left", "cheval" (the spot of BetPlaced events).
func (s Side) String() string {
	switch s {
	case SideRight:
		return "right"
	case SideLeft:
		return "left"
	case SideCheval:
		return "cheval"
	}
	return "side(" + strconv.Itoa(int(s)) + ")"
}

// Table is the rules engine's table of the side.
func (s Side) Table() rules.Table { return rules.Table(s) }

// Hand is one of the coup's three hands (BQ-HANDS); its string is the
// hand of game.DealCard.
type Hand string

// The hands.
const (
	HandRight  Hand = "right"
	HandLeft   Hand = "left"
	HandBanker Hand = "banker"
)

// Phase is where the table stands.
type Phase int8

// The phases; the values are those of chemmy.table.v1.TableState.
const (
	PhaseBetting  Phase = 3 // punters bet in turn
	PhaseDealing  Phase = 4 // cards are due
	PhaseDecision Phase = 5 // a hand's player or the banker draws or stands
	PhaseSettling Phase = 6 // the settlement is due
	PhaseAuction  Phase = 7 // the bank is auctioned (and its fee charged)
	PhaseClosed   Phase = 9
)

// Seat is a seated player and his side. The seats of a side, in the order
// of State.Seats, run from the banker outward: the first to join a side
// sits nearest the banker.
type Seat struct {
	PlayerID string `json:"player_id"`
	Side     Side   `json:"side"`
	Number   int32  `json:"number"`
}

// Bet is one stake against the bank, escrowed by a wallet hold. Amounts
// in minor units; Won and Lost are set by the settlement (both 0: the
// stake was returned).
type Bet struct {
	PlayerID string `json:"player_id"`
	Side     Side   `json:"side"`
	Amount   int64  `json:"amount"`
	HoldID   string `json:"hold_id"`
	// Banco: the bet of a banco on both tables (the whole bank, à cheval).
	Banco bool  `json:"banco,omitempty"`
	Won   int64 `json:"won,omitempty"`
	Lost  int64 `json:"lost,omitempty"`
}

// Coup is one coup: its betting round, bets, hands (card codes in deal
// order), the players who hold the hands, the result and the settlement.
type Coup struct {
	ID     string `json:"id"`
	Number int64  `json:"number"`
	Bets   []Bet  `json:"bets,omitempty"`
	// Acted are the punters who bet or passed in the betting round.
	Acted []string `json:"acted,omitempty"`
	// The hands' cards.
	Right  []string `json:"right,omitempty"`
	Left   []string `json:"left,omitempty"`
	Banker []string `json:"banker,omitempty"`
	// RightHolder and LeftHolder play the punters' hands (BQ-PLAY), fixed
	// when the betting closes; "" when nobody sits on that side (the hand
	// is then played by the tableau). Only a hand's holder (and the
	// banker, for the banker's hand) may see its face-down cards.
	RightHolder string `json:"right_holder,omitempty"`
	LeftHolder  string `json:"left_holder,omitempty"`
	// Choices made: a "non" at an option, and a third card decided for a
	// hand and not yet dealt.
	RightStood  bool `json:"right_stood,omitempty"`
	LeftStood   bool `json:"left_stood,omitempty"`
	BankerStood bool `json:"banker_stood,omitempty"`
	DrawTo      Hand `json:"draw_to,omitempty"`
	// Await is the hand whose draw/stand decision the table waits for
	// (PhaseDecision).
	Await Hand `json:"await,omitempty"`
	// The result, once decided: each punters' hand against the bank, from
	// the bank's side, and the totals.
	Decided      bool          `json:"decided,omitempty"`
	RightOutcome rules.Outcome `json:"right_outcome,omitempty"`
	LeftOutcome  rules.Outcome `json:"left_outcome,omitempty"`
	RightTotal   int           `json:"right_total,omitempty"`
	LeftTotal    int           `json:"left_total,omitempty"`
	BankerTotal  int           `json:"banker_total,omitempty"`
	// The settlement.
	Settled        bool      `json:"settled,omitempty"`
	SettleTime     time.Time `json:"settle_time,omitzero"`
	BankerWinnings int64     `json:"banker_winnings,omitempty"`
	Commission     int64     `json:"commission,omitempty"`
	NewBank        int64     `json:"new_bank,omitempty"`
	Voided         bool      `json:"voided,omitempty"`
	VoidReason     string    `json:"void_reason,omitempty"`
}

// Auction is an auction of the bank (BQ-BANK). Only the highest bid is
// held; an outbid bid's hold is released at once.
type Auction struct {
	// ID names the auction (the input's NewID at its first bid); the fee's
	// request id derives from it.
	ID    string `json:"id,omitempty"`
	Round int32  `json:"round"`
	// The highest bid and its hold.
	HighPlayerID string `json:"high_player_id,omitempty"`
	HighBid      int64  `json:"high_bid,omitempty"`
	HighHoldID   string `json:"high_hold_id,omitempty"`
	// Declined are the seated players who will not bid.
	Declined []string `json:"declined,omitempty"`
	// Fee, once the auction closed: the winner's 2.5% is due (ChargeFee).
	Fee *FeeDue `json:"fee,omitempty"`
}

// FeeDue is the auction fee the winner owes (BQ-BANK).
type FeeDue struct {
	RequestID string `json:"request_id"`
	PlayerID  string `json:"player_id"`
	Bid       int64  `json:"bid"`
	HoldID    string `json:"hold_id"`
}

// State is a baccarat banque table's whole game state.
type State struct {
	Rules    Rules     `json:"rules"`
	Phase    Phase     `json:"phase"`
	Deadline time.Time `json:"deadline,omitzero"`
	Seats    []Seat    `json:"seats,omitempty"`
	NextSeat int32     `json:"next_seat,omitempty"`
	// The bank: its banker ("" with a house bank or while auctioned), its
	// amount and its wallet hold (both 0/"" with a house bank).
	Banker     string `json:"banker,omitempty"`
	Bank       int64  `json:"bank,omitempty"`
	BankHoldID string `json:"bank_hold_id,omitempty"`
	// Auction is the auction in progress (PhaseAuction); AuctionSeq counts
	// the table's auctions; FeesCharged sums the auction fees paid.
	Auction     *Auction `json:"auction,omitempty"`
	AuctionSeq  int32    `json:"auction_seq,omitempty"`
	FeesCharged int64    `json:"fees_charged,omitempty"`
	// The players who hold the right and left hands in the next coup
	// (BQ-PLAY); "" until a first coup, or when nobody sits there.
	RightHolder string `json:"right_holder,omitempty"`
	LeftHolder  string `json:"left_holder,omitempty"`
	// TurnPlayerID is the punter whose betting turn it is (PhaseBetting).
	TurnPlayerID string `json:"turn_player_id,omitempty"`
	// Coup is the coup being bet or played; LastCoup the last one settled
	// or voided.
	Coup     *Coup `json:"coup,omitempty"`
	LastCoup *Coup `json:"last_coup,omitempty"`
	// CoupSeq numbers coups (voided ones and coups ended without bets
	// included); CoupsPlayed counts the settled ones.
	CoupSeq     int64 `json:"coup_seq"`
	CoupsPlayed int64 `json:"coups_played"`
	// The shoe in play and the holds to release (shared with the shell).
	game.Bookkeeping
}

// New is a table's initial state on the shoe shoeID: with a house bank
// the betting is open (it waits for players), otherwise the bank's first
// auction is open. It takes no time and no id: the first coup is named
// when a command opens it.
func New(r Rules, shoeID string) (State, error) {
	if err := r.Validate(); err != nil {
		return State{}, err
	}
	s := State{Rules: r, Bookkeeping: game.Bookkeeping{ShoeID: shoeID, ShoeNumber: 1}}
	if r.HouseBank {
		s.Phase = PhaseBetting
	} else {
		s.Phase, s.AuctionSeq, s.Auction = PhaseAuction, 1, &Auction{Round: 1}
	}
	return s, nil
}

func remove(list []string, x string) []string {
	out := list[:0:0]
	for _, y := range list {
		if y != x {
			out = append(out, y)
		}
	}
	return out
}

func contains(list []string, x string) bool {
	for _, y := range list {
		if y == x {
			return true
		}
	}
	return false
}

// clone is a deep copy of s.
func (s State) clone() State {
	c := s
	c.Seats = append([]Seat(nil), s.Seats...)
	c.Coup, c.LastCoup = s.Coup.clone(), s.LastCoup.clone()
	c.Bookkeeping = s.Bookkeeping.Clone()
	if s.Auction != nil {
		au := *s.Auction
		au.Declined = append([]string(nil), s.Auction.Declined...)
		if s.Auction.Fee != nil {
			f := *s.Auction.Fee
			au.Fee = &f
		}
		c.Auction = &au
	}
	return c
}

func (cp *Coup) clone() *Coup {
	if cp == nil {
		return nil
	}
	c := *cp
	c.Bets = append([]Bet(nil), cp.Bets...)
	c.Acted = append([]string(nil), cp.Acted...)
	c.Right = append([]string(nil), cp.Right...)
	c.Left = append([]string(nil), cp.Left...)
	c.Banker = append([]string(nil), cp.Banker...)
	return &c
}

// String describes the state in one line, for logs and test failures.
func (s State) String() string {
	coup := "none"
	if cp := s.Coup; cp != nil {
		coup = fmt.Sprintf("%s#%d bets=%d R=%v L=%v B=%v holders=%q/%q await=%q drawTo=%q", cp.ID, cp.Number, len(cp.Bets),
			cp.Right, cp.Left, cp.Banker, cp.RightHolder, cp.LeftHolder, cp.Await, cp.DrawTo)
	}
	auction := "none"
	if au := s.Auction; au != nil {
		auction = fmt.Sprintf("#%d high=%s:%d declined=%v fee=%v", au.Round, au.HighPlayerID, au.HighBid, au.Declined, au.Fee != nil)
	}
	return fmt.Sprintf("phase=%d deadline=%v seats=%v banker=%q bank=%d auction=%s turn=%q coup=%s played=%d shoe=%d voids=%v",
		s.Phase, s.Deadline, s.Seats, s.Banker, s.Bank, auction, s.TurnPlayerID, coup, s.CoupsPlayed, s.ShoeNumber, s.PendingVoids)
}
