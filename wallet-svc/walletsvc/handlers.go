package walletsvc

import (
	"context"
	"errors"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/currency"
	"github.com/chemmy/chemmy/services/rules"
)

// Transfer reasons.
const (
	reasonDeposit    = "deposit"
	reasonWithdrawal = "withdrawal"
	reasonBetLost    = "bet_lost"
	reasonBetWon     = "bet_won"
	reasonCommission = "commission"
)

func reqKey(id string) string  { return "req/" + id }
func coupKey(id string) string { return "coup/" + id }

// Deposit credits a player account from external:funding, creating it.
func (s *Service) Deposit(ctx context.Context, req *walletv1.DepositRequest) (*walletv1.DepositResponse, error) {
	if err := firstErr(checkID("request_id", req.GetRequestId()), checkFundable(req.GetAccountId(), s.cur),
		checkAmount("amount", req.GetAmount()), s.checkNotSeamless(req.GetAccountId())); err != nil {
		return nil, err
	}
	return idempotent(ctx, s, "Deposit", reqKey(req.GetRequestId()), req, newMsg[walletv1.DepositResponse],
		func(t *txn) (*walletv1.DepositResponse, error) {
			a, err := t.account(req.GetAccountId())
			if err != nil {
				return nil, err
			}
			if a == nil {
				a = t.create(req.GetAccountId())
			}
			ext, err := t.system(AccountExternal, a.currency)
			if err != nil {
				return nil, err
			}
			tr, err := t.transfer(ext, a, req.GetAmount(), reasonDeposit, req.GetRequestId())
			if err != nil {
				return nil, err
			}
			return &walletv1.DepositResponse{Account: a.proto(s.cur), Transfer: tr}, nil
		})
}

// Withdraw debits a player account's available balance to external:funding.
func (s *Service) Withdraw(ctx context.Context, req *walletv1.WithdrawRequest) (*walletv1.WithdrawResponse, error) {
	if err := firstErr(checkID("request_id", req.GetRequestId()), checkFundable(req.GetAccountId(), s.cur),
		checkAmount("amount", req.GetAmount()), s.checkNotSeamless(req.GetAccountId())); err != nil {
		return nil, err
	}
	return idempotent(ctx, s, "Withdraw", reqKey(req.GetRequestId()), req, newMsg[walletv1.WithdrawResponse],
		func(t *txn) (*walletv1.WithdrawResponse, error) {
			a, err := t.mustAccount(req.GetAccountId())
			if err != nil {
				return nil, err
			}
			if avail := a.balance - a.held; req.GetAmount() > avail {
				return nil, failf(codes.FailedPrecondition, reasonInsufficient,
					"%s has %d available, withdrawal of %d", a.id, avail, req.GetAmount())
			}
			ext, err := t.system(AccountExternal, a.currency)
			if err != nil {
				return nil, err
			}
			tr, err := t.transfer(a, ext, req.GetAmount(), reasonWithdrawal, req.GetRequestId())
			if err != nil {
				return nil, err
			}
			return &walletv1.WithdrawResponse{Account: a.proto(s.cur), Transfer: tr}, nil
		})
}

// checkNotSeamless refuses (FAILED_PRECONDITION SEAMLESS_WALLET) a
// deposit or withdrawal of a player account in seamless mode: the
// operator's wallet holds his money.
func (s *Service) checkNotSeamless(acct string) error {
	if s.op != nil && isPlayerAccount(acct) {
		return failf(codes.FailedPrecondition, reasonSeamless,
			"%s: seamless wallet mode, the operator's wallet holds the player's money (no deposit or withdrawal here)", acct)
	}
	return nil
}

// GetAccount returns an account. A player may read only his own. In
// seamless mode a player's account shows the chemmy side only: what he
// has at stake (held; balance = held at rest).
func (s *Service) GetAccount(ctx context.Context, req *walletv1.GetAccountRequest) (*walletv1.GetAccountResponse, error) {
	id := req.GetAccountId()
	if err := checkAccount(id, s.cur); err != nil {
		return nil, err
	}
	if err := callerMayRead(ctx, id); err != nil {
		return nil, err
	}
	var a *account
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		a, err = s.txnFor(ctx, tx).readAccount(id)
		return err
	})
	if err != nil {
		return nil, s.internal("GetAccount", err)
	}
	return &walletv1.GetAccountResponse{Account: a.proto(s.cur)}, nil
}

