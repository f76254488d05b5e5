package chemindefer

import (
	"fmt"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/table-svc/game"
)

// The bank: its offer, auction, acceptance, pass and loss; seats and the
// gallery; closing the table.

func (a *applier) join(c Join) error {
	s, p := a.s, c.PlayerID
	if s.SeatOf(p) != nil {
		return game.Refuse(game.AlreadyExists, ReasonAlreadySeated, "player %q already has a seat", p)
	}
	if int32(len(s.Seats)) >= s.Rules.MaxSeats {
		return game.Refuse(game.ResourceExhausted, ReasonTableFull, "all %d seats are taken", s.Rules.MaxSeats)
	}
	fromGallery := s.InGallery(p)
	if fromGallery {
		if s.HasBet(p) {
			return game.Refuse(game.FailedPrecondition, ReasonWrongState, "player %q has a bet in the coup in play", p)
		}
		a.leaveOrder(p)
		s.Gallery = removeString(s.Gallery, p)
	}
	s.NextSeat++
	s.Seats = append(s.Seats, Seat{Number: s.NextSeat, PlayerID: p, Since: a.now()})
	a.Emit("", &eventsv1.PlayerSeated{PlayerId: p, SeatNumber: s.NextSeat})
	if fromGallery && s.Phase == PhaseBetting {
		// He may have been the last to bet. Seated first: a round that
		// opens again orders him among the seats (CF-BET-ORDER).
		a.closeBetting()
	}
	if s.Phase == PhaseWaiting && len(s.Seats) >= 2 {
		a.offerBank("", c.Lot)
	}
	return nil
}

// offerBank offers the bank to the next seat after `after` in turn
// (CF-PASS and CF-LOSE: offered in turn). With after "" it chooses the
// first banker as the house rule first_banker says (CF-FIRST-BANKER):
// seat 1 (acceptance), the seat lot (drawn by the shell), or an auction.
func (a *applier) offerBank(after string, lot int) {
	s := a.s
	if a.tableAbandoned() {
		return
	}
	s.Phase = PhaseOffering
	s.Offers++
	s.OpenOffer, s.OpenOfferFrom = 0, ""
	switch {
	case after != "":
		s.OfferedID = s.Around(after)[0]
	case s.Rules.FirstBanker == FirstBankerLot:
		// Source: RULES.md CF-FIRST-BANKER (a) by lot.
		if lot < 0 || lot >= len(s.Seats) {
			lot = 0
		}
		s.OfferedID = s.Seats[lot].PlayerID
	case s.Rules.FirstBanker == FirstBankerAuction:
		// Source: RULES.md CF-FIRST-BANKER (b) by auction.
		a.openAuction()
		return
	default:
		// Source: RULES.md CF-FIRST-BANKER (c) by acceptance, from seat 1.
		s.OfferedID = s.Seats[0].PlayerID
	}
	a.Emit("", &eventsv1.BankOffered{PlayerId: s.OfferedID})
}

// offerOpen auctions a passed bank at the bank just held: any seated
// player but the passer may take it (CF-PASS, pass_mode auction).
func (a *applier) offerOpen(passer string, amount int64) {
	s := a.s
	if a.tableAbandoned() {
		return
	}
	s.Phase, s.OfferedID = PhaseOffering, ""
	s.Offers++
	s.OpenOffer, s.OpenOfferFrom = amount, passer
	a.Emit("", &eventsv1.BankOffered{Amount: amount})
}

// tableAbandoned counts one more offer of the bank; when the table has
// offered it abandon_after_offers times in a row with no taker, it closes
// the table instead and reports true.
func (a *applier) tableAbandoned() bool {
	s := a.s
	s.Untaken++
	limit := int(s.Rules.AbandonAfter)
	if limit == 0 {
		limit = defaultAbandonAfter // tables stored before the house rule
	}
	if s.Untaken <= limit {
		return false
	}
	a.closeTable(fmt.Sprintf("abandoned: the bank was offered %d times in a row with no taker", limit), "", true)
	return true
}

// closeTable closes the table between coups: the bank, the bids and the
// open coup's (empty) betting are given up, their holds released; seat
// time is billed; the table is read-only from now on.
func (a *applier) closeTable(reason, by string, automatic bool) {
	s := a.s
	if s.BankHoldID != "" {
		s.PendingVoids = append(s.PendingVoids, s.BankHoldID)
	}
	for _, b := range s.Bids {
		s.PendingVoids = append(s.PendingVoids, b.HoldID)
	}
	for i := range s.Seats {
		a.billSeat(&s.Seats[i])
	}
	s.BankerID, s.Bank, s.BankHoldID, s.OfferedID = "", 0, "", ""
	s.OpenOffer, s.OpenOfferFrom, s.Bids, s.AuctionPassed = 0, "", nil, nil
	s.Coup, s.BancoSuivi = nil, ""
	s.Phase = PhaseClosed
	s.ShoeToClose = true // its reveal becomes public (SHOE-RESHUFFLE's close)
	a.Emit("", &eventsv1.TableClosed{Reason: reason, Abandoned: automatic, By: by})
}

