package walletsvc

import (
	"context"

	"google.golang.org/grpc/codes"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/rules"
)

// reasonPoolSplit is the transfer reason of a winning share of the old
// game's three-way split (OLD-SETTLE).
const reasonPoolSplit = "pool_split"

// oldResults reads each punter's result against the banker from a
// SettleOldRequest: the stakes' outcomes, or, from a table that predates
// outcome (none set), the deprecated nets: a split stake tied the banker,
// a net of +amount beat him, -amount lost (a tie that went to the banker
// moves the same money as a loss). Errors: INVALID_ARGUMENT
// INVALID_ARGUMENT (outcomes on some stakes only, an unknown outcome, a
// net the old game never gives).
func oldResults(req *walletv1.SettleOldRequest) ([]rules.Outcome, error) {
	stakes := req.GetStakes()
	with := 0
	for _, st := range stakes {
		if st.GetOutcome() != walletv1.CoupOutcome_COUP_OUTCOME_UNSPECIFIED {
			with++
		}
	}
	results := make([]rules.Outcome, len(stakes))
	switch with {
	case len(stakes):
		for i, st := range stakes {
			o, ok := outcomes[st.GetOutcome()]
			if !ok {
				return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "stake %d: outcome %s is not a coup outcome", i, st.GetOutcome())
			}
			results[i] = o
		}
	case 0:
		for i, st := range stakes {
			net, amount := st.GetNet(), st.GetAmount()
			switch {
			case st.GetSplit():
				results[i] = rules.OutcomeStandOff
			case net == amount:
				results[i] = rules.OutcomeBankLoses
			case net == -amount:
				results[i] = rules.OutcomeBankWins
			default:
				return nil, failf(codes.InvalidArgument, reasonInvalidArgument,
					"stake %d: no outcome, and a net of %d: the old game gives +%d or -%d (or, split, the other tied stake)", i, net, amount, amount)
			}
		}
	default:
		return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "%d of the %d stakes carry an outcome: all or none", with, len(stakes))
	}
	return results, nil
}

// checkDeprecatedNets checks the deprecated nets of a SettleOldRequest
// against the settlement the wallet computed: when the request carries
// any net, split flag or banker_net, each must be what the wallet
// computed. Errors: INVALID_ARGUMENT INVALID_ARGUMENT.
func checkDeprecatedNets(req *walletv1.SettleOldRequest, st rules.OldSettlement) error {
	given := req.GetBankerNet() != 0
	for _, s := range req.GetStakes() {
		given = given || s.GetNet() != 0 || s.GetSplit()
	}
	if !given {
		return nil
	}
	for i, s := range req.GetStakes() {
		if s.GetNet() != st.Net[i] || s.GetSplit() != st.Pooled[i] {
			return failf(codes.InvalidArgument, reasonInvalidArgument,
				"stake %d: net %d, split %t; the old game gives %d, split %t (OLD-SETTLE)", i, s.GetNet(), s.GetSplit(), st.Net[i], st.Pooled[i])
		}
	}
	if req.GetBankerNet() != st.BankerNet {
		return failf(codes.InvalidArgument, reasonInvalidArgument,
			"banker_net %d; the old game gives %d, minus the sum of the nets", req.GetBankerNet(), st.BankerNet)
	}
	return nil
}