// GetCurrency says whether the wallet accepts a currency, and its
// exponent (ISO 4217's minor unit, or the configured one).
func (s *Service) GetCurrency(ctx context.Context, req *walletv1.GetCurrencyRequest) (*walletv1.GetCurrencyResponse, error) {
	code := req.GetCurrencyCode()
	if code == "" {
		code = s.currency
	}
	e := s.cur.exponent(code)
	if e == nil {
		return nil, unknownCurrency(code)
	}
	sc := s.scopeOf(ctx)
	if err := s.checkOperatorCurrencyCode(orDefault(sc.op, sc.def), code); err != nil {
		return nil, err
	}
	_, iso := currency.ISO(code)
	return &walletv1.GetCurrencyResponse{Currency: &walletv1.Currency{CurrencyCode: code, Exponent: e, Iso: iso,
		WalletDefault: code == s.currency}}, nil
}

// PlaceHold reserves part of a player account's available balance.
func (s *Service) PlaceHold(ctx context.Context, req *walletv1.PlaceHoldRequest) (*walletv1.PlaceHoldResponse, error) {
	if err := firstErr(checkID("request_id", req.GetRequestId()), checkPlayerAccount(req.GetAccountId(), s.cur),
		checkAmount("amount", req.GetAmount()), checkReference(req.GetReference())); err != nil {
		return nil, err
	}
	if id := req.GetLaunchSessionId(); id != "" {
		if err := checkID("launch_session_id", id); err != nil {
			return nil, err
		}
	}
	var ttl time.Duration
	if req.Ttl != nil {
		if err := req.GetTtl().CheckValid(); err != nil || req.GetTtl().AsDuration() <= 0 {
			return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "ttl must be a positive duration")
		}
		ttl = req.GetTtl().AsDuration()
	}
	return staked(ctx, s, "PlaceHold", req.GetRequestId(), req, newMsg[walletv1.PlaceHoldResponse],
		func(t *txn) (*walletv1.PlaceHoldResponse, error) {
			// The player's launch session first: an expired or revoked one
			// stakes nothing (no debit either).
			if err := t.checkLaunch(req.GetLaunchSessionId(), req.GetAccountId()); err != nil {
				return nil, err
			}
			if t.op != nil {
				t.op.session = req.GetLaunchSessionId()
			}
			a, err := t.stakeAccount(req.GetAccountId())
			if err != nil {
				return nil, err
			}
			if err := t.checkStakeFirst(a, req.GetAmount(), req.GetAmount()); err != nil {
				return nil, err
			}
			why := whyBet
			if req.GetPurpose() == walletv1.HoldPurpose_HOLD_PURPOSE_BANK {
				why = whyBank
			}
			if err := t.fund(a, req.GetAmount(), why, req.GetReference(), nil); err != nil {
				return nil, err
			}
			if avail := a.balance - a.held; req.GetAmount() > avail {
				return nil, failf(codes.FailedPrecondition, reasonInsufficient,
					"%s has %d available, hold of %d", a.id, avail, req.GetAmount())
			}
			if err := t.checkStake(a, req.GetAmount(), req.GetAmount()); err != nil {
				return nil, err
			}
			h, err := t.newHold(a, req.GetAmount(), req.GetReference(), ttl)
			if err != nil {
				return nil, err
			}
			h.LaunchSessionId = req.GetLaunchSessionId()
			t.attach(h)
			t.notePlaced(req, h)
			return &walletv1.PlaceHoldResponse{Hold: h}, nil
		})
}

// VoidHold releases an open hold, once.
func (s *Service) VoidHold(ctx context.Context, req *walletv1.VoidHoldRequest) (*walletv1.VoidHoldResponse, error) {
	if err := firstErr(checkID("request_id", req.GetRequestId()), checkID("hold_id", req.GetHoldId())); err != nil {
		return nil, err
	}
	return idempotent(ctx, s, "VoidHold", reqKey(req.GetRequestId()), req, newMsg[walletv1.VoidHoldResponse],
		func(t *txn) (*walletv1.VoidHoldResponse, error) {
			h, err := t.openHold(req.GetHoldId())
			if err != nil {
				return nil, err
			}
			a, err := t.mustAccount(h.GetAccountId())
			if err != nil {
				return nil, err
			}
			t.close(h, a, walletv1.HoldState_HOLD_STATE_VOIDED)
			return &walletv1.VoidHoldResponse{Hold: h}, nil
		})
}

var outcomes = map[walletv1.CoupOutcome]rules.Outcome{
	walletv1.CoupOutcome_COUP_OUTCOME_BANK_WINS:  rules.OutcomeBankWins,
	walletv1.CoupOutcome_COUP_OUTCOME_BANK_LOSES: rules.OutcomeBankLoses,
	walletv1.CoupOutcome_COUP_OUTCOME_STAND_OFF:  rules.OutcomeStandOff,
}