// openAuction starts an auction of the first bank (CF-FIRST-BANKER).
func (a *applier) openAuction() {
	s := a.s
	if a.tableAbandoned() {
		return
	}
	s.Phase, s.OfferedID = PhaseAuction, ""
	s.Bids, s.AuctionPassed = nil, nil
	s.Auctions++
	a.Emit("", &eventsv1.BankAuctionOpened{Round: int32(s.Auctions)})
}

// closeAuction gives the bank to the highest bid, whose hold becomes the
// bank's; with no bid the auction opens again.
func (a *applier) closeAuction() {
	s := a.s
	if len(s.Bids) == 0 {
		a.openAuction()
		return
	}
	win := s.Bids[len(s.Bids)-1]
	s.Bids, s.AuctionPassed = nil, nil
	a.takeBank(win.PlayerID, win.Amount, win.HoldID)
}

// takeBank makes player the banker with a bank escrowed by hold, and opens
// the betting of his first coup.
func (a *applier) takeBank(player string, amount int64, hold string) {
	s := a.s
	s.BankerID, s.Bank, s.BankHoldID, s.OfferedID = player, amount, hold, ""
	s.OpenOffer, s.OpenOfferFrom = 0, ""
	s.BancoSuivi = "" // banco suivi is against the banker who won it
	s.BankerCoups, s.Untaken = 0, 0
	a.Emit("", &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_ACCEPTED, BankerPlayerId: player, Bank: amount})
	s.Coup = a.newCoup()
	s.Phase = PhaseBetting
}

func (a *applier) acceptBank(c AcceptBank) error {
	s, p := a.s, c.PlayerID
	if err := a.wantPhase(PhaseOffering); err != nil {
		return err
	}
	if c.Amount <= 0 {
		return game.Refuse(game.InvalidArgument, ReasonInvalidAmount, "amount must be > 0")
	}
	if s.OpenOffer > 0 {
		// Source: RULES.md CF-PASS: auctioned to whoever puts up a bank equal to the one just held.
		if s.SeatOf(p) == nil || p == s.OpenOfferFrom {
			return game.Refuse(game.FailedPrecondition, ReasonNotYourTurn, "the passed bank is open to the other seated players")
		}
		if c.Amount != s.OpenOffer {
			return game.Refuse(game.InvalidArgument, ReasonInvalidAmount, "put up exactly the bank just held, %d", s.OpenOffer)
		}
	} else if s.OfferedID != p {
		return game.Refuse(game.FailedPrecondition, ReasonNotYourTurn, "the bank is offered to %q", s.OfferedID)
	}
	if c.Amount < s.Rules.MinimumBank {
		// Source: RULES.md CF-BANK-SIZE (casinos set a minimum bank)
		return game.Refuse(game.FailedPrecondition, ReasonBankBelowMinimum, "bank %d is below the minimum %d", c.Amount, s.Rules.MinimumBank)
	}
	if c.HoldID == "" {
		a.Hold = &game.Hold{PlayerID: p, Amount: c.Amount, Bank: true}
		return nil
	}
	a.takeBank(p, c.Amount, c.HoldID)
	return nil
}

func (a *applier) declineBank(c DeclineBank) error {
	s := a.s
	if s.Phase == PhaseAuction {
		return a.passAuction(c.PlayerID)
	}
	if err := a.wantPhase(PhaseOffering); err != nil {
		return err
	}
	if s.OpenOffer > 0 {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the passed bank is open to every seated player; there is no turn to decline")
	}
	if s.OfferedID != c.PlayerID {
		return game.Refuse(game.FailedPrecondition, ReasonNotYourTurn, "the bank is offered to %q", s.OfferedID)
	}
	a.offerBank(c.PlayerID, 0)
	return nil
}

