package tablesvc

import (
	"regexp"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/chemmy/chemmy/services/kit/errs"
)

// domain is the ErrorInfo domain of this service's errors.
const domain = "table.chemmy"

// The reasons of chemmy.table.v1.ErrorReason, without the prefix: the one
// catalogue of this service's errors.
const (
	reasonInvalidArgument       = "INVALID_ARGUMENT"
	reasonInvalidHouseRule      = "INVALID_HOUSE_RULE"
	reasonHouseRuleUnsupported  = "HOUSE_RULE_UNSUPPORTED"
	reasonTableNotFound         = "TABLE_NOT_FOUND"
	reasonAlreadySeated         = "ALREADY_SEATED"
	reasonTableFull             = "TABLE_FULL"
	reasonNotSeated             = "NOT_SEATED"
	reasonNotYourTurn           = "NOT_YOUR_TURN"
	reasonBetExceedsBank        = "BET_EXCEEDS_BANK"
	reasonBankBelowMinimum      = "BANK_BELOW_MINIMUM"
	reasonWrongState            = "WRONG_STATE"
	reasonInsufficientFunds     = "INSUFFICIENT_FUNDS"
	reasonBankerCannotBet       = "BANKER_CANNOT_BET"
	reasonNotBanker             = "NOT_BANKER"
	reasonRoleNotAllowed        = "ROLE_NOT_ALLOWED"
	reasonRequestIDReused       = "REQUEST_ID_REUSED"
	reasonDependencyUnavailable = "DEPENDENCY_UNAVAILABLE"
	reasonInvalidAmount         = "INVALID_AMOUNT"
	reasonOddsUnavailable       = "ODDS_UNAVAILABLE"
	reasonBidTooLow             = "BID_TOO_LOW"
	reasonHouseLimitReached     = "HOUSE_LIMIT_REACHED"
	reasonRequestAbandoned      = "REQUEST_ABANDONED"
	reasonShoeUnusable          = "SHOE_UNUSABLE"
	reasonTableClosed           = "TABLE_CLOSED"
	reasonShoeNotFound          = "SHOE_NOT_FOUND"
	// reasonLimitReached: the wallet refused the stake or the seat for a
	// player's responsible-gaming limit (metadata "limit" names it).
	reasonLimitReached = "LIMIT_REACHED"
	// Seamless wallet mode: the operator's wallet refused the stake's
	// debit (metadata "operator_code"), or did not answer it.
	reasonOperatorRefused     = "OPERATOR_REFUSED"
	reasonOperatorUnavailable = "OPERATOR_UNAVAILABLE"
	// reasonSessionExpired: the player's game-launch session is over
	// (the wallet's SESSION_EXPIRED).
	reasonSessionExpired     = "SESSION_EXPIRED"
	reasonDependencyRefused  = "DEPENDENCY_REFUSED"
	reasonCoupNotInPlay      = "COUP_NOT_IN_PLAY"
	reasonCertificationTable = "CERTIFICATION_TABLE"
	reasonWrongVariant       = "WRONG_VARIANT"
	// Round history (history.go).
	reasonRoundNotFound = "ROUND_NOT_FOUND"
	reasonNotYourRound  = "NOT_YOUR_ROUND"
	reasonRoundInPlay   = "ROUND_IN_PLAY"

	// The seed protocol's (seeds.go).
	reasonSeedCommitmentRequired = "SEED_COMMITMENT_REQUIRED"
	reasonSeedsNotCollecting     = "SEEDS_NOT_COLLECTING"
	reasonSeedsFull              = "SEEDS_FULL"
	reasonSeedWithheld           = "SEED_WITHHELD"
	reasonSeedAlreadyCommitted   = "SEED_ALREADY_COMMITTED"
	reasonSeedMismatch           = "SEED_MISMATCH"
	reasonNotRevealing           = "NOT_REVEALING"
	reasonSeedNotCommitted       = "SEED_NOT_COMMITTED"
	reasonCurrencyUnknown        = "CURRENCY_UNKNOWN"
	reasonNoRealityCheck         = "NO_REALITY_CHECK"
	reasonRealityCheckUnanswered = "REALITY_CHECK_UNANSWERED"
)

