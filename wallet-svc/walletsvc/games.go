package walletsvc

import (
	"context"

	"google.golang.org/grpc/codes"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/rules"
)

// Transfer reasons of the other games and the fees.
const (
	reasonBankAuctionFee = "bank_auction_fee"
	reasonHourlyFee      = "hourly_fee"
)

// checkBets validates the hold ids of a settlement: present, distinct, not
// the bank's.
func checkBetHolds(bank string, n int, holdID func(int) string, amount func(int) int64) error {
	if n > maxBets {
		return failf(codes.InvalidArgument, reasonInvalidArgument, "more than %d bets", maxBets)
	}
	seen := map[string]bool{}
	if bank != "" {
		seen[bank] = true
	}
	for i := range n {
		if err := firstErr(checkID("bets.hold_id", holdID(i)), checkAmount("bets.amount", amount(i))); err != nil {
			return err
		}
		if seen[holdID(i)] {
			return failf(codes.InvalidArgument, reasonInvalidArgument, "bet %d: hold %q is the bank's or appears twice", i, holdID(i))
		}
		seen[holdID(i)] = true
	}
	return nil
}

func checkBP(bp int64, r walletv1.CommissionRounding) error {
	if bp < 0 || bp > rules.MaxCommissionBP {
		return failf(codes.InvalidArgument, reasonInvalidArgument, "commission_bp %d outside 0..%d", bp, rules.MaxCommissionBP)
	}
	if _, ok := walletv1.CommissionRounding_name[int32(r)]; !ok {
		return failf(codes.InvalidArgument, reasonInvalidArgument, "unknown commission rounding %d", r)
	}
	return nil
}

// betHold loads the open hold of bet i and checks its amount.
func (t *txn) betHold(i int, id string, amount int64) (*walletv1.Hold, *account, error) {
	h, err := t.openHold(id)
	if err != nil {
		return nil, nil, err
	}
	if h.GetAmount() != amount {
		return nil, nil, failf(codes.InvalidArgument, reasonInvalidAmount,
			"bet %d: amount %d differs from hold %q's %d", i, amount, id, h.GetAmount())
	}
	a, err := t.mustAccount(h.GetAccountId())
	return h, a, err
}

// applyResult closes a bet's hold and moves its money against the bank
// account: the lost stake to the bank, the winnings from the bank, the
// commission from the bettor to house:commission.
func (t *txn) applyResult(h *walletv1.Hold, bettor, bank *account, res betResult, coup string) ([]*walletv1.Transfer, error) {
	t.close(h, bettor, walletv1.HoldState_HOLD_STATE_SETTLED)
	var trs []*walletv1.Transfer
	move := func(from, to *account, amount int64, why string) error {
		if amount <= 0 {
			return nil
		}
		tr, err := t.transfer(from, to, amount, why, coup)
		if err == nil {
			trs = append(trs, tr)
		}
		return err
	}
	if err := move(bettor, bank, res.lost, reasonBetLost); err != nil {
		return nil, err
	}
	if err := move(bank, bettor, res.won, reasonBetWon); err != nil {
		return nil, err
	}
	if res.commission > 0 {
		house, err := t.system(AccountCommission, bettor.currency)
		if err != nil {
			return nil, err
		}
		if err := move(bettor, house, res.commission, reasonCommission); err != nil {
			return nil, err
		}
	}
	return trs, nil
}

// pbOutcomes maps the wire outcome to the engine's, from the bank's side.
var pbOutcomes = map[walletv1.PuntoBancoOutcome]rules.Outcome{
	walletv1.PuntoBancoOutcome_PUNTO_BANCO_OUTCOME_BANK_WINS:   rules.OutcomeBankWins,
	walletv1.PuntoBancoOutcome_PUNTO_BANCO_OUTCOME_PLAYER_WINS: rules.OutcomeBankLoses,
	walletv1.PuntoBancoOutcome_PUNTO_BANCO_OUTCOME_TIE:         rules.OutcomeStandOff,
}