var roundings = map[walletv1.CommissionRounding]rules.Rounding{
	walletv1.CommissionRounding_COMMISSION_ROUNDING_UNSPECIFIED: rules.RoundDown,
	walletv1.CommissionRounding_COMMISSION_ROUNDING_DOWN:        rules.RoundDown,
	walletv1.CommissionRounding_COMMISSION_ROUNDING_HALF_UP:     rules.RoundHalfUp,
	walletv1.CommissionRounding_COMMISSION_ROUNDING_UP:          rules.RoundUp,
}

// SettleCoup moves all the money of one chemin de fer coup in one
// transaction, keyed by coup_id (RULES.md CF-STANDOFF, CF-BANK-WINS,
// CF-BANK-LOSES, CF-UNCOVERED, CF-BANK-SIZE).
func (s *Service) SettleCoup(ctx context.Context, req *walletv1.SettleCoupRequest) (*walletv1.SettleCoupResponse, error) {
	if err := firstErr(checkID("coup_id", req.GetCoupId()), checkID("bank_hold_id", req.GetBankHoldId())); err != nil {
		return nil, err
	}
	outcome, ok := outcomes[req.GetOutcome()]
	if !ok {
		return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "outcome %s is not a coup outcome", req.GetOutcome())
	}
	rounding, ok := roundings[req.GetCommissionRounding()]
	if !ok {
		return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "unknown commission_rounding %d", req.GetCommissionRounding())
	}
	if bp := req.GetCommissionBp(); bp < 0 || bp > rules.MaxCommissionBP {
		return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "commission_bp %d outside 0..%d", bp, rules.MaxCommissionBP)
	}
	if req.GetBankLimit() < 0 {
		return nil, failf(codes.InvalidArgument, reasonInvalidAmount, "bank_limit %d is negative", req.GetBankLimit())
	}
	if len(req.GetBets()) > maxBets {
		return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "more than %d bets", maxBets)
	}
	seen := map[string]bool{req.GetBankHoldId(): true}
	for i, b := range req.GetBets() {
		if err := firstErr(checkID("bets.hold_id", b.GetHoldId()), checkAmount("bets.amount", b.GetAmount())); err != nil {
			return nil, err
		}
		if seen[b.GetHoldId()] {
			return nil, failf(codes.InvalidArgument, reasonInvalidArgument,
				"bet %d: hold %q is the bank's or appears twice", i, b.GetHoldId())
		}
		seen[b.GetHoldId()] = true
	}
	hr := rules.HouseRules{CommissionBP: req.GetCommissionBp(), CommissionRounding: rounding}
	hashed := req // release_bank_hold is not part of the idempotency
	if req.GetReleaseBankHold() {
		hashed = proto.CloneOf(req)
		hashed.ReleaseBankHold = false
	}
	r, err := idempotent(ctx, s, "SettleCoup", coupKey(req.GetCoupId()), hashed, newMsg[walletv1.SettleCoupResponse],
		func(t *txn) (*walletv1.SettleCoupResponse, error) {
			return s.settle(t, req, outcome, hr)
		})
	if err != nil {
		return nil, err
	}
	// Source: RULES.md CF-BANK-WINS (the commission's rounding is logged)
	s.log.InfoContext(ctx, "coup settled", "coup_id", r.GetCoupId(), "outcome", outcome.String(),
		"bets", len(req.GetBets()), "banker_winnings", r.GetBankerWinnings(), "commission", r.GetCommission(),
		"commission_bp", hr.CommissionBP, "commission_rounding", hr.CommissionRounding.String(),
		"commission_exempt", req.GetCommissionExempt(), "banker_net", r.GetBankerNet(), "new_bank", r.GetNewBank())
	return r, nil
}

