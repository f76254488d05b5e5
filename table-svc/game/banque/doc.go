// Package banque is the pure game core of a baccarat banque table
// (baccarat à deux tableaux, RULES.md BQ-*): a banker against two
// punters' tables, right and left, three hands dealt from a 3-deck shoe
// (BQ-DECKS, BQ-HANDS).
//
// It follows the contract of package game (and the structure of
// game/puntobanco): Apply(state, input) returns the new state and its
// events, a game.Hold to place first, or a *game.Error (nothing changed);
// Pending names the one effect due, its request ids derived from the
// state; Deadline is when a Tick is due. No I/O, no clock, no randomness.
// Who sees which card (Sees, Hidden, Shown, HolderOf, FaceDown) is in
// view.go; whom the shell may stand up when idle (Seated, Standable,
// GiveUpBank) in idle.go; when a player banker's limits are asked again
// after a settlement (KeptBank) in bank.go.
//
// # Cycle
//
//	AUCTION --Bid...--> (time runs out, or all others decline) --ChargeFee--> BETTING
//	BETTING --PlaceBet/Pass in turn...--> DEALING --CardDealt...--> (DECISION --Decide/Tick-->) ...
//	... --> SETTLING --Settled--> BETTING (the bank held) | AUCTION (exhausted)
//	BETTING (no bet yet) --PassBank--> AUCTION
//
// With Rules.HouseBank there is no auction: the table starts in BETTING
// and returns to it after every coup.
//
// # Effects the shell carries out
//
//   - game.Hold (answer to Bid and PlaceBet without a hold id): wallet
//     PlaceHold of Amount for PlayerID; apply the command again with the
//     hold id.
//   - ChargeFee: wallet ChargeFee{request_id: RequestID, fee_type:
//     FEE_TYPE_BANK_AUCTION, bid: Bid, rounding}; apply FeeCharged{Fee},
//     or FeeRefused on INSUFFICIENT_FUNDS.
//   - game.DealCard (Hand "right", "left" or "banker", request id
//     "<coup_id>/card/<n>"): shoe DealCard; apply game.CardDealt.
//   - Settle: wallet SettleBanque{coup_id, bank_hold_id ("" with a house
//     bank), bets (hold id, amount, side = BanqueSide), right, left,
//     commission_bp, commission_rounding}; apply Settled with the
//     response's results, banker_winnings, commission and new_bank.
//   - game.VoidHolds (outbid bids, a fee refused, a bank exhausted, passed
//     or closed, the bets of a voided coup): wallet VoidHold of each;
//     apply game.HoldsVoided.
//   - game.NewShoe / game.CloseShoe: as in punto banco.
//
// # Choices where the sources leave one
//
//   - Seats (BQ-BETS): a player joins a side, Join{PlayerID, Side right or
//     left}; each side's seats run from the banker outward in the order
//     they were taken (the first to join a side sits nearest the banker);
//     MaxSeatsPerSide each (default 6). No gallery: only seated players
//     bet. The auction's winner keeps his side seat but, while banker,
//     neither bets nor plays a hand.
//   - The bank (BQ-BANK): auctioned by default (HouseBank off). Any seated
//     player bids (at least MinimumBank, default 1000, more than the
//     highest bid); only the highest bid is held, an outbid bid's hold is
//     released at once. The auction's timer (AuctionTimeLimitMS, default
//     30000) starts at its first bid; an auction without a bid waits (a
//     round in which every seated player declined starts again). It closes
//     when the timer runs out or when every seated player but the highest
//     bidder has declined (Bid with Amount 0). The winner pays the 2.5%
//     fee from his available balance (ChargeFee); his bid's hold becomes
//     the bank hold. If the fee cannot be paid his bid is released and the
//     auction starts again.
//   - Bank exhausted (BQ-BANK): when the bank after a coup can no longer
//     cover the minimum bet (below MinBet, 0 included), the rest is
//     returned to the banker and the bank auctioned again. Otherwise he
//     keeps it, won or lost. He may PassBank only between coups: in the
//     betting, before the coup's first bet; the bank (his bid plus his
//     winnings) is then released to him and auctioned again (a new fee).
//   - Betting (BQ-BETS, CF-BET-ORDER): in turn, not in a window. The
//     order alternates the right table's players from the banker's right
//     and the left table's from his left (R1, L1, R2, L2, ...). In his
//     turn a punter bets once (PlaceBet on right, left or cheval) or
//     passes; BetTimeLimitMS (default 30000) runs out as a pass. The
//     betting closes when everyone has had his turn or the bank left
//     uncovered is below MinBet; a round without any bet starts again.
//     Any punter may bet on either table or à cheval, not only his side's.
//   - Cover (BQ-BANK, CF-BET-LIMIT): the bets of a coup total at most the
//     bank (BET_EXCEEDS_BANK). An à cheval bet counts once: it wins only
//     when the bank loses both hands and is then paid once (BQ-CHEVAL), so
//     the bank never pays more than the bets' total, as
//     rules.SettleBanque and the wallet's SettleBanque require. With a
//     house bank the limit is HouseLimit (0: none).
//   - MaxBet (default 0: none) bounds a single bet; MinBet (default 100)
//     is the smallest.
//   - Commission (CommissionBP): default 0 — the house takes its 2.5% at
//     the auction; a table may add one on the banker's net winnings of a
//     coup (taken from the bank by the wallet); never with a house bank.
//   - Hands' players (BQ-PLAY): fixed when the betting closes (Coup
//     RightHolder/LeftHolder; State RightHolder/LeftHolder name the next
//     coup's). The first holder of a side is its player nearest the
//     banker; he keeps the hand until the bank beats it (a stand-off or a
//     void keeps it), then it passes to the next player of that side,
//     round the side. A holder who has left or taken the bank is replaced
//     by the side's player nearest the banker. A holder need not bet. A
//     side with nobody seated is played by the tableau (draw on 5).
//   - Play (BQ-PLAY, rules.NextStepBanque): deal right, left, banker, twice
//     round; naturals shown at once; the right hand plays, then the left,
//     by the chemin de fer player rules (draw 0-4, Decide on 5, stand
//     6-7); then the banker decides once, freely, for both hands
//     (Decide{Hand: banker}). With a house bank the croupier plays the bank
//     by the time-out default below.
//   - Time-outs (DecisionTimeLimitMS, default 30000; RULES.md time limits):
//     a hand's player on 5 draws; the banker does what the chemin de fer
//     tableau (CF-BANKER-DRAW) does against the hand carrying more money
//     (right on equal money, the other hand when that one had a natural),
//     drawing at an option cell. TurnTimedOut's action is "draw",
//     "stand" or "bet_declined".
//   - Leave: refused to the banker, the highest bidder, a punter with a
//     bet in the coup and a hand's holder once the betting closed.
//   - Void (CF-ERROR): a coup with bets, before its result; every bet is
//     returned, the same bank and hands' players go on to a new coup.
//   - Close: between coups only (no bet in the coup, no fee being
//     charged); the highest bid and the bank are returned.
//   - Banco on both tables (BancoBothTables, off by default, auctioned
//     bank only): the punter in turn, before any bet of the coup, bets the
//     whole bank à cheval (whatever max_bet) and the betting closes.
//
// # Events
//
// chemmy.events.v1 payloads, no new message: PlayerSeated, PlayerLeft,
// BankAuctionOpened (round), BankBid (amount 0: declines), BankChanged
// (ACCEPTED when the fee is paid, HELD after a coup, LOST when exhausted,
// PASSED), BetPlaced (spot "right", "left" or "cheval"; uncovered: the
// bank left to cover), BetDeclined, BettingReopened, BettingClosed,
// CardDealt (hand HAND_RIGHT/HAND_LEFT/HAND_BANKER with holder_player_id;
// face up here, the shell redacts), NaturalShown, DrawDecided,
// TurnTimedOut, CoupResulted (hands: the right and left HandResults;
// banker_cards and banker_total; outcome and natural: the à cheval
// reading and the banker's natural), CoupSettled (house_net with a house
// bank), CoupVoided, ShoeChanged, TableClosed. The fee paid is not an
// event of its own: BankChanged ACCEPTED follows it, the fee is
// rules.BanqueAuctionFee of the bank and State.FeesCharged sums them.
package banque
