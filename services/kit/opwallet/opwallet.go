// Package opwallet is the contract between chemmy and an operator's own
// wallet (seamless wallet mode): the Go interface wallet-svc calls for
// every money movement of a round, the wire format of the generic
// HTTP/JSON adapter, and its request signing. docs/operator-wallet.md is
// the operator's guide to the same contract, and
// docs/operator-wallet.openapi.yaml its OpenAPI 3.1 form (checked against
// these types by TestOpenAPIMatchesClient: change both together).
//
// In seamless mode the player's money lives in the operator's wallet.
// chemmy debits it before a bet or a bank stands, escrows the amount in its
// own ledger for the coup (holds), and credits back what the player is
// owed when the coup is settled or the bank comes back. Every call carries
// a unique transaction id (the operator's idempotency key), the round id
// (the coup id), the player, the table, an amount in minor units and the
// currency.
package opwallet

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Operation names: the last path element of each HTTP call
// (POST <base_url>/<operation>).
const (
	OpBalance  = "balance"
	OpDebit    = "debit"
	OpCredit   = "credit"
	OpRollback = "rollback"
	OpRoundEnd = "round_end"
)

// Round statuses sent with round_end.
const (
	RoundCompleted = "completed"
	RoundCancelled = "cancelled"
)

// Refusal codes an operator answers with a 4xx status (not 408 nor 429)
// and a signed JSON body {"code": ..., "message": ...}. A refusal is
// definite: chemmy does not retry the call, and refuses the bet with the
// code.
const (
	CodeInsufficientFunds     = "INSUFFICIENT_FUNDS"
	CodePlayerBlocked         = "PLAYER_BLOCKED"
	CodeLimitReached          = "LIMIT_REACHED"
	CodeUnknownPlayer         = "UNKNOWN_PLAYER"
	CodeCurrencyMismatch      = "CURRENCY_MISMATCH"
	CodeTransactionRolledBack = "TRANSACTION_ROLLED_BACK"
	CodeTransactionIDReused   = "TRANSACTION_ID_REUSED"
	CodeInvalidRequest        = "INVALID_REQUEST"
	CodeInvalidSignature      = "INVALID_SIGNATURE"
	// CodeSessionExpired: the player's game-launch session (session_id)
	// is over at the operator (expired, revoked, logged out): a debit so
	// refused refuses the bet, SESSION_EXPIRED, nothing staked. Credits,
	// rollbacks and round_ends must not be refused for it: they settle
	// money already staked.
	CodeSessionExpired = "SESSION_EXPIRED"
)

// BalanceRequest asks for a player's balance.
type BalanceRequest struct {
	PlayerID string `json:"player_id"`
	// Currency is the ISO 4217 code of the amounts, e.g. "EUR".
	Currency string `json:"currency"`
}

// Transaction is the body of debit, credit, rollback and round_end.
type Transaction struct {
	// TransactionID is unique per movement and the operator's idempotency
	// key: the same id sent again must get the first answer (with
	// Duplicate set), never a second movement. At most 128 bytes of
	// [A-Za-z0-9._:/-].
	TransactionID string `json:"transaction_id"`
	PlayerID      string `json:"player_id"`
	// RoundID is the coup id.
	RoundID string `json:"round_id"`
	TableID string `json:"table_id"`
	// Amount in minor units of Currency, > 0 (0 for round_end).
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
	// Reason says what the movement is for: debit "bet", "bank" (a bank
	// put up or raised) or "fee"; credit "payout" (what the player is owed
	// after a coup: winnings and returned stakes), "bank_return" (the
	// bank coming back) or "refund" (a voided bet whose debit already had
	// a credit in the round); empty for rollback and round_end.
	Reason string `json:"reason,omitempty"`
	// RolledBackID names the debit a rollback undoes.
	RolledBackID string `json:"rolled_back_transaction_id,omitempty"`
	// Status is RoundCompleted or RoundCancelled (round_end only).
	Status string `json:"status,omitempty"`
	// SessionID is the player's game-launch session the money moved in
	// (CreateLaunchSession's launch_session_id: the session the operator
	// created when it launched him): on the debit of a stake he placed
	// through it, and on the credits, rollbacks and round_end of that
	// money. Absent for a player who plays without one (an operator
	// wallet that ignores it keeps working).
	SessionID string `json:"session_id,omitempty"`
	// Time the movement was decided by chemmy (RFC 3339, UTC).
	Time time.Time `json:"time"`
}

// Result is the operator's answer to a successful call (HTTP 200).
type Result struct {
	// TransactionID echoes the request's (empty for balance).
	TransactionID string `json:"transaction_id,omitempty"`
	// OperatorTransactionID is the operator's own id of the movement,
	// kept for the reconciliation report.
	OperatorTransactionID string `json:"operator_transaction_id,omitempty"`
	// Balance is the player's balance after the call, minor units.
	Balance  int64  `json:"balance"`
	Currency string `json:"currency,omitempty"`
	// Duplicate is set when the transaction id was seen before: the
	// answer is the first one's and nothing moved again.
	Duplicate bool `json:"duplicate,omitempty"`
}

