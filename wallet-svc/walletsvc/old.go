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

// checkOldNets checks, without the cards, that the nets of a
// SettleOldRequest are a result the old game can give (RULES.md
// OLD-SETTLE, OLD-NATURAL, rules.SettleOld) and sum to zero with
// banker_net: each punter wins or loses exactly his stake, except the two
// punters of a three-way split, who each win the other's stake. It
// returns per stake what it lost and won. Errors: INVALID_ARGUMENT
// INVALID_ARGUMENT; INVALID_AMOUNT on overflow.
func checkOldNets(req *walletv1.SettleOldRequest) ([]betResult, error) {
	stakes := req.GetStakes()
	var split []int
	for i, st := range stakes {
		if st.GetSplit() {
			split = append(split, i)
		}
	}
	// Source: RULES.md OLD-SETTLE (the three-way split: exactly two punters tie the banker)
	if len(split) != 0 && len(split) != 2 {
		return nil, failf(codes.InvalidArgument, reasonInvalidArgument,
			"%d stakes are marked split: the three-way split (OLD-SETTLE) takes exactly two", len(split))
	}
	results := make([]betResult, len(stakes))
	sum := req.GetBankerNet()
	for i, st := range stakes {
		net, amount := st.GetNet(), st.GetAmount()
		switch {
		case st.GetSplit():
			// Source: RULES.md OLD-SETTLE (the pool of both stakes and the
			// banker's double of each, split in three: each tied punter
			// gets the sum of the two stakes, a net of the other's stake)
			other := stakes[split[0]]
			if i == split[0] {
				other = stakes[split[1]]
			}
			if net != other.GetAmount() {
				return nil, failf(codes.InvalidArgument, reasonInvalidArgument,
					"stake %d: split net %d, the three-way split (OLD-SETTLE) gives the other tied stake, %d", i, net, other.GetAmount())
			}
			results[i] = betResult{won: net}
		case net == amount:
			// Source: RULES.md OLD-SETTLE (the punter beat the banker: even money)
			results[i] = betResult{won: amount}
		case net == -amount:
			// Source: RULES.md OLD-SETTLE, OLD-NATURAL (a tie goes to the
			// banker; his 9 or 19 takes every stake): the stake is lost
			results[i] = betResult{lost: amount}
		default:
			return nil, failf(codes.InvalidArgument, reasonInvalidArgument,
				"stake %d: net %d, the old game gives +%d or -%d (or, split, the other tied stake)", i, net, amount, amount)
		}
		var ok bool
		if sum, ok = add(sum, net); !ok {
			return nil, failf(codes.InvalidArgument, reasonInvalidAmount, "the nets overflow")
		}
	}
	if sum != 0 {
		// Every unit a punter wins the banker loses, and the other way round.
		return nil, failf(codes.InvalidArgument, reasonInvalidArgument,
			"banker_net %d and the stakes' nets sum to %d, not 0", req.GetBankerNet(), sum)
	}
	return results, nil
}

// SettleOld settles a coup of the old game with aces at eleven in one
// transaction keyed by coup_id (RULES.md OLD-SETTLE, OLD-NATURAL,
// OLD-STAKE), from the nets the table's rules engine computed
// (rules.SettleOld). The wallet has no cards and does not recompute the
// game; it checks the request (2..16 stakes on distinct holds, none the
// bank's; nets a result of the old game that sum to zero with banker_net:
// checkOldNets), then in the transaction that the holds are open, the
// stakes equal their holds, no stake is on the banker's account, and the
// bank holds at least double the stakes (OLD-STAKE), so the banker loses
// at most his bank hold. It closes every stake hold (SETTLED), moves a
// lost stake from the punter to the banker ("bet_lost"), a win from the
// banker to the punter ("bet_won", or "pool_split" for a share of the
// three-way split), and resizes the bank hold to bank + banker_net; it
// stays open. No commission. Amounts are minor units.
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
	results, err := checkOldNets(req)
	if err != nil {
		return nil, err
	}
	var total int64
	for _, st := range stakes {
		var ok bool
		if total, ok = add(total, st.GetAmount()); !ok || total > maxOldStakes {
			return nil, failf(codes.InvalidArgument, reasonInvalidAmount, "the stakes overflow")
		}
	}
	r, err := idempotent(s, "SettleOld", coupKey(req.GetCoupId()), req, newMsg[walletv1.SettleOldResponse],
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
			// Source: RULES.md OLD-STAKE (the banker holds double each stake against it)
			if 2*total > bank {
				return nil, failf(codes.InvalidArgument, reasonBetsExceedBank,
					"stakes total %d need a bank of %d (OLD-STAKE: double), bank %d", total, 2*total, bank)
			}
			if -req.GetBankerNet() > bank {
				return nil, failf(codes.InvalidArgument, reasonBetsExceedBank,
					"the banker would lose %d, his bank holds %d", -req.GetBankerNet(), bank)
			}
			out := &walletv1.SettleOldResponse{CoupId: req.GetCoupId(), BankerNet: req.GetBankerNet()}
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
				if st.GetSplit() {
					why = reasonPoolSplit
				}
				// The stake's hold closes whatever the result; the money
				// moves against the banker's account.
				t.close(h, punter, walletv1.HoldState_HOLD_STATE_SETTLED)
				res := results[i]
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
			// Source: RULES.md OLD-BANKER, OLD-BACCARAT (the banker keeps
			// the bank from coup to coup): the hold is the new bank.
			// At least bank/2 > 0 (the banker loses at most the stakes); at
			// most his balance after the transfers, which stays in range.
			out.NewBank = bank + req.GetBankerNet()
			t.resize(bankHold, banker, out.NewBank)
			return out, nil
		})
	if err != nil {
		return nil, err
	}
	s.log.InfoContext(ctx, "old coup settled", "coup_id", r.GetCoupId(), "stakes", len(stakes), "banker_net", r.GetBankerNet(),
		"new_bank", r.GetNewBank())
	return r, nil
}

// maxOldStakes bounds the stakes of a coup so that their double (the
// cover OLD-STAKE asks of the bank) fits an int64.
const maxOldStakes = (1<<63 - 1) / 2