func (a *applier) bidBank(c BidBank) error {
	s, p := a.s, c.PlayerID
	if err := a.wantPhase(PhaseAuction); err != nil {
		return err
	}
	if s.SeatOf(p) == nil {
		return game.Refuse(game.FailedPrecondition, ReasonNotSeated, "player %q has no seat", p)
	}
	if c.Amount <= 0 {
		return game.Refuse(game.InvalidArgument, ReasonInvalidAmount, "amount must be > 0")
	}
	if c.Amount < s.Rules.MinimumBank {
		return game.Refuse(game.FailedPrecondition, ReasonBankBelowMinimum, "bid %d is below the minimum bank %d", c.Amount, s.Rules.MinimumBank)
	}
	if n := len(s.Bids); n > 0 && c.Amount <= s.Bids[n-1].Amount {
		// Source: RULES.md CF-FIRST-BANKER: the highest bank offered wins.
		return game.Refuse(game.FailedPrecondition, ReasonBidTooLow, "bid %d is not above the highest bid %d", c.Amount, s.Bids[n-1].Amount)
	}
	if c.HoldID == "" {
		a.Hold = &game.Hold{PlayerID: p, Amount: c.Amount, Bank: true}
		return nil
	}
	if n := len(s.Bids); n > 0 {
		s.PendingVoids = append(s.PendingVoids, s.Bids[n-1].HoldID) // the outbid bid is released
	}
	s.Bids = append(s.Bids, Bet{PlayerID: p, Amount: c.Amount, HoldID: c.HoldID})
	s.AuctionPassed = removeString(s.AuctionPassed, p)
	a.Emit("", &eventsv1.BankBid{PlayerId: p, Amount: c.Amount})
	a.auctionDone()
	return nil
}

// passAuction records that player will not bid.
func (a *applier) passAuction(player string) error {
	s := a.s
	if s.SeatOf(player) == nil {
		return game.Refuse(game.FailedPrecondition, ReasonNotSeated, "player %q has no seat", player)
	}
	if n := len(s.Bids); n > 0 && s.Bids[n-1].PlayerID == player {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the highest bidder may not withdraw")
	}
	s.AuctionPassed = append(removeString(s.AuctionPassed, player), player)
	a.Emit("", &eventsv1.BankBid{PlayerId: player})
	a.auctionDone()
	return nil
}

// auctionDone closes the auction once every seated player but the highest
// bidder has said he will not bid; with nobody bidding, a new auction.
func (a *applier) auctionDone() {
	s := a.s
	high := ""
	if n := len(s.Bids); n > 0 {
		high = s.Bids[n-1].PlayerID
	}
	for _, st := range s.Seats {
		if st.PlayerID != high && !contains(s.AuctionPassed, st.PlayerID) {
			return
		}
	}
	a.closeAuction()
}

func (a *applier) passBankCmd(c PassBank) error {
	s := a.s
	if s.BankerID != c.PlayerID {
		return game.Refuse(game.FailedPrecondition, ReasonNotBanker, "only the banker may pass the bank")
	}
	if s.Phase != PhaseBetting || len(s.Coup.Bets) > 0 {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the bank may be passed only between coups, before any bet")
	}
	a.passBank()
	return nil
}

// passBank releases the banker's bank and offers it in turn from the next
// seat (CF-PASS). The caller has checked that no bet is placed.
func (a *applier) passBank() {
	s := a.s
	prev, bank := s.BankerID, s.Bank
	s.PendingVoids = append(s.PendingVoids, s.BankHoldID)
	a.Emit("", &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_PASSED, PreviousBankerPlayerId: prev})
	s.BankerID, s.Bank, s.BankHoldID, s.Coup = "", 0, "", nil
	if s.Rules.PassMode == PassModeAuction && len(s.Seats) > 1 {
		a.offerOpen(prev, bank)
		return
	}
	a.offerBank(prev, 0)
}

func (a *applier) leave(c Leave) error {
	s, p := a.s, c.PlayerID
	if s.HasBet(p) {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "player %q has a bet in the coup in play; leave after its settlement", p)
	}
	if s.InGallery(p) {
		a.leaveOrder(p)
		s.Gallery = removeString(s.Gallery, p)
		a.Emit("", &eventsv1.PlayerLeft{PlayerId: p})
	} else if err := a.leaveSeat(p); err != nil {
		return err
	}
	if s.BancoSuivi == p {
		s.BancoSuivi = "" // banco suivi is for a punter at the table
	}
	if s.Phase == PhaseBetting {
		a.closeBetting()
	}
	return nil
}

