package tablesvc

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// Per-table currency. A table plays in one currency, fixed at creation
// (CreateTableRequest.currency_code). wallet-svc keeps an account per
// player and currency: "player:<id>" in its default currency,
// "player:<id>@<CUR>" in another (a suffix of the default currency is
// refused). table-svc learns the wallet's default currency from the
// wallet itself, once, on the first CreateTable that needs it: the
// currency_code of GetAccount("house:commission"), an account the wallet
// keeps in its default currency from its first start. It is cached for the
// life of the process (the wallet's default is a deployment setting,
// wallet-svc -currency, not changed under running tables). Each table
// stores its currency and the suffix of its accounts, so the money calls
// of a coup need no further question to the wallet.
//
// Which codes a table may be in, and each one's exponent (its minor unit:
// EUR 2, JPY 0, KWD 3), is the wallet's to say (WalletService.GetCurrency:
// ISO 4217's codes and the ones its deployment configured, wallet-svc
// -currencies): a code it does not accept opens no table
// (CURRENCY_UNKNOWN). The table stores the exponent with its currency;
// every view of the table (Table.currency_exponent), every event
// (TableEvent.currency_exponent) and every round (Round.currency_exponent)
// carries it, so a client shows 359.50 EUR, not 35950. A table stored
// before exponents has none: its view takes ISO 4217's for an ISO code
// (tableExponent) and leaves it unset for another.

// defaultCurrency returns the wallet's default currency, asking it the
// first time (UNAVAILABLE DEPENDENCY_UNAVAILABLE while it cannot answer).
func (s *Service) defaultCurrency(ctx context.Context) (string, error) {
	s.currency.mu.Lock()
	defer s.currency.mu.Unlock()
	if s.currency.code != "" {
		return s.currency.code, nil
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := s.wallet.GetAccount(cctx, &walletv1.GetAccountRequest{AccountId: "house:commission"})
	if err != nil {
		return "", fromDependency("the wallet's default currency", err)
	}
	s.currency.code = resp.GetAccount().GetCurrencyCode()
	return s.currency.code, nil
}

// currencyExponent is the exponent of a currency the wallet accepts for
// operator op (its wallet operator_id, "" for the default operator),
// asked of the wallet (GetCurrency) once per code and process for the
// default operator, at every call for another (whose operators-file
// entry may list fewer currencies, re-read by the wallet without
// restart): INVALID_ARGUMENT CURRENCY_UNKNOWN for a code it does not
// accept.
func (s *Service) currencyExponent(ctx context.Context, code, op string) (int32, error) {
	s.currency.mu.Lock()
	e, ok := s.currency.exponents[code]
	s.currency.mu.Unlock()
	if ok && op == "" {
		return e, nil
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := s.wallet.GetCurrency(cctx, &walletv1.GetCurrencyRequest{CurrencyCode: code, OperatorId: op})
	switch {
	case errs.Reason(err) == reasonCurrencyUnknown:
		return 0, fail(codes.InvalidArgument, reasonCurrencyUnknown,
			"currency_code %q is not one the wallet accepts (an active ISO 4217 code or one configured, and one of the operator's): %s", clip(code), status.Convert(err).Message())
	case err != nil:
		return 0, fromDependency("currency "+clip(code), err)
	case resp.GetCurrency().Exponent == nil:
		return 0, fail(codes.Unavailable, reasonDependencyUnavailable, "the wallet gave no exponent for currency %q", clip(code))
	}
	e = resp.GetCurrency().GetExponent()
	s.currency.mu.Lock()
	if s.currency.exponents == nil {
		s.currency.exponents = map[string]int32{}
	}
	s.currency.exponents[code] = e
	s.currency.mu.Unlock()
	return e, nil
}

// tableCurrency resolves a CreateTable currency_code: the currency, the
// suffix of the table's account ids ("" in the wallet's default
// currency, else "@<CUR>") and its exponent. A malformed code is
// INVALID_ARGUMENT INVALID_ARGUMENT; a well-formed one the wallet does not
// accept for the table's operator op, INVALID_ARGUMENT CURRENCY_UNKNOWN.
func (s *Service) tableCurrency(ctx context.Context, code, op string) (cur, suffix string, exponent int32, err error) {
	if code != "" && !wellFormedCurrency(code) {
		return "", "", 0, fail(codes.InvalidArgument, reasonInvalidArgument,
			"currency_code %q is not a currency code: 3..12 characters [A-Z0-9] (an ISO 4217 or configured code)", clip(code))
	}
	def, err := s.defaultCurrency(ctx)
	if err != nil {
		return "", "", 0, err
	}
	cur = code
	if code == "" || code == def {
		cur = def
	} else {
		suffix = "@" + code
	}
	exponent, err = s.currencyExponent(ctx, cur, walletOperator(op))
	if err != nil {
		return "", "", 0, err
	}
	return cur, suffix, exponent, nil
}

// wellFormedCurrency: 3..12 characters [A-Z0-9].
func wellFormedCurrency(c string) bool {
	ok := len(c) >= 3 && len(c) <= 12
	for i := 0; ok && i < len(c); i++ {
		ok = 'A' <= c[i] && c[i] <= 'Z' || '0' <= c[i] && c[i] <= '9'
	}
	return ok
}
