package banque

import (
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/table-svc/game"
)

func (a *applier) bid(c Bid) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	au := s.Auction
	if s.Phase != PhaseAuction || au == nil || au.Fee != nil {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no auction of the bank is open")
	}
	if _, ok := s.seat(c.PlayerID); !ok {
		return game.Refuse(game.FailedPrecondition, ReasonNotSeated, "only a seated player bids for the bank")
	}
	if contains(au.Declined, c.PlayerID) {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "player %q declined to bid in this auction", c.PlayerID)
	}
	switch {
	case c.Amount < 0 || c.Amount > game.MaxAmount:
		return game.Refuse(game.InvalidArgument, ReasonInvalidAmount, "a bid must be 1..2^50 (0 declines), got %d", c.Amount)
	case c.Amount == 0:
		if au.HighPlayerID == c.PlayerID {
			return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the highest bidder cannot withdraw his bid")
		}
		au.Declined = append(au.Declined, c.PlayerID)
		a.Emit("", &eventsv1.BankBid{PlayerId: c.PlayerID})
		a.auctionMaybeOver()
		return nil
	case c.Amount < s.Rules.MinimumBank:
		return game.Refuse(game.InvalidArgument, ReasonBankBelowMinimum, "the minimum bank is %d, bid %d", s.Rules.MinimumBank, c.Amount)
	case c.Amount <= au.HighBid:
		// Source: RULES.md BQ-BANK (auctioned to the highest bidder)
		return game.Refuse(game.FailedPrecondition, ReasonBidTooLow, "the highest bid is %d, bid %d", au.HighBid, c.Amount)
	}
	if c.HoldID == "" {
		a.Hold = &game.Hold{PlayerID: c.PlayerID, Amount: c.Amount, Bank: true}
		return nil
	}
	if au.HighHoldID != "" {
		s.PendingVoids = append(s.PendingVoids, au.HighHoldID) // outbid: released at once
	}
	au.HighPlayerID, au.HighBid, au.HighHoldID = c.PlayerID, c.Amount, c.HoldID
	if au.ID == "" {
		au.ID = a.in.NewID
		s.Deadline = a.in.After(s.Rules.AuctionTimeLimitMS)
	}
	a.Emit("", &eventsv1.BankBid{PlayerId: c.PlayerID, Amount: c.Amount})
	a.auctionMaybeOver()
	return nil
}

// auctionMaybeOver closes the auction when every seated player but the
// highest bidder declined; with no bid and everyone declined, it starts
// again.
func (a *applier) auctionMaybeOver() {
	s := a.s
	au := s.Auction
	for _, st := range s.Seats {
		if st.PlayerID != au.HighPlayerID && !contains(au.Declined, st.PlayerID) {
			return
		}
	}
	if au.HighPlayerID != "" {
		a.closeAuction()
		return
	}
	if len(s.Seats) > 0 {
		a.openAuction() // nobody will bid: ask again
	}
}

// closeAuction gives the bank to the highest bid once its fee is paid.
func (a *applier) closeAuction() {
	s := a.s
	au := s.Auction
	// Source: RULES.md BQ-BANK (the highest bidder pays the house 2.5% of the bid)
	au.Fee = &FeeDue{RequestID: au.ID + "/fee", PlayerID: au.HighPlayerID, Bid: au.HighBid, HoldID: au.HighHoldID}
	s.Deadline = time.Time{}
}

func (a *applier) openAuction() {
	s := a.s
	// Source: RULES.md BQ-BANK (on loss or pass the bank is auctioned again)
	s.AuctionSeq++
	s.Auction = &Auction{Round: s.AuctionSeq}
	s.Phase, s.Deadline, s.TurnPlayerID, s.Coup = PhaseAuction, time.Time{}, "", nil
	a.Emit("", &eventsv1.BankAuctionOpened{Round: s.AuctionSeq})
}

func (a *applier) feeCharged(c FeeCharged) error {
	s := a.s
	if s.Auction == nil || s.Auction.Fee == nil {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no auction fee is due")
	}
	if c.Fee < 0 {
		return game.Refuse(game.InvalidArgument, ReasonInvalidAmount, "fee %d", c.Fee)
	}
	f := s.Auction.Fee
	// Source: RULES.md BQ-BANK (the highest bid becomes the bank, held)
	s.Banker, s.Bank, s.BankHoldID, s.Auction = f.PlayerID, f.Bid, f.HoldID, nil
	s.FeesCharged += c.Fee
	a.Emit("", &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_ACCEPTED, BankerPlayerId: f.PlayerID, Bank: f.Bid})
	a.openBetting()
	return nil
}

func (a *applier) feeRefused(FeeRefused) error {
	s := a.s
	if s.Auction == nil || s.Auction.Fee == nil {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no auction fee is due")
	}
	s.PendingVoids = append(s.PendingVoids, s.Auction.Fee.HoldID)
	a.openAuction()
	return nil
}

func (a *applier) passBank(c PassBank) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	if s.Rules.HouseBank || s.Banker != c.PlayerID || s.Banker == "" {
		return game.Refuse(game.PermissionDenied, ReasonNotBanker, "player %q is not the banker", c.PlayerID)
	}
	if s.Phase != PhaseBetting || (s.Coup != nil && len(s.Coup.Bets) > 0) {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the bank is passed between coups, before any bet")
	}
	// Source: RULES.md BQ-BANK (he takes nothing out until he passes; then it is auctioned again)
	s.PendingVoids = append(s.PendingVoids, s.BankHoldID)
	a.Emit("", &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_PASSED, PreviousBankerPlayerId: s.Banker, Bank: s.Bank})
	s.Banker, s.Bank, s.BankHoldID = "", 0, ""
	a.openAuction()
	return nil
}

// KeptBank is the bank a player banker keeps into the next coup once a
// coup is settled (BQ-BANK: he keeps it until it is exhausted or he
// passes it), before its first bet, when his limits are asked again
// whether it may stay at stake: the banker, his bank in minor units, and
// the command with which he gives it up, passing it (it is auctioned
// again, BQ-BANK). ok is false with a house bank, in an auction, or once
// a bet is against the bank.
func KeptBank(s State) (banker string, bank int64, giveUp game.Command, ok bool) {
	if s.Banker == "" || s.Phase != PhaseBetting || s.Coup != nil && len(s.Coup.Bets) > 0 || s.Bank <= 0 {
		return "", 0, nil, false
	}
	return s.Banker, s.Bank, PassBank{PlayerID: s.Banker}, true
}