// pbBets maps the wire bet types to the engine's bets (PB-BETS).
var pbBets = map[walletv1.PuntoBancoBetType]rules.PuntoBancoBet{
	walletv1.PuntoBancoBetType_PUNTO_BANCO_BET_TYPE_BANK:         rules.BetBank,
	walletv1.PuntoBancoBetType_PUNTO_BANCO_BET_TYPE_PLAYER:       rules.BetPlayer,
	walletv1.PuntoBancoBetType_PUNTO_BANCO_BET_TYPE_TIE:          rules.BetTie,
	walletv1.PuntoBancoBetType_PUNTO_BANCO_BET_TYPE_BANK_NATURAL: rules.BetBankNatural,
	walletv1.PuntoBancoBetType_PUNTO_BANCO_BET_TYPE_PLAYER_PAIR:  rules.BetPlayerPair,
	walletv1.PuntoBancoBetType_PUNTO_BANCO_BET_TYPE_BANK_PAIR:    rules.BetBankPair,
}

// checkPays validates a payout ratio of the request: 0 (the default) or
// 1..rules.MaxPuntoBancoPays to 1.
func checkPays(field string, pays int64) error {
	if pays < 0 || pays > rules.MaxPuntoBancoPays {
		return failf(codes.InvalidArgument, reasonInvalidArgument, "%s %d outside 0..%d (0: the default)", field, pays, rules.MaxPuntoBancoPays)
	}
	return nil
}

// puntoBancoRules are the house rules a SettlePuntoBancoRequest carries,
// with each zero price replaced by the default of
// rules.DefaultPuntoBancoRules. req must have passed checkBP and
// checkPays (rules.SettlePuntoBanco checks the ranges again).
func puntoBancoRules(req *walletv1.SettlePuntoBancoRequest) rules.PuntoBancoRules {
	pr := rules.DefaultPuntoBancoRules()
	pr.CommissionBP, pr.CommissionRounding = req.GetCommissionBp(), roundings[req.GetCommissionRounding()]
	pr.NoCommission = req.GetNoCommission()
	for _, p := range []struct {
		dst *int64
		v   int64
	}{{&pr.TiePays, req.GetTiePays()}, {&pr.BankNaturalPays, req.GetBankNaturalPays()}, {&pr.PairPays, req.GetPairPays()}} {
		if p.v == 0 {
			// Source: RULES.md PB-BETS (0 keeps the default: bank natural 9 to 1; tie 8 and pairs 11 to 1, common extensions)
			continue
		}
		*p.dst = p.v
	}
	return pr
}