// SettleOld settles a coup of the old game with aces at eleven in one
// transaction keyed by coup_id (RULES.md OLD-SETTLE, OLD-NATURAL,
// OLD-STAKE). The wallet has no cards: it computes the money from each
// punter's result against the banker and the natural flag (oldResults)
// with rules.SettleOldResults, and the banker's new bank, after the
// OLD-STAKE check that the bank holds at least double the stakes, with
// rules.OldBankAfter; deprecated nets sent along must agree
// (checkDeprecatedNets). It checks the request (2..16 stakes on distinct
// holds, none the bank's), then in the transaction that the holds are
// open, the stakes equal their holds and no stake is on the banker's
// account. It closes every stake hold (SETTLED), moves a lost stake from
// the punter to the banker ("bet_lost"), a win from the banker to the
// punter ("bet_won", or "pool_split" for a share of the three-way split),
// and resizes the bank hold to the new bank; it stays open. No
// commission. Amounts are minor units.
//
// Errors: INVALID_ARGUMENT INVALID_ARGUMENT / INVALID_AMOUNT /
// BETS_EXCEED_BANK; NOT_FOUND HOLD_NOT_FOUND; FAILED_PRECONDITION
// HOLD_NOT_OPEN / HOLD_EXPIRED / CURRENCY_MISMATCH; ALREADY_EXISTS
// REQUEST_ID_REUSED (the coup id was settled with another request, by
// this method or another). A failure moves nothing.
func (s *Service) SettleOld(ctx context.Context, req *walletv1.SettleOldRequest) (*walletv1.SettleOldResponse, error) {
	stakes := req.GetStakes()
	if err := firstErr(checkID("coup_id", req.GetCoupId()), checkID("bank_hold_id", req.GetBankHoldId())); err != nil {
		return nil, err
	}
	if n := len(stakes); n < rules.OldMinPunters || n > rules.OldMaxPunters {
		// Source: RULES.md OLD-DECKS (at least three players: two punters and the banker)
		return nil, failf(codes.InvalidArgument, reasonInvalidArgument,
			"%d stakes: a coup of the old game has %d..%d punters", n, rules.OldMinPunters, rules.OldMaxPunters)
	}
	if err := checkBetHolds(req.GetBankHoldId(), len(stakes), func(i int) string { return stakes[i].GetHoldId() },
		func(i int) int64 { return stakes[i].GetAmount() }); err != nil {
		return nil, err
	}
	results, err := oldResults(req)
	if err != nil {
		return nil, err
	}
	amounts := make([]int64, len(stakes))
	for i, st := range stakes {
		amounts[i] = st.GetAmount()
	}
	settled, err := rules.SettleOldResults(amounts, results, req.GetNatural())
	if err != nil {
		return nil, rulesError(err) // the stakes overflow: INVALID_AMOUNT
	}
	if err := checkDeprecatedNets(req, settled); err != nil {
		return nil, err
	}
	r, err := idempotent(ctx, s, "SettleOld", coupKey(req.GetCoupId()), req, newMsg[walletv1.SettleOldResponse],
		func(t *txn) (*walletv1.SettleOldResponse, error) {
			bankHold, err := t.openHold(req.GetBankHoldId())
			if err != nil {
				return nil, err
			}
			banker, err := t.mustAccount(bankHold.GetAccountId())
			if err != nil {
				return nil, err
			}
			bank := bankHold.GetAmount()
			if bank <= 0 {
				return nil, failf(codes.FailedPrecondition, reasonInvalidAmount,
					"bank hold %q holds %d: the bank is exhausted (void it)", bankHold.GetHoldId(), bank)
			}
			// Source: RULES.md OLD-STAKE (the banker holds double each
			// stake against it: BETS_EXCEED_BANK), OLD-BANKER (he keeps
			// the bank from coup to coup: the hold is the new bank)
			newBank, err := rules.OldBankAfter(bank, amounts, settled.BankerNet)
			if err != nil {
				return nil, rulesError(err)
			}
			out := &walletv1.SettleOldResponse{CoupId: req.GetCoupId(), BankerNet: settled.BankerNet}
			for i, st := range stakes {
				h, punter, err := t.betHold(i, st.GetHoldId(), st.GetAmount())
				if err != nil {
					return nil, err
				}
				if punter.id == banker.id {
					return nil, failf(codes.InvalidArgument, reasonInvalidArgument,
						"stake %d: hold %q is on the banker's own account", i, h.GetHoldId())
				}
				why := reasonBetWon
				if settled.Pooled[i] {
					why = reasonPoolSplit
				}
				// The stake's hold closes whatever the result; the money
				// moves against the banker's account.
				t.close(h, punter, walletv1.HoldState_HOLD_STATE_SETTLED)
				var res betResult
				if net := settled.Net[i]; net < 0 {
					res.lost = -net
				} else {
					res.won = net
				}
				if res.lost > 0 {
					tr, err := t.transfer(punter, banker, res.lost, reasonBetLost, req.GetCoupId())
					if err != nil {
						return nil, err
					}
					out.Transfers = append(out.Transfers, tr)
				}
				if res.won > 0 {
					tr, err := t.transfer(banker, punter, res.won, why, req.GetCoupId())
					if err != nil {
						return nil, err
					}
					out.Transfers = append(out.Transfers, tr)
				}
				out.Results = append(out.Results, &walletv1.BetResult{HoldId: h.GetHoldId(), Lost: res.lost, Won: res.won})
			}
			out.NewBank = newBank
			t.resize(bankHold, banker, out.NewBank)
			return out, nil
		})
	if err != nil {
		return nil, err
	}
	s.log.InfoContext(ctx, "old coup settled", "coup_id", r.GetCoupId(), "stakes", len(stakes), "natural", req.GetNatural(), "banker_net", r.GetBankerNet(),
		"new_bank", r.GetNewBank())
	return r, nil
}
