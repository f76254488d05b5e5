package tablesvc

import (
	"context"

	"google.golang.org/grpc/codes"

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

// tableCurrency resolves a CreateTable currency_code: the currency and
// the suffix of the table's account ids ("" in the wallet's default
// currency, else "@<CUR>"). A code the wallet refuses is INVALID_ARGUMENT
// INVALID_ARGUMENT; the wallet is asked (GetAccount of house:commission
// in that currency: a code it accepts is either an account or NOT_FOUND).
func (s *Service) tableCurrency(ctx context.Context, code string) (cur, suffix string, err error) {
	def, err := s.defaultCurrency(ctx)
	if err != nil {
		return "", "", err
	}
	if code == "" || code == def {
		return def, "", nil
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err = s.wallet.GetAccount(cctx, &walletv1.GetAccountRequest{AccountId: "house:commission@" + code})
	switch r := errs.Reason(err); {
	case err == nil, r == "ACCOUNT_NOT_FOUND":
		return code, "@" + code, nil
	case r == "INVALID_ACCOUNT" || r == "INVALID_ARGUMENT":
		return "", "", fail(codes.InvalidArgument, reasonInvalidArgument,
			"currency_code %q is not a currency the wallet accepts: 3..12 characters [A-Z0-9] (an ISO 4217 or chip code)", clip(code))
	default:
		return "", "", fromDependency("currency "+clip(code), err)
	}
}

// account is the id of player's wallet account in t's currency.
func (t *table) account(player string) string { return "player:" + player + t.AccountSuffix }
