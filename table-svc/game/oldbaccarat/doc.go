// Package oldbaccarat is the pure game core of the old baccarat with aces
// at eleven (RULES.md OLD-*, source text 002): a player banks against the
// other seated players, the punters, each of whom stakes against the bank
// and plays his own hand.
//
// It follows the contract of package game: Apply(state, input) returns the
// new state and its events or a *game.Error (nothing changed); Pending
// names the effect due; Deadline is when a Tick is due. No I/O, no clock,
// no randomness: the input brings the time, the ids, the cards and the
// wallet's answers.
//
// Beside the contract's part that says who sees which card (Sees,
// Hidden, Shown, HolderOf, FaceDown: view.go), the package says whom the
// shell may stand up when idle (Seated, Standable, GiveUpBank: idle.go)
// and when a banker's limits are asked again after a settlement
// (KeptBank, bank.go).
//
// # Table cycle
//
//	WAITING (fewer than 3 seated) --3rd Join--> AUCTION
//	AUCTION --Bid...; Tick or all acted--> STAKING (a banker holds the bank)
//	STAKING --Stake/PassStake...; Tick or all acted--> DEALING
//	DEALING --[MoveTopCards]--> cards... --> DECISION <--Decide--> DEALING
//	        --> SETTLING --Settled--> STAKING, or OFFERING (a punter's baccarat)
//	OFFERING --Bid (takes the bank) / PassBank / Tick--> STAKING
//
// A coup is created by its first stake and ends settled or voided. Void
// (staff) returns every stake of the coup in play before its settlement;
// Close (staff) between coups returns the bank and any bank bid.
//
// # Effects the shell carries out (Pending)
//
//   - game.VoidHolds: release holds (losing bids, a voided coup's stakes,
//     a bank given up); answered by game.HoldsVoided.
//   - game.CloseShoe, game.NewShoe: as for every core; answered by
//     game.ShoeClosed, game.ShoeOpened.
//   - MoveToBottom: move N cards from the top of the shoe to its bottom
//     (OLD-CUT), request id "<coup_id>/move"; answered by MovedToBottom.
//   - game.DealCard: the next card, Hand "banker" or "punter:<player id>",
//     request id "<coup_id>/card/<n>" (n counts the coup's cards from 1);
//     answered by game.CardDealt.
//   - Settle: the coup's money at the wallet, keyed by the coup id;
//     answered by Settled.
//
// game.Hold is asked synchronously by Bid and Stake without a hold id.
//
// # Readings of the text (RULES.md "Readings each table must state")
//
//   - Players (OLD-DECKS "not fewer than three"): three players including
//     the banker, so a coup needs at least two punters who staked
//     (rules.OldMinPunters); a staking that closes with fewer voids the
//     coup and returns its stakes. At most 16 punters (rules.OldMaxPunters):
//     MaxSeats is 3..17. The shoe has two decks (Decks).
//   - The bank (OLD-BANKER): an auction of bids, each escrowed by a hold,
//     opened once three players are seated; it closes when every seated
//     player has bid or passed, or when the window started by the first
//     bid runs out. The highest bid is the bank (a bid must be above the
//     highest so far, at least MinBank); a player may raise his own bid
//     (his earlier hold is released). If everyone passes, a new round
//     opens. The banker keeps the bank from coup to coup (its hold stays
//     open, resized by each settlement) until a punter's baccarat takes it,
//     he leaves his seat between coups, or the bank falls below what one
//     minimum stake needs (2 * MinStake), when it is released and a new
//     auction opens.
//   - OLD-STAKE: the double is a cover that must be present. A stake is
//     refused (BET_EXCEEDS_BANK) when the bank would hold less than twice
//     the sum of the coup's stakes. Stakes are paid even money, never
//     double (rules.SettleOld).
//   - Seats: seat numbers run clockwise; the punters of a coup are those
//     who staked, ordered clockwise from the banker's left (OLD-DEAL: seat
//     0 of rules.OldCoup is the banker's left neighbour). A punter who
//     leaves his seat keeps his stake and hand in the coup.
//   - OLD-CUT: the shoe service shuffles and makes the cut when it opens a
//     shoe. The banker's right to move top cards to the bottom after the
//     cut is offered once per shoe, before the first coup dealt from it:
//     MoveTopCards{N}, 0..MaxMoveTop (0: he moves none), announced to the
//     table (TopCardsMoved). If his time (CutMS) runs out he moves none.
//     MaxMoveTop 0 switches the step off.
//   - OLD-DRAW "less than 4": on the total's last digit, as the rules
//     engine reads it (rules.NextStepOld): two cards always total 4 or
//     more points, so ranks 0..3 (10-13, 20-22) may draw; a baccarat may
//     draw. A player whose DecisionMS runs out draws (the default) or
//     stands (house rule StandOnTimeout).
//   - OLD-NATURAL: a two-card 8, 9, 18 or 19 anywhere ends the deal;
//     nobody draws. The banker's 9 or 19 takes every stake.
//   - OLD-SETTLE: as rules.SettleOld. The three-way pooled split applies
//     when no natural was shown and exactly two punters tie the banker:
//     those two stakes and the banker's double of each are pooled and each
//     of the three receives a third, the sum of the two stakes (002's
//     worked example). With one, three or more tied punters, every tie
//     goes to the banker.
//   - OLD-BACCARAT: a hand of 10, 20 or 30 points after the draw. When
//     several punters show it, the first in draw order (the banker's right,
//     then his left, outwards) takes the bank. The banker's own baccarat
//     changes nothing (he keeps the bank). The coup is settled first with
//     the old bank; then the bank is offered (OFFERING) to that punter if
//     he is still seated: he takes it with a Bid of his own bank (at least
//     MinBank; the old banker's hold is released), or passes (PassBank, or
//     BankOfferMS runs out), and the old banker keeps it. "He keeps it as
//     long as baccarat keeps coming to him" is read with the text's last
//     sentence: a banker gives up the bank only to a punter's baccarat.
//   - The cut card (SHOE-CUT-CARD): the coup in which it comes out is the
//     shoe's last; the next shoe is opened before the next coup's first
//     card (a voided coup's cut card counts too).
//   - Hidden cards: every card is dealt face down to its holder; the state
//     names each hand's holder (Hand.PlayerID, Coup.BankerID) so that the
//     shell shows a punter his own hand and the banker his. CardDealt
//     events carry the card and the hand's points for the holder; the shell
//     redacts them for the others. NaturalShown is emitted for the
//     banker's natural (he shows it); every hand is turned in
//     CoupResulted.
package oldbaccarat
