package oracle

import "fmt"

// Baccarat banque (BQ-*): the banker against two punters' tables, right
// and left, three hands. Where RULES.md leaves a choice, the readings the
// docs/walkthroughs/banque.md states (Baccarat banque).

// BanqueHand is one table's hand as played.
type BanqueHand struct {
	Total   int
	Natural bool
	// Cell is what the hand's player faced (CF-PLAYER-DRAW: draw on 0-4,
	// option on 5, stand on 6-7; NoDecision for a natural or against the
	// banker's natural).
	Cell Cell
	Drew bool
	// Outcome is the hand against the bank, from the bank's side.
	Outcome Outcome
}

// BanquePlay is a banque coup as the rules play it.
type BanquePlay struct {
	Right, Left   BanqueHand
	BankerTotal   int
	BankerNatural bool
	// BankerPlays: the banker had a decision, free on any total (BQ-PLAY);
	// not when his natural ended the coup or both hands had naturals.
	BankerPlays, BankerDrew bool
}

// PlayBanque judges a banque coup from the three hands' cards, each in
// the order dealt (BQ-HANDS, BQ-PLAY):
//
//   - the banker's natural ends the coup: no third card anywhere, both
//     hands compared with his two cards;
//   - a hand's natural takes no card and is settled against the bank's
//     first two cards;
//   - a hand without a natural is played by the chemin de fer player's
//     rules (draw on 0-4, option on 5, stand on 6-7);
//   - the banker then draws or stands freely, unless both hands had
//     naturals (then he does not play);
//   - each other hand is compared with the banker's final total.
func PlayBanque(right, left, banker []string) (BanquePlay, error) {
	var p BanquePlay
	for _, h := range [][]string{right, left, banker} {
		if len(h) < 2 || len(h) > 3 {
			return p, fmt.Errorf("oracle: banque hands of %d, %d and %d cards: a hand has two or three (HAND-SIZE)", len(right), len(left), len(banker))
		}
	}
	b2, err := Total(banker[:2])
	if err != nil {
		return p, err
	}
	if p.BankerTotal, err = Total(banker); err != nil {
		return p, err
	}
	p.BankerNatural, p.BankerDrew = b2 >= 8, len(banker) == 3
	hands := []*BanqueHand{&p.Right, &p.Left}
	both := true
	for i, cards := range [][]string{right, left} {
		h := hands[i]
		h2, err := Total(cards[:2])
		if err != nil {
			return p, err
		}
		if h.Total, err = Total(cards); err != nil {
			return p, err
		}
		h.Natural, h.Drew = h2 >= 8, len(cards) == 3
		both = both && h.Natural
		if h.Natural || p.BankerNatural {
			if h.Drew {
				return p, fmt.Errorf("oracle: %v against the bank's %v: a natural ends that hand's play, yet it drew (BQ-PLAY)", cards, banker[:2])
			}
			h.Outcome = compare(h2, b2)
			continue
		}
		h.Cell = PlayerCell(h2)
		if err := follows("hand", h.Cell, h2, h.Drew); err != nil {
			return p, fmt.Errorf("%v: %w (BQ-PLAY, CF-PLAYER-DRAW)", cards, err)
		}
	}
	p.BankerPlays = !p.BankerNatural && !both
	if p.BankerDrew && !p.BankerPlays {
		return p, fmt.Errorf("oracle: the bank %v drew with nothing to play for (a natural of his, or both hands')", banker)
	}
	for _, h := range hands {
		if !h.Natural && !p.BankerNatural {
			h.Outcome = compare(h.Total, p.BankerTotal)
		}
	}
	return p, nil
}

// The banque sides, as BanqueSide names them without their prefix.
const (
	SideRight  = "right"
	SideLeft   = "left"
	SideCheval = "cheval"
)

// BanqueBet is one bet of a banque coup.
type BanqueBet struct {
	Side   string
	Amount int64
}

// BanqueSettlement is the money of a banque coup.
type BanqueSettlement struct {
	// Bets: per bet, what the punter wins (+) or loses (-).
	Bets []int64
	// Net is what the bank gains before commission, Commission the
	// house's share of a positive net, NewBank the bank after both.
	Net, Commission, NewBank int64
}

// SettleBanque settles a banque coup's bets against the bank, even
// money: a bet on a table follows that table's hand; an à cheval bet
// loses only if the bank beats both hands, wins only if it loses to
// both, and is returned otherwise (BQ-CHEVAL). The bets together (an à
// cheval bet once) are at most the bank. commissionBP (0 by default) is
// taken on the banker's net winnings of the coup, rounded by r.
func SettleBanque(bank int64, p BanquePlay, bets []BanqueBet, commissionBP int64, r Rounding) (BanqueSettlement, error) {
	st := BanqueSettlement{Bets: make([]int64, len(bets))}
	var covered int64
	for i, b := range bets {
		if b.Amount <= 0 {
			return st, fmt.Errorf("oracle: bet %d is %d", i, b.Amount)
		}
		covered += b.Amount
		var o Outcome
		switch b.Side {
		case SideRight:
			o = p.Right.Outcome
		case SideLeft:
			o = p.Left.Outcome
		case SideCheval:
			o = StandOff
			if p.Right.Outcome == p.Left.Outcome && p.Right.Outcome != StandOff {
				o = p.Right.Outcome
			}
		default:
			return st, fmt.Errorf("oracle: no banque side %q", b.Side)
		}
		switch o {
		case BankWins:
			st.Bets[i] = -b.Amount
		case BankLoses:
			st.Bets[i] = b.Amount
		}
		st.Net -= st.Bets[i]
	}
	if covered > bank {
		return st, fmt.Errorf("oracle: bets of %d against a bank of %d", covered, bank)
	}
	if st.Net > 0 {
		st.Commission = Share(st.Net, commissionBP, r)
	}
	st.NewBank = bank + st.Net - st.Commission
	return st, nil
}

// AuctionFee is what the winner of a banque bank's auction pays the
// house: 2.5% of his bid (BQ-BANK), rounded by the table's rounding.
func AuctionFee(bid int64, r Rounding) int64 { return Share(bid, 250, r) }