// leaveSeat takes player out of his seat (Leave, and a seated player
// joining the gallery). The banker may leave only before any bet (he
// passes the bank, CF-PASS), the highest bidder not during the auction,
// nobody when the coup in play would be left without two seated players.
// When fewer than two stay seated the game stops: the bank, the bids and
// every bet are released.
func (a *applier) leaveSeat(p string) error {
	s := a.s
	st := s.SeatOf(p)
	if st == nil {
		return game.Refuse(game.FailedPrecondition, ReasonNotSeated, "player %q has no seat", p)
	}
	if s.HasBet(p) {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "player %q has a bet in the coup in play; leave after its settlement", p)
	}
	if n := len(s.Bids); s.Phase == PhaseAuction && n > 0 && s.Bids[n-1].PlayerID == p {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the highest bidder may not leave the auction")
	}
	inPlay := s.Phase == PhaseDealing || s.Phase == PhaseDecision || s.Phase == PhaseSettling || s.Phase == PhaseRaise
	if inPlay && len(s.Seats) <= 2 {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the table needs two seated players until the coup in play is settled")
	}
	if p == s.BankerID {
		if s.Phase != PhaseBetting || len(s.Coup.Bets) > 0 {
			// Source: RULES.md CF-BANK-NO-WITHDRAW: not while bets are against his bank.
			return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the banker may leave only between coups, before any bet")
		}
		a.passBank() // Source: RULES.md CF-PASS: a banker may pass at any time between coups.
	}
	if s.Phase == PhaseOffering && s.OfferedID == p {
		a.offerBank(p, 0)
	}
	s.AuctionPassed = removeString(s.AuctionPassed, p)
	a.leaveOrder(p)
	a.billSeat(st) // Source: RULES.md CF-BANK-WINS house rule hourly_fee
	number := st.Number
	for i := range s.Seats {
		if s.Seats[i].PlayerID == p {
			s.Seats = append(s.Seats[:i:i], s.Seats[i+1:]...)
			break
		}
	}
	a.Emit("", &eventsv1.PlayerLeft{PlayerId: p, SeatNumber: number})
	if len(s.Seats) >= 2 {
		if s.Phase == PhaseAuction {
			a.auctionDone()
		}
		return nil
	}
	// Nobody to play against: the bank goes back to its banker.
	if s.BankerID != "" {
		s.PendingVoids = append(s.PendingVoids, s.BankHoldID)
		a.Emit("", &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_PASSED, PreviousBankerPlayerId: s.BankerID})
		s.BankerID, s.Bank, s.BankHoldID = "", 0, ""
	}
	if n := len(s.Bids); n > 0 {
		s.PendingVoids = append(s.PendingVoids, s.Bids[n-1].HoldID)
	}
	if s.Coup != nil {
		// The coup is not played: every bet (the gallery's too) is
		// returned, and the coup ends voided.
		for _, b := range s.Coup.Bets {
			s.PendingVoids = append(s.PendingVoids, b.HoldID)
		}
		if len(s.Coup.Bets) > 0 {
			s.Coup.Voided, s.Coup.VoidReason = true, "the game stopped: fewer than two seated players"
			a.Emit(s.Coup.ID, &eventsv1.CoupVoided{Reason: s.Coup.VoidReason, By: serviceName, ByRole: serviceRole})
			s.LastCoup = s.Coup
		}
	}
	s.Phase, s.Coup, s.OfferedID, s.OpenOffer, s.Bids = PhaseWaiting, nil, "", 0, nil
	return nil
}

// The table service's own name and role, for what the table does by
// itself (trust.Table, auth.RoleService).
const (
	serviceName = "table-svc"
	serviceRole = "service"
)

func (a *applier) joinGallery(c JoinGallery) error {
	s, p := a.s, c.PlayerID
	if s.InGallery(p) {
		return game.Refuse(game.AlreadyExists, ReasonAlreadySeated, "player %q is already in the gallery", p)
	}
	if s.SeatOf(p) != nil {
		if p == s.BankerID || s.OfferedID == p {
			return game.Refuse(game.FailedPrecondition, ReasonWrongState, "player %q is in play; leave the seat between coups", p)
		}
		if err := a.leaveSeat(p); err != nil {
			return err
		}
	}
	s.Gallery = append(s.Gallery, p)
	a.Emit("", &eventsv1.GalleryJoined{PlayerId: p})
	if cp := s.Coup; cp != nil && s.Phase == PhaseBetting {
		// Source: RULES.md CF-GALLERY: the gallery bets after the seated players.
		cp.Order = append(cp.Order, p)
	}
	return nil
}

func (a *applier) closeCmd(c Close) error {
	s := a.s
	switch {
	case s.Phase == PhaseWaiting, s.Phase == PhaseOffering, s.Phase == PhaseAuction:
	case s.Phase == PhaseBetting && len(s.Coup.Bets) == 0 && s.Coup.SuiviAsked == "":
	default:
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "a table closes between coups only (it is %s, with bets at stake)", s.Phase)
	}
	a.closeTable(c.Reason, c.By, false)
	return nil
}

// KeptBank is the bank a banker keeps into the next coup once a coup is
// settled (CF-BANK-WINS, a stand-off: CF-HOLD), before its first bet,
// when his limits are asked again whether it may stay at stake: the
// banker, his whole bank in minor units, and the command with which he
// gives it up, passing it (CF-PASS: between coups, before any bet). ok is
// false when no banker holds a bank in a coup still without bets.
func KeptBank(s State) (banker string, bank int64, giveUp game.Command, ok bool) {
	if s.BankerID == "" || s.Phase != PhaseBetting || s.Coup == nil || len(s.Coup.Bets) > 0 || s.Bank <= 0 {
		return "", 0, nil, false
	}
	return s.BankerID, s.Bank, PassBank{PlayerID: s.BankerID}, true
}