// SettlePuntoBanco settles a punto banco coup against house:bank in one
// transaction keyed by coup_id (RULES.md PB-BETS). The amounts come from
// rules.SettlePuntoBanco with the request's house rules (no_commission,
// the prices; 0 prices are the defaults); a pair bet moves like a tie
// bet, its stake to house:bank or its winnings from it; a no-commission
// bank win on 6 moves half the stake, rounded down (PB-BANK reading).
// Errors: INVALID_ARGUMENT INVALID_ARGUMENT for a missing or unknown
// outcome or bet type, a price outside 0..1000, a bank_total outside 0..9
// or a no-commission bank win with bank_total 0; INVALID_ARGUMENT
// INVALID_AMOUNT for an amount <= 0 or a payout beyond int64; the hold
// errors; FAILED_PRECONDITION INSUFFICIENT_FUNDS when house:bank cannot
// pay.
func (s *Service) SettlePuntoBanco(ctx context.Context, req *walletv1.SettlePuntoBancoRequest) (*walletv1.SettlePuntoBancoResponse, error) {
	bets := req.GetBets()
	if err := firstErr(checkID("coup_id", req.GetCoupId()),
		checkBetHolds("", len(bets), func(i int) string { return bets[i].GetHoldId() }, func(i int) int64 { return bets[i].GetAmount() }),
		checkBP(req.GetCommissionBp(), req.GetCommissionRounding()),
		checkPays("tie_pays", req.GetTiePays()), checkPays("bank_natural_pays", req.GetBankNaturalPays()),
		checkPays("pair_pays", req.GetPairPays())); err != nil {
		return nil, err
	}
	outcome, ok := pbOutcomes[req.GetOutcome()]
	if !ok {
		return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "outcome is required")
	}
	if bt := req.GetBankTotal(); bt < 0 || bt > 9 {
		return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "bank_total %d outside 0..9", bt)
	}
	stakes := make([]rules.PuntoBancoStake, len(bets))
	for i, b := range bets {
		if b.GetType() == walletv1.PuntoBancoBetType_PUNTO_BANCO_BET_TYPE_UNSPECIFIED {
			return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "bet %d: type is required", i)
		}
		bet, ok := pbBets[b.GetType()]
		if !ok {
			return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "bet %d: unknown type %d", i, b.GetType())
		}
		stakes[i] = rules.PuntoBancoStake{Bet: bet, Amount: b.GetAmount()}
	}
	res := rules.PuntoBancoResult{Outcome: outcome, BankNatural: req.GetBankNatural(), BankTotal: int(req.GetBankTotal()),
		PlayerPair: req.GetPlayerPair(), BankPair: req.GetBankPair()}
	settled, err := rules.SettlePuntoBanco(stakes, res, puntoBancoRules(req))
	if err != nil {
		// ErrOverflow and ErrInvalidAmount: INVALID_AMOUNT; a no-commission
		// bank win on 0 (ErrInvalidOutcome): INVALID_ARGUMENT.
		return nil, rulesError(err)
	}
	totals, err := rules.TotalHouse(settled)
	if err != nil {
		return nil, rulesError(err)
	}
	results := make([]betResult, len(bets))
	for i, r := range settled {
		results[i] = betResult{lost: r.Lost, won: r.Won, commission: r.Commission}
	}
	return idempotent(ctx, s, "SettlePuntoBanco", coupKey(req.GetCoupId()), req, newMsg[walletv1.SettlePuntoBancoResponse],
		func(t *txn) (*walletv1.SettlePuntoBancoResponse, error) {
			out := &walletv1.SettlePuntoBancoResponse{CoupId: req.GetCoupId(), Commission: totals.Commission, HouseNet: totals.HouseNet}
			banks := map[string]*account{}
			for i, b := range bets {
				h, bettor, err := t.betHold(i, b.GetHoldId(), b.GetAmount())
				if err != nil {
					return nil, err
				}
				bank := banks[bettor.currency]
				if bank == nil {
					if bank, err = t.system(AccountHouseBank, bettor.currency); err != nil {
						return nil, err
					}
					banks[bettor.currency] = bank
				}
				res := results[i]
				trs, err := t.applyResult(h, bettor, bank, res, req.GetCoupId())
				if err != nil {
					return nil, err
				}
				out.Transfers = append(out.Transfers, trs...)
				out.Results = append(out.Results, &walletv1.BetResult{HoldId: h.GetHoldId(), Lost: res.lost, Won: res.won, Commission: res.commission})
			}
			for _, bank := range banks {
				if err := needFunds(bank); err != nil {
					return nil, err
				}
			}
			return out, nil
		})
}

// banqueSides maps the wire sides to the engine's tables (BQ-BETS,
// BQ-CHEVAL).
var banqueSides = map[walletv1.BanqueSide]rules.Table{
	walletv1.BanqueSide_BANQUE_SIDE_RIGHT:  rules.TableRight,
	walletv1.BanqueSide_BANQUE_SIDE_LEFT:   rules.TableLeft,
	walletv1.BanqueSide_BANQUE_SIDE_CHEVAL: rules.TableBoth,
}

