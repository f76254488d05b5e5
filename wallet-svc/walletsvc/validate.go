package walletsvc

import (
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/currency"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// Domain is the ErrorInfo domain of this service's errors.
const Domain = "wallet.chemmy"

// reason returns the ErrorInfo reason of r: its name without the prefix.
func reason(r walletv1.ErrorReason) string {
	return strings.TrimPrefix(r.String(), "ERROR_REASON_")
}

var (
	reasonInvalidArgument  = reason(walletv1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
	reasonInvalidAmount    = reason(walletv1.ErrorReason_ERROR_REASON_INVALID_AMOUNT)
	reasonInvalidAccount   = reason(walletv1.ErrorReason_ERROR_REASON_INVALID_ACCOUNT)
	reasonAccountNotFound  = reason(walletv1.ErrorReason_ERROR_REASON_ACCOUNT_NOT_FOUND)
	reasonInsufficient     = reason(walletv1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS)
	reasonHoldNotFound     = reason(walletv1.ErrorReason_ERROR_REASON_HOLD_NOT_FOUND)
	reasonHoldNotOpen      = reason(walletv1.ErrorReason_ERROR_REASON_HOLD_NOT_OPEN)
	reasonBetsExceedBank   = reason(walletv1.ErrorReason_ERROR_REASON_BETS_EXCEED_BANK)
	reasonRequestIDReused  = reason(walletv1.ErrorReason_ERROR_REASON_REQUEST_ID_REUSED)
	reasonNotYourAccount   = reason(walletv1.ErrorReason_ERROR_REASON_NOT_YOUR_ACCOUNT)
	reasonHoldExpired      = reason(walletv1.ErrorReason_ERROR_REASON_HOLD_EXPIRED)
	reasonExceedsHold      = reason(walletv1.ErrorReason_ERROR_REASON_AMOUNT_EXCEEDS_HOLD)
	reasonCurrencyMismatch = reason(walletv1.ErrorReason_ERROR_REASON_CURRENCY_MISMATCH)
	reasonInvalidPageToken = reason(walletv1.ErrorReason_ERROR_REASON_INVALID_PAGE_TOKEN)
	reasonCurrencyUnknown  = reason(walletv1.ErrorReason_ERROR_REASON_CURRENCY_UNKNOWN)
)

// currencies are the wallet's default currency and the currencies it
// accepts (ISO 4217's and the configured ones, Config.Currencies).
type currencies struct {
	def   string
	known currency.Set
}

// exponent is code's exponent, when the wallet accepts code.
func (cs currencies) exponent(code string) *int32 {
	if e, ok := cs.known.Exponent(code); ok {
		return proto.Int32(int32(e))
	}
	return nil
}

func failf(c codes.Code, reason, format string, args ...any) error {
	return errs.New(c, Domain, reason, format, args...)
}

// Limits on identifiers and texts.
const (
	maxIDLen        = 128 // request_id, coup_id, hold_id
	maxPlayerIDLen  = 64
	maxReferenceLen = 256
	maxBets         = 1024
)

// checkID validates a request_id, coup_id or hold_id: 1..128 printable
// ASCII characters, no spaces.
func checkID(field, id string) error {
	if id == "" {
		return failf(codes.InvalidArgument, reasonInvalidArgument, "%s is required", field)
	}
	if len(id) > maxIDLen {
		return failf(codes.InvalidArgument, reasonInvalidArgument, "%s is longer than %d characters", field, maxIDLen)
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return failf(codes.InvalidArgument, reasonInvalidArgument, "%s has a character outside printable ASCII", field)
		}
	}
	return nil
}

// checkAmount requires amount > 0.
func checkAmount(field string, amount int64) error {
	if amount <= 0 {
		return failf(codes.InvalidArgument, reasonInvalidAmount, "%s must be positive, got %d", field, amount)
	}
	return nil
}

// validPlayerID reports whether id is 1..64 characters of [A-Za-z0-9_.-].
func validPlayerID(id string) bool {
	if id == "" || len(id) > maxPlayerIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// checkCurrencySuffix validates an account id's optional "@<CUR>" suffix:
// a valid currency other than the wallet's default (whose accounts carry
// no suffix, so that every account has one id), and one the wallet
// accepts (CURRENCY_UNKNOWN otherwise).
func checkCurrencySuffix(id string, cs currencies) (base string, err error) {
	id = bare(id) // a ledger key of another operator (operator.go)
	base, cur := splitCurrency(id, cs.def)
	if base != id && (cur == cs.def || validCurrency(cur) != nil) {
		return "", failf(codes.InvalidArgument, reasonInvalidAccount,
			"account_id %q: the suffix must be \"@<CUR>\" of a currency other than the default %s", id, cs.def)
	}
	if base != id {
		if _, ok := cs.known.Exponent(cur); !ok {
			return "", unknownCurrency(cur)
		}
	}
	return base, nil
}

// unknownCurrency is the CURRENCY_UNKNOWN refusal of code.
func unknownCurrency(code string) error {
	if len(code) > 16 {
		code = code[:16] + "..."
	}
	return failf(codes.InvalidArgument, reasonCurrencyUnknown,
		"currency %q is neither an active ISO 4217 code nor one this wallet was configured with (wallet-svc -currencies CODE:EXPONENT)", code)
}

// checkPlayerAccount requires "player:<id>" or "player:<id>@<CUR>".
func checkPlayerAccount(id string, cs currencies) error {
	base, err := checkCurrencySuffix(id, cs)
	if err != nil {
		return err
	}
	pid, ok := strings.CutPrefix(base, playerPrefix)
	if !ok || !validPlayerID(pid) {
		return failf(codes.InvalidArgument, reasonInvalidAccount,
			"account_id %q is not \"player:<id>\" with an id of 1..%d characters [A-Za-z0-9_.-] (and an optional \"@<CUR>\")", id, maxPlayerIDLen)
	}
	return nil
}

// checkFundable accepts a player account or house:bank (Deposit and
// Withdraw: the house's float is funded like a player).
func checkFundable(id string, cs currencies) error {
	if base, err := checkCurrencySuffix(id, cs); err == nil && base == AccountHouseBank {
		return nil
	}
	return checkPlayerAccount(id, cs)
}

// checkAccount accepts a player account or a system account.
func checkAccount(id string, cs currencies) error {
	base, err := checkCurrencySuffix(id, cs)
	if err != nil {
		return err
	}
	if base == AccountCommission || base == AccountExternal || base == AccountHouseBank || base == AccountOperator {
		return nil
	}
	return checkPlayerAccount(id, cs)
}

func checkReference(ref string) error {
	if len(ref) > maxReferenceLen {
		return failf(codes.InvalidArgument, reasonInvalidArgument, "reference is longer than %d bytes", maxReferenceLen)
	}
	return nil
}

// validCurrency: 3..12 characters of [A-Z0-9] (an ISO 4217 code or a chip
// code).
func validCurrency(c string) error {
	if len(c) < 3 || len(c) > 12 {
		return fmt.Errorf("wallet: currency %q: want 3..12 characters [A-Z0-9]", c)
	}
	for i := 0; i < len(c); i++ {
		if !('A' <= c[i] && c[i] <= 'Z' || '0' <= c[i] && c[i] <= '9') {
			return fmt.Errorf("wallet: currency %q: want 3..12 characters [A-Z0-9]", c)
		}
	}
	return nil
}
