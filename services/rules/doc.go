// Package rules is the pure rules engine of the baccarat family: card
// values and hand totals, the drawing tableau, the hand state machine of
// one coup, and the settlement of a coup in integer minor units, for chemin
// de fer (coup.go, tableau.go, settle.go), punto banco (puntobanco.go,
// settle_puntobanco.go), baccarat banque (banque.go, settle_banque.go) and
// the old game with aces at eleven (old.go, settle_old.go).
//
// Every rule implemented here carries the ID of its source in
// docs/RULES.md (for example CF-BANKER-DRAW). House rules are never
// hard-coded; they arrive in a [HouseRules] value.
//
// The package must never do I/O, read the clock, or use randomness: every
// function is a deterministic function of its arguments, so the table
// service can replay and audit any coup. Shuffling belongs to the shoe
// service; this package only lists the cards of fresh decks ([NewDecks]).
//
// # Money
//
// This package is the one home of the suite's money: every payout,
// commission, fee, house share and split of a settlement is computed here
// and nowhere else. The wallet (wallet-svc) settles every game and charges
// every fee by calling these functions and moves exactly what they
// return; it computes the settlement from the coup's inputs (the bets, the
// outcome, the house rules; for the old game each punter's result against
// the banker), it does not check numbers computed elsewhere. The table
// cores call the same functions for what they show and bill.
// TestMoneyHasOneHome fails if a share of an amount is computed outside
// this package.
//
// Units. Amounts are int64 minor units of the table's currency (cents,
// chips), never floats. Commission and fee rates are basis points, 1/100
// of a percent: 10000 ([MaxCommissionBP]) is 100%, the default commission
// 500 is 5% ([DefaultCommissionBP]), the banque auction fee 250 is 2.5%
// ([BanqueAuctionFeeBP]). Punto banco prices are N to 1. The hourly fee is
// minor units per seat-hour, charged pro rata by the second.
//
// Rounding. A share that is not a whole minor unit is rounded by a
// [Rounding], the house rule commission_rounding (CF-BANK-WINS): RoundDown
// (the default, and the zero value) drops the fraction, so the payer keeps
// it; RoundHalfUp rounds half a unit and more up; RoundUp rounds any
// fraction up, so the house takes it. One exact 128-bit primitive
// (mulDiv, money.go) computes every share: a commission is
// winnings*bp/10000, an hourly fee fee*seconds/3600, each rounded once.
// Even-money and N to 1 payouts are exact; the no-commission punto banco
// bank win on 6 pays half the stake, rounded down (PB-BANK reading). No
// amount wraps: what would leave int64 is ErrOverflow.
//
// Shapes. A settlement takes the bets in a fixed order and returns, in
// that order, what each bet won (on top of its stake back) or lost, with
// the totals (the banker's or the house's net, the commission) and, for a
// player's bank, the part no bet covered and the new bank:
//
//   - [Commission] (CF-BANK-WINS, PB-BETS): bp of the winnings.
//   - [HourlyFeeDue] (CF-BANK-WINS hourly_fee): the seat fee charged
//     instead of commission; [HouseRules.CommissionExempt] says when a
//     coup pays none (hourly_fee, first_coup_exempt).
//   - [BanqueAuctionFee] (BQ-BANK): 2.5% of the winning bid.
//   - [SettleChemin] -> [Settlement] (CF-BANK-WINS, CF-BANK-LOSES,
//     CF-STANDOFF, CF-BET-LIMIT, CF-UNCOVERED, CF-BANK-SIZE) and
//     [BankLimit] (CF-BANK-LIMIT: the excess over the house limit set
//     aside).
//   - [SettlePuntoBanco] -> []StakeResult (PB-BETS: commission per bank
//     bet, the prices, the no-commission game) and [TotalHouse] (the
//     house's commission and net: PB-BANK).
//   - [SettleBanqueCoup] -> [BanqueSettlement] (BQ-BETS, BQ-CHEVAL,
//     BQ-BANK: a player's bank or the house's, a house commission on the
//     banker's winnings); [SettleBanque] is it for a player's bank with
//     no commission.
//   - [SettleOldResults] -> [OldSettlement] (OLD-SETTLE, OLD-NATURAL:
//     even money, ties to the banker, the three-way split of two tied
//     stakes and the banker's double of each) from each punter's
//     [OldOutcome] (OLD-RANK), and [OldBankAfter] (OLD-STAKE, OLD-BANKER:
//     the cover of double the stakes, the new bank): the money without the
//     cards, as the wallet computes it. [SettleOld] is both from the cards,
//     with OLD-BACCARAT's next banker.
//
// Errors: an amount <= 0 where a stake or bank is due is ErrInvalidAmount;
// bets beyond the bank (or, in the old game, beyond half of it) are
// ErrBetsExceedBank; an unknown outcome, bet or table is
// ErrInvalidOutcome; house rules out of range are ErrInvalidHouseRules;
// overflow is ErrOverflow. The wallet maps them to its error reasons.
package rules
