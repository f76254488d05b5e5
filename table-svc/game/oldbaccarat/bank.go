package oldbaccarat

import (
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/table-svc/game"
)

// openAuction opens an auction of the bank when three players are seated,
// else waits for them.
func (a *applier) openAuction() {
	s := a.s
	s.Deadline, s.OfferedTo = time.Time{}, ""
	if len(s.Seats) < MinPlayers {
		s.Phase, s.Auction = PhaseWaiting, nil
		return
	}
	s.AuctionRounds++
	s.Phase, s.Auction = PhaseAuction, &Auction{Round: s.AuctionRounds}
	// Source: RULES.md OLD-BANKER (the largest stake takes the bank: an auction)
	a.Emit("", &eventsv1.BankAuctionOpened{Round: s.AuctionRounds})
}

func (a *applier) bid(c Bid) error {
	s, r := a.s, a.s.Rules
	if err := a.open(); err != nil {
		return err
	}
	if s.Phase != PhaseAuction && s.Phase != PhaseOffering {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the bank is neither auctioned nor offered")
	}
	if _, err := a.seated(c.PlayerID); err != nil {
		return err
	}
	if c.Amount <= 0 {
		return game.Refuse(game.InvalidArgument, ReasonInvalidAmount, "amount must be > 0, got %d", c.Amount)
	}
	if c.Amount < r.MinBank {
		return game.Refuse(game.InvalidArgument, ReasonBankBelowMinimum, "the minimum bank is %d, bid %d", r.MinBank, c.Amount)
	}
	if c.Amount > 1<<50 {
		return game.Refuse(game.InvalidArgument, ReasonInvalidAmount, "a bank of %d is beyond any table", c.Amount)
	}
	if s.Phase == PhaseOffering {
		if c.PlayerID != s.OfferedTo {
			return game.Refuse(game.FailedPrecondition, ReasonNotYourTurn, "the bank is offered to %q", s.OfferedTo)
		}
	} else {
		au := s.Auction
		if contains(au.Passed, c.PlayerID) {
			return game.Refuse(game.FailedPrecondition, ReasonWrongState, "player %q passed in this auction", c.PlayerID)
		}
		if hi := au.highest(); hi >= 0 && c.Amount <= au.Bids[hi].Amount {
			return game.Refuse(game.FailedPrecondition, ReasonBidTooLow, "the highest bid is %d, bid %d", au.Bids[hi].Amount, c.Amount)
		}
	}
	if c.HoldID == "" {
		a.Hold = &game.Hold{PlayerID: c.PlayerID, Amount: c.Amount, Bank: true}
		return nil
	}
	if s.Phase == PhaseOffering {
		// Source: RULES.md OLD-BACCARAT (the punter showing baccarat takes the bank)
		prev := s.BankerID
		if s.BankHoldID != "" {
			s.PendingVoids = append(s.PendingVoids, s.BankHoldID)
		}
		a.setBanker(c.PlayerID, c.Amount, c.HoldID, prev)
		return nil
	}
	au := s.Auction
	for i, b := range au.Bids {
		if b.PlayerID == c.PlayerID {
			s.PendingVoids = append(s.PendingVoids, b.HoldID) // his raise replaces his bid
			au.Bids = append(au.Bids[:i], au.Bids[i+1:]...)
			break
		}
	}
	au.Bids = append(au.Bids, BankBid{PlayerID: c.PlayerID, Amount: c.Amount, HoldID: c.HoldID})
	if s.Deadline.IsZero() {
		s.Deadline = a.in.After(r.AuctionWindowMS)
	}
	a.Emit("", &eventsv1.BankBid{PlayerId: c.PlayerID, Amount: c.Amount})
	a.auctionDone()
	return nil
}

// highest is the index of the highest bid, -1 when none.
func (au *Auction) highest() int {
	hi := -1
	for i, b := range au.Bids {
		if hi < 0 || b.Amount > au.Bids[hi].Amount {
			hi = i
		}
	}
	return hi
}

