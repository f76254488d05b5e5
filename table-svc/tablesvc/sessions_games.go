package tablesvc

import (
	"slices"

	"github.com/chemmy/chemmy/table-svc/game"
	"github.com/chemmy/chemmy/table-svc/game/banque"
	"github.com/chemmy/chemmy/table-svc/game/chemindefer"
	"github.com/chemmy/chemmy/table-svc/game/oldbaccarat"
	"github.com/chemmy/chemmy/table-svc/game/puntobanco"
)

// The inactivity rules of each game (sessions.go): who is seated, whom
// the game's rules allow to stand up now, and what a banker does first.

// idler is a game core's part of the inactivity limit.
type idler interface {
	// seated are the table's seated players, in seat order.
	seated(t *table) []string
	// standable are the seated players who may be stood up now: none
	// while a coup is dealt, decided or settled; never a player with
	// money in the coup in play, nor a banker with a bet against him.
	standable(t *table) []string
	// giveUpBank is the command with which p gives up his bank before he
	// leaves; nil when he holds none or when Leave gives it up itself.
	giveUpBank(t *table, p string) game.Command
}

var _ = []idler{cfCore{}, pbCore{}, banqueCore{}, oldCore{}}

func seatedPlayers(t *table) []string {
	if g, ok := t.core().(idler); ok {
		return g.seated(t)
	}
	return nil
}

func standable(t *table) []string {
	if g, ok := t.core().(idler); ok {
		return g.standable(t)
	}
	return nil
}

func giveUpBank(t *table, p string) game.Command {
	if g, ok := t.core().(idler); ok {
		return g.giveUpBank(t, p)
	}
	return nil
}

// keep are the players of seats for whom skip is false.
func keep[S any](seats []S, id func(S) string, skip func(p string) bool) []string {
	var out []string
	for _, st := range seats {
		if p := id(st); !skip(p) {
			out = append(out, p)
		}
	}
	return out
}

func cfSeat(st chemindefer.Seat) string     { return st.PlayerID }
func pbSeat(st puntobanco.Seat) string      { return st.PlayerID }
func banqueSeat(st banque.Seat) string      { return st.PlayerID }
func oldSeat(st oldbaccarat.Seat) string    { return st.PlayerID }
func never(string) bool                     { return false }
func (cfCore) seated(t *table) []string     { return keep(cfOf(t).Seats, cfSeat, never) }
func (pbCore) seated(t *table) []string     { return keep(pbOf(t).Seats, pbSeat, never) }
func (banqueCore) seated(t *table) []string { return keep(banqueOf(t).Seats, banqueSeat, never) }
func (oldCore) seated(t *table) []string    { return keep(oldOf(t).Seats, oldSeat, never) }

// standable, chemin de fer: between coups and in the betting; the banker
// once no bet (nor banco) is against his bank; not the highest bidder of
// an auction. Leave passes the bank (CF-PASS).
func (cfCore) standable(t *table) []string {
	switch cfOf(t).Phase {
	case chemindefer.PhaseDealing, chemindefer.PhaseDecision, chemindefer.PhaseSettling, chemindefer.PhaseRaise, chemindefer.PhaseClosed:
		return nil
	}
	bets := cfOf(t).Coup != nil && (len(cfOf(t).Coup.Bets) > 0 || cfOf(t).Coup.Banco)
	return keep(cfOf(t).Seats, cfSeat, func(p string) bool {
		n := len(cfOf(t).Bids)
		return cfOf(t).HasBet(p) || p == cfOf(t).BankerID && bets || cfOf(t).Phase == chemindefer.PhaseAuction && n > 0 && cfOf(t).Bids[n-1].PlayerID == p
	})
}

func (cfCore) giveUpBank(*table, string) game.Command { return nil }

// standable, punto banco: in the betting, those without a bet in the
// coup, and during the result's pause. The house banks (PB-BANK).
func (pbCore) standable(t *table) []string {
	pb := pbOf(t)
	if pb.Phase != puntobanco.PhaseBetting && pb.Phase != puntobanco.PhaseResult {
		return nil
	}
	return keep(pb.Seats, pbSeat, func(p string) bool {
		return pb.Coup != nil && slices.ContainsFunc(pb.Coup.Bets, func(b puntobanco.Bet) bool { return b.PlayerID == p })
	})
}

func (pbCore) giveUpBank(*table, string) game.Command { return nil }

// standable, baccarat banque: in the betting, those without a bet in the
// coup, the banker before any bet (he passes the bank first, BQ-BANK);
// in an auction, all but the highest bidder and the winner whose fee is
// due.
func (banqueCore) standable(t *table) []string {
	b := banqueOf(t)
	if b.Phase != banque.PhaseBetting && b.Phase != banque.PhaseAuction {
		return nil
	}
	bets := b.Coup != nil && len(b.Coup.Bets) > 0
	return keep(b.Seats, banqueSeat, func(p string) bool {
		switch {
		case b.Coup != nil && slices.ContainsFunc(b.Coup.Bets, func(bt banque.Bet) bool { return bt.PlayerID == p }):
			return true
		case p == b.Banker:
			return bets || b.Phase != banque.PhaseBetting
		case b.Auction != nil:
			return b.Auction.HighPlayerID == p || b.Auction.Fee != nil && b.Auction.Fee.PlayerID == p
		}
		return false
	})
}

// giveUpBank, baccarat banque: the banker passes the bank, which returns
// to him and is auctioned again (BQ-BANK); then he may leave.
func (banqueCore) giveUpBank(t *table, p string) game.Command {
	if b := banqueOf(t); b.Banker != "" && b.Banker == p {
		return banque.PassBank{PlayerID: p}
	}
	return nil
}

// standable, the old baccarat: while the bank waits for players, is
// offered or auctioned (not a bidder: his bid stands until the auction
// closes), and in the staking those without a stake; the banker only
// before the first stake of a coup (Leave then ends his bank,
// OLD-BACCARAT).
func (oldCore) standable(t *table) []string {
	o := oldOf(t)
	switch o.Phase {
	case oldbaccarat.PhaseWaiting, oldbaccarat.PhaseOffering, oldbaccarat.PhaseStaking, oldbaccarat.PhaseAuction:
	default:
		return nil
	}
	staked := o.Coup != nil && len(o.Coup.Hands) > 0
	return keep(o.Seats, oldSeat, func(p string) bool {
		switch {
		case o.Coup != nil && slices.ContainsFunc(o.Coup.Hands, func(h oldbaccarat.Hand) bool { return h.PlayerID == p }):
			return true
		case p == o.BankerID:
			return staked || o.Phase != oldbaccarat.PhaseStaking
		case o.Auction != nil:
			return slices.ContainsFunc(o.Auction.Bids, func(b oldbaccarat.BankBid) bool { return b.PlayerID == p })
		}
		return false
	})
}

func (oldCore) giveUpBank(*table, string) game.Command { return nil }