func (s *Service) settle(t *txn, req *walletv1.SettleCoupRequest, outcome rules.Outcome, hr rules.HouseRules) (*walletv1.SettleCoupResponse, error) {
	bank, err := t.openHold(req.GetBankHoldId())
	if err != nil {
		return nil, err
	}
	banker, err := t.mustAccount(bank.GetAccountId())
	if err != nil {
		return nil, err
	}
	if bank.GetAmount() <= 0 {
		return nil, failf(codes.FailedPrecondition, reasonInvalidAmount,
			"bank hold %q holds %d: the bank is lost (void it)", bank.GetHoldId(), bank.GetAmount())
	}
	bets := make([]int64, len(req.GetBets()))
	holds := make([]*walletv1.Hold, len(req.GetBets()))
	for i, b := range req.GetBets() {
		h, err := t.openHold(b.GetHoldId())
		if err != nil {
			return nil, err
		}
		if h.GetAccountId() == banker.id {
			return nil, failf(codes.InvalidArgument, reasonInvalidArgument,
				"bet %d: hold %q is on the banker's own account", i, h.GetHoldId())
		}
		if h.GetAmount() != b.GetAmount() {
			return nil, failf(codes.InvalidArgument, reasonInvalidAmount,
				"bet %d: amount %d differs from hold %q's %d", i, b.GetAmount(), h.GetHoldId(), h.GetAmount())
		}
		bets[i], holds[i] = b.GetAmount(), h
	}
	// Source: RULES.md CF-BET-LIMIT (bets over the bank: BETS_EXCEED_BANK;
	// their total overflowing: INVALID_AMOUNT)
	st, err := rules.SettleChemin(bank.GetAmount(), bets, outcome, hr, req.GetCommissionExempt())
	if err != nil {
		return nil, rulesError(err)
	}
	var trs []*walletv1.Transfer
	for i, h := range holds {
		punter, err := t.mustAccount(h.GetAccountId())
		if err != nil {
			return nil, err
		}
		// Every outcome closes the bet's hold: the stake is released back
		// to the punter's available balance (CF-STANDOFF: and nothing moves).
		t.close(h, punter, walletv1.HoldState_HOLD_STATE_SETTLED)
		if st.Lost[i] > 0 { // Source: RULES.md CF-BANK-WINS
			tr, err := t.transfer(punter, banker, st.Lost[i], reasonBetLost, req.GetCoupId())
			if err != nil {
				return nil, err
			}
			trs = append(trs, tr)
		}
		if st.Payouts[i] > 0 { // Source: RULES.md CF-BANK-LOSES
			tr, err := t.transfer(banker, punter, st.Payouts[i], reasonBetWon, req.GetCoupId())
			if err != nil {
				return nil, err
			}
			trs = append(trs, tr)
		}
	}
	if st.Commission > 0 { // Source: RULES.md CF-BANK-WINS (commission)
		house, err := t.system(AccountCommission, banker.currency)
		if err != nil {
			return nil, err
		}
		tr, err := t.transfer(banker, house, st.Commission, reasonCommission, req.GetCoupId())
		if err != nil {
			return nil, err
		}
		trs = append(trs, tr)
	}
	// Source: RULES.md CF-BANK-SIZE, CF-UNCOVERED: the bank hold becomes the
	// new bank and stays open; the uncovered part never moved.
	// CF-BANK-LIMIT: the excess over the limit is set aside, released from
	// the bank hold to the banker's available balance.
	newBank, setAside := rules.BankLimit(st.NewBank, req.GetBankLimit())
	t.resize(bank, banker, newBank)
	// Source: RULES.md CF-LOSE: the bank passes; its hold's remainder
	// goes back to the banker in this transaction, as VoidHold would.
	released := req.GetReleaseBankHold() && outcome == rules.OutcomeBankLoses
	if released {
		t.close(bank, banker, walletv1.HoldState_HOLD_STATE_VOIDED)
	}
	var stake *walletv1.StakeCheck
	if newBank > 0 && isPlayerAccount(banker.id) && !released {
		// Whether his limits allow the bank to stay at stake, as CheckStake
		// right after the commit (this coup's transfers, each of which
		// moves the banker's money, noted in his play as flush notes
		// them), so that the table need not ask.
		var played *int64
		if len(trs) > 0 {
			played = &st.BankerNet
		}
		if stake, err = t.stakeCheck(banker, newBank, played); err != nil {
			return nil, err
		}
	}
	return &walletv1.SettleCoupResponse{
		Uncovered:        st.Uncovered,
		SetAside:         setAside,
		CoupId:           req.GetCoupId(),
		Outcome:          req.GetOutcome(),
		Payouts:          st.Payouts,
		BankerWinnings:   st.BankerWinnings,
		Commission:       st.Commission,
		BankerNet:        st.BankerNet,
		NewBank:          newBank,
		Transfers:        trs,
		BankerStake:      stake,
		BankHoldReleased: released,
	}, nil
}

// rulesError maps an error of rules.SettleChemin to a status.
func rulesError(err error) error {
	switch {
	case errors.Is(err, rules.ErrBetsExceedBank):
		return failf(codes.InvalidArgument, reasonBetsExceedBank, "%v", err)
	case errors.Is(err, rules.ErrInvalidAmount), errors.Is(err, rules.ErrOverflow):
		return failf(codes.InvalidArgument, reasonInvalidAmount, "%v", err)
	default:
		return failf(codes.InvalidArgument, reasonInvalidArgument, "%v", err)
	}
}

func newMsg[T any]() *T { return new(T) }

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