func (a *applier) passBank(c PassBank) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	if _, err := a.seated(c.PlayerID); err != nil {
		return err
	}
	switch s.Phase {
	case PhaseOffering:
		if c.PlayerID != s.OfferedTo {
			return game.Refuse(game.FailedPrecondition, ReasonNotYourTurn, "the bank is offered to %q", s.OfferedTo)
		}
		a.keepBank()
	case PhaseAuction:
		if contains(s.Auction.Passed, c.PlayerID) {
			return game.Refuse(game.AlreadyExists, ReasonWrongState, "player %q passed already", c.PlayerID)
		}
		s.Auction.Passed = append(s.Auction.Passed, c.PlayerID)
		a.Emit("", &eventsv1.BankBid{PlayerId: c.PlayerID})
		a.auctionDone()
	default:
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the bank is neither auctioned nor offered")
	}
	return nil
}

// auctionDone closes the auction when every seated player has bid or
// passed.
func (a *applier) auctionDone() {
	au := a.s.Auction
	for _, st := range a.s.Seats {
		acted := contains(au.Passed, st.PlayerID)
		for _, b := range au.Bids {
			acted = acted || b.PlayerID == st.PlayerID
		}
		if !acted {
			return
		}
	}
	a.closeAuction()
}

// closeAuction gives the bank to the highest bid and releases the others
// (OLD-BANKER); with no bid, a new round opens.
func (a *applier) closeAuction() {
	s := a.s
	au := s.Auction
	hi := au.highest()
	if hi < 0 {
		a.openAuction()
		return
	}
	for i, b := range au.Bids {
		if i != hi {
			s.PendingVoids = append(s.PendingVoids, b.HoldID)
		}
	}
	w := au.Bids[hi]
	// Source: RULES.md OLD-BANKER (the player willing to put up the largest stake becomes banker)
	a.setBanker(w.PlayerID, w.Amount, w.HoldID, "")
}

func (a *applier) setBanker(playerID string, bank int64, holdID, prev string) {
	s := a.s
	st, _ := s.seat(playerID)
	s.BankerID, s.BankerSeat, s.Bank, s.BankHoldID = playerID, st.Number, bank, holdID
	s.Auction, s.OfferedTo, s.Phase, s.Deadline = nil, "", PhaseStaking, time.Time{}
	a.Emit("", &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_ACCEPTED, BankerPlayerId: playerID,
		PreviousBankerPlayerId: prev, Bank: bank})
}

// keepBank: the offered punter did not take the bank; the banker keeps it.
func (a *applier) keepBank() {
	s := a.s
	s.OfferedTo, s.Phase, s.Deadline = "", PhaseStaking, time.Time{}
	a.Emit("", &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_HELD, BankerPlayerId: s.BankerID,
		PreviousBankerPlayerId: s.BankerID, Bank: s.Bank})
	a.bankCovers()
}

// bankCovers ends a bank that cannot cover one minimum stake twice
// (OLD-STAKE) and opens an auction.
func (a *applier) bankCovers() {
	if a.s.Bank < 2*a.s.Rules.MinStake {
		a.endBank(eventsv1.BankChangeReason_BANK_CHANGE_REASON_LOST)
	}
}

// endBank releases the bank (what is left of its hold) and auctions it.
func (a *applier) endBank(reason eventsv1.BankChangeReason) {
	s := a.s
	if s.Bank > 0 && s.BankHoldID != "" {
		s.PendingVoids = append(s.PendingVoids, s.BankHoldID)
	}
	prev := s.BankerID
	s.BankerID, s.BankerSeat, s.Bank, s.BankHoldID = "", 0, 0, ""
	a.Emit("", &eventsv1.BankChanged{Reason: reason, PreviousBankerPlayerId: prev})
	a.openAuction()
}

// KeptBank is the bank a banker keeps into the next coup once a coup is
// settled, before its first stake, when his limits are asked again
// whether it may stay at stake: the banker, his bank in minor units, and
// the command with which he gives it up. The banker never has to give up
// the bank (OLD-BACCARAT): he gives it up only by leaving his seat, so the
// command is his Leave. ok is false when no banker holds a bank in the
// staking, or once a punter staked.
func KeptBank(s State) (banker string, bank int64, giveUp game.Command, ok bool) {
	if s.BankerID == "" || s.Phase != PhaseStaking || s.Coup != nil && len(s.Coup.Hands) > 0 || s.Bank <= 0 {
		return "", 0, nil, false
	}
	return s.BankerID, s.Bank, Leave{PlayerID: s.BankerID}, true
}