func fail(c codes.Code, reason, format string, args ...any) error {
	return errs.New(c, domain, reason, format, args...)
}

// fromDependency maps an error of shoe-svc or wallet-svc to this
// service's catalogue: insufficient funds stays a client error, an
// unreachable dependency becomes UNAVAILABLE DEPENDENCY_UNAVAILABLE (retry
// with the same request_id), anything else is internal.
func fromDependency(what string, err error) error {
	switch r := errs.Reason(err); {
	case r == reasonInsufficientFunds || r == "ACCOUNT_NOT_FOUND" || r == reasonLimitReached || r == reasonOperatorRefused:
		// Lack of funds, a responsible-gaming limit of the player's
		// (wallet SetPlayerLimits: metadata "limit"), or the operator's
		// refusal in seamless mode (metadata "operator_code"): the
		// wallet's metadata goes along.
		if r == "ACCOUNT_NOT_FOUND" {
			r = reasonInsufficientFunds
		}
		return errs.WithMetadata(codes.FailedPrecondition, domain, r, errs.Info(err).GetMetadata(),
			"%s: %s", what, status.Convert(err).Message())
	case r == reasonSessionExpired:
		// The player's game-launch session is over (wallet-svc's check,
		// or the operator's wallet refused the debit for it): nothing is
		// staked.
		return errs.WithMetadata(codes.FailedPrecondition, domain, r, errs.Info(err).GetMetadata(),
			"%s: %s", what, status.Convert(err).Message())
	case r == reasonOperatorUnavailable:
		return fail(codes.Unavailable, reasonOperatorUnavailable, "%s: %s", what, status.Convert(err).Message())
	case r == reasonRequestIDReused:
		// The wallet saw this request id with another request (e.g. a
		// retry with another amount after a refusal).
		return fail(codes.AlreadyExists, reasonRequestIDReused, "%s: the request_id was used for another request", what)
	case status.Code(err) == codes.InvalidArgument:
		return fail(codes.InvalidArgument, reasonInvalidArgument, "%s: %s", what, status.Convert(err).Message())
	case r == "SHOE_NOT_FOUND":
		return fail(codes.NotFound, reasonShoeNotFound, "%s: %s", what, status.Convert(err).Message())
	case status.Code(err) == codes.FailedPrecondition || status.Code(err) == codes.PermissionDenied:
		// The shoe or the wallet refused for a reason of its own (e.g. a
		// closed shoe, or one that belongs to another table).
		return fail(codes.FailedPrecondition, reasonDependencyRefused, "%s: %s (%s)", what, status.Convert(err).Message(), r)
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		return fail(codes.Unavailable, reasonDependencyUnavailable, "%s: %v", what, status.Convert(err).Message())
	}
	return status.Errorf(codes.Internal, "%s: %v", what, err)
}

// idPattern is what request, table and player ids may look like.
// At most 64 characters, so that the ids derived from a request id for
// the wallet and the shoe stay within their limits.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9_.:/-]{1,64}$`)

func checkID(field, v string) error {
	if !idPattern.MatchString(v) {
		return fail(codes.InvalidArgument, reasonInvalidArgument, "%s must be 1-64 characters of [A-Za-z0-9_.:/-], got %q", field, clip(v))
	}
	return nil
}

// clip shortens what an error message echoes of a client's input.
func clip(v string) string {
	if len(v) > 80 {
		return v[:80] + "..."
	}
	return v
}

// definite reports whether err is the wallet's own answer, as opposed to
// no answer (the hold may or may not exist).
func definite(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled, codes.Unknown:
		return false
	}
	return true
}