// SettleBanque settles a baccarat banque coup in one transaction keyed by
// coup_id (RULES.md BQ-BANK, BQ-BETS, BQ-CHEVAL). The amounts come from
// rules.SettleBanqueCoup: each bet's result from the right and left
// outcomes, the banker's winnings, the request's commission on them, the
// uncovered part of a player's bank and his new bank (a house bank:
// house:bank pays and collects, and must be able to pay).
func (s *Service) SettleBanque(ctx context.Context, req *walletv1.SettleBanqueRequest) (*walletv1.SettleBanqueResponse, error) {
	bets := req.GetBets()
	if req.GetBankHoldId() != "" {
		if err := checkID("bank_hold_id", req.GetBankHoldId()); err != nil {
			return nil, err
		}
	}
	if err := firstErr(checkID("coup_id", req.GetCoupId()),
		checkBetHolds(req.GetBankHoldId(), len(bets), func(i int) string { return bets[i].GetHoldId() }, func(i int) int64 { return bets[i].GetAmount() }),
		checkBP(req.GetCommissionBp(), req.GetCommissionRounding())); err != nil {
		return nil, err
	}
	right, okR := outcomes[req.GetRight()]
	left, okL := outcomes[req.GetLeft()]
	if !okR || !okL {
		return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "right and left must be coup outcomes, got %s and %s", req.GetRight(), req.GetLeft())
	}
	rbets := make([]rules.BanqueBet, len(bets))
	for i, b := range bets {
		t, ok := banqueSides[b.GetSide()]
		if !ok {
			return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "bet %d: side is required", i)
		}
		rbets[i] = rules.BanqueBet{On: t, Amount: b.GetAmount()}
	}
	hr := rules.HouseRules{CommissionBP: req.GetCommissionBp(), CommissionRounding: roundings[req.GetCommissionRounding()]}
	// The bets' results do not depend on the bank: settled here as against
	// the house's bank, so that a request the engine refuses (the bets
	// overflow) fails before the transaction, as it always did.
	if _, err := rules.SettleBanqueCoup(0, rbets, right, left, hr); err != nil {
		return nil, rulesError(err)
	}
	return idempotent(ctx, s, "SettleBanque", coupKey(req.GetCoupId()), req, newMsg[walletv1.SettleBanqueResponse],
		func(t *txn) (*walletv1.SettleBanqueResponse, error) {
			out := &walletv1.SettleBanqueResponse{CoupId: req.GetCoupId()}
			var bankHold *walletv1.Hold
			var bank *account
			var amount int64 // the player's bank; 0: the house's
			var err error
			if req.GetBankHoldId() != "" {
				if bankHold, err = t.openHold(req.GetBankHoldId()); err != nil {
					return nil, err
				}
				if bank, err = t.mustAccount(bankHold.GetAccountId()); err != nil {
					return nil, err
				}
				if amount = bankHold.GetAmount(); amount <= 0 {
					return nil, failf(codes.FailedPrecondition, reasonInvalidAmount, "bank hold %q holds %d: the bank is exhausted (void it)", bankHold.GetHoldId(), amount)
				}
			}
			// Source: RULES.md BQ-BANK: he does not risk the part of the
			// bank that no bet covers; the bets never exceed it
			// (BETS_EXCEED_BANK).
			st, err := rules.SettleBanqueCoup(amount, rbets, right, left, hr)
			if err != nil {
				return nil, rulesError(err)
			}
			out.Uncovered = st.Uncovered
			for i, b := range bets {
				h, bettor, err := t.betHold(i, b.GetHoldId(), b.GetAmount())
				if err != nil {
					return nil, err
				}
				if bank == nil {
					if bank, err = t.system(AccountHouseBank, bettor.currency); err != nil {
						return nil, err
					}
				}
				if bettor.id == bank.id {
					return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "bet %d: hold %q is on the banker's own account", i, h.GetHoldId())
				}
				res := betResult{lost: st.Bets[i].Lost, won: st.Bets[i].Won}
				trs, err := t.applyResult(h, bettor, bank, res, req.GetCoupId())
				if err != nil {
					return nil, err
				}
				out.Transfers = append(out.Transfers, trs...)
				out.Results = append(out.Results, &walletv1.BetResult{HoldId: h.GetHoldId(), Lost: res.lost, Won: res.won})
			}
			out.BankerWinnings = st.BankerWinnings
			if st.Commission > 0 {
				// Source: RULES.md BQ-BANK (a house commission_bp on the banker's winnings, rounded by commission_rounding)
				house, err := t.system(AccountCommission, bank.currency)
				if err != nil {
					return nil, err
				}
				tr, err := t.transfer(bank, house, st.Commission, reasonCommission, req.GetCoupId())
				if err != nil {
					return nil, err
				}
				out.Commission = st.Commission
				out.Transfers = append(out.Transfers, tr)
			}
			if bankHold != nil {
				// Source: RULES.md BQ-BANK: the banker keeps the bank after
				// a loss until it is exhausted; the hold is the new bank.
				out.NewBank = st.NewBank
				t.resize(bankHold, bank, out.NewBank)
			} else if bank != nil {
				if err := needFunds(bank); err != nil {
					return nil, err
				}
			}
			return out, nil
		})
}