// Operator is an operator's wallet. Every method is idempotent by the
// transaction id. An error is a *Refusal (definite: nothing moved) or
// anything else (the outcome is unknown: the movement may or may not
// have happened; a debit with an unknown outcome is rolled back, a
// credit, rollback or round_end is retried with the same id until the
// operator answers).
type Operator interface {
	Balance(ctx context.Context, req BalanceRequest) (Result, error)
	Debit(ctx context.Context, tx Transaction) (Result, error)
	Credit(ctx context.Context, tx Transaction) (Result, error)
	Rollback(ctx context.Context, tx Transaction) (Result, error)
	RoundEnd(ctx context.Context, tx Transaction) (Result, error)
}

// Refusal is an operator's definite refusal (an HTTP 4xx answer).
type Refusal struct {
	// Status is the HTTP status (400-499).
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	// TransactionID echoes the refused transaction's id (debit, credit,
	// rollback, round_end): a refusal that does not name the transaction
	// sent is not taken as definite (it could be another call's, replayed).
	TransactionID string `json:"transaction_id,omitempty"`
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("operator refused (%d %s): %s", r.Status, r.Code, r.Message)
}

// IsRefusal reports whether err is a definite refusal and returns it.
func IsRefusal(err error) (*Refusal, bool) {
	var r *Refusal
	ok := errors.As(err, &r)
	return r, ok
}

// Signing. Every request and every answer carries two headers:
//
//	X-Chemmy-Timestamp: <unix seconds>
//	X-Chemmy-Signature: v1=<hex HMAC-SHA256(secret, timestamp "\n" path "\n" body)>
//
// where path is the request's URL path (e.g. "/wallet/debit"; an answer is
// signed over its request's path) and body the exact bytes sent. A side
// refuses a message whose signature does not match or whose timestamp is
// more than MaxSkew from its own clock.
const (
	HeaderTimestamp = "X-Chemmy-Timestamp"
	HeaderSignature = "X-Chemmy-Signature"
	MaxSkew         = 5 * time.Minute
)

// Sign returns the X-Chemmy-Signature value of a message.
func Sign(secret []byte, ts int64, path string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	fmt.Fprintf(m, "%d\n%s\n", ts, path)
	m.Write(body)
	return "v1=" + hex.EncodeToString(m.Sum(nil))
}

// Verify checks a message's timestamp header value and signature against
// secret at time now. It returns nil or an error saying what is wrong.
func Verify(secret []byte, now time.Time, tsHeader, sigHeader, path string, body []byte) error {
	ts, err := strconv.ParseInt(strings.TrimSpace(tsHeader), 10, 64)
	if err != nil {
		return fmt.Errorf("opwallet: bad %s %q", HeaderTimestamp, tsHeader)
	}
	if d := now.Sub(time.Unix(ts, 0)); d > MaxSkew || d < -MaxSkew {
		return fmt.Errorf("opwallet: %s is %s away from now", HeaderTimestamp, d.Round(time.Second))
	}
	want := Sign(secret, ts, path, body)
	if !hmac.Equal([]byte(want), []byte(strings.TrimSpace(sigHeader))) {
		return errors.New("opwallet: signature does not match")
	}
	return nil
}

// SecretEnv is the environment variable holding the shared HMAC secret
// when no secret file is given.
const SecretEnv = "CHEMMY_OPERATOR_SECRET"

// ReadSecret returns the shared HMAC secret: the contents of file when
// file is set, else getenv(SecretEnv); surrounding whitespace (the final
// newline) is trimmed and the bytes left are the key. It fails when the
// file cannot be read or the secret is empty.
func ReadSecret(file string, getenv func(string) string) ([]byte, error) {
	secret := getenv(SecretEnv)
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("opwallet: secret file: %w", err)
		}
		secret = string(b)
	}
	if secret = strings.TrimSpace(secret); secret == "" {
		return nil, fmt.Errorf("opwallet: no operator secret: give a secret file or set %s", SecretEnv)
	}
	return []byte(secret), nil
}

// SafeID is id when it fits an operator transaction or round id
// ([A-Za-z0-9._:/-], 1 to 96 bytes), else "h" and the hex of the first
// 16 bytes of its SHA-256.
func SafeID(id string) string {
	ok := len(id) > 0 && len(id) <= 96
	for i := 0; ok && i < len(id); i++ {
		c := id[i]
		ok = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("._:/-", c) >= 0
	}
	if ok {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "h" + hex.EncodeToString(sum[:16])
}

// FeeRound is the round id a fee charged under wallet request id
// requestID (ChargeFee: a seat fee, a bank auction's fee) is sent to the
// operator's wallet in: "fee-" and SafeID(requestID). table-svc records
// a round of its history under the same id before it asks for the fee,
// so GetRound answers it like a coup's round.
func FeeRound(requestID string) string { return "fee-" + SafeID(requestID) }