// ChargeFee charges a house fee to a player's available balance.
func (s *Service) ChargeFee(ctx context.Context, req *walletv1.ChargeFeeRequest) (*walletv1.ChargeFeeResponse, error) {
	if err := firstErr(checkID("request_id", req.GetRequestId()), checkPlayerAccount(req.GetAccountId(), s.cur),
		checkReference(req.GetReference()), checkBP(0, req.GetRounding())); err != nil {
		return nil, err
	}
	var fee int64
	var why string
	var err error
	switch req.GetFeeType() {
	case walletv1.FeeType_FEE_TYPE_BANK_AUCTION: // Source: RULES.md BQ-BANK
		if err := checkAmount("bid", req.GetBid()); err != nil {
			return nil, err
		}
		fee = rules.BanqueAuctionFee(req.GetBid(), roundings[req.GetRounding()])
		why = reasonBankAuctionFee
	case walletv1.FeeType_FEE_TYPE_HOURLY: // Source: RULES.md CF-BANK-WINS (hourly_fee)
		if err := firstErr(checkAmount("hourly_fee", req.GetHourlyFee()), checkAmount("seat_seconds", req.GetSeatSeconds())); err != nil {
			return nil, err
		}
		fee, err = rules.HourlyFeeDue(rules.HouseRules{HourlyFee: req.GetHourlyFee(), CommissionRounding: roundings[req.GetRounding()]},
			req.GetSeatSeconds())
		why = reasonHourlyFee
	default:
		return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "fee_type is required")
	}
	if err != nil {
		return nil, failf(codes.InvalidArgument, reasonInvalidAmount, "fee: %v", err)
	}
	ref := req.GetReference()
	if ref == "" {
		ref = req.GetRequestId()
	}
	return staked(ctx, s, "ChargeFee", req.GetRequestId(), req, newMsg[walletv1.ChargeFeeResponse],
		func(t *txn) (*walletv1.ChargeFeeResponse, error) {
			a, err := t.stakeAccount(req.GetAccountId())
			if err != nil {
				return nil, err
			}
			out := &walletv1.ChargeFeeResponse{Fee: fee}
			if fee > 0 {
				if err := t.fund(a, fee, whyFee, ref, nil); err != nil {
					return nil, err
				}
				if avail := a.balance - a.held; fee > avail {
					return nil, failf(codes.FailedPrecondition, reasonInsufficient, "%s has %d available, fee %d", a.id, avail, fee)
				}
				if req.GetFeeType() == walletv1.FeeType_FEE_TYPE_BANK_AUCTION {
					// A fee is a loss: the bank won at auction (held) and
					// its fee must fit the loss limits together
					// (LIMIT_REACHED otherwise; the hourly seat fee is owed
					// for time sat and is not refused).
					if _, err := t.stakeAllowed(a, 0, fee); err != nil {
						return nil, err
					}
				}
				house, err := t.system(AccountCommission, a.currency)
				if err != nil {
					return nil, err
				}
				if out.Transfer, err = t.transfer(a, house, fee, why, ref); err != nil {
					return nil, err
				}
			}
			out.Account = a.proto(s.cur)
			return out, nil
		})
}
