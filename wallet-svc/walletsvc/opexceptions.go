package walletsvc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/opwallet"
)

// The exception list of seamless mode: the credits, rollbacks and round
// ends the operator's wallet refused for good. The relay takes such an
// entry out of the outbox (it no longer sends it by itself, and nothing
// else waits for it but its round's round_end and, for a rollback, the
// round's later credits: opoutbox.go "Order"), marks its transaction
// "refused" and records an opException, open; staff retry it under a
// new transaction id (RetryOperatorException) or settle it outside
// chemmy (SettleOperatorException), and the exception keeps who did
// which, when and why, for ever ("op-exceptions"; the open ones are
// indexed in "op-exceptions-open"). Nothing moves in chemmy's ledger
// either way: the money left the player's account for external:operator
// when the movement was decided.
//
// A refusal is for good when the operator's code says the same
// transaction will always be refused (refusedForGood: the protocol has
// the operator answer a repeated id with its first answer, and these
// codes name something wrong with the transaction or the player, not a
// passing state), or when the operator refused the entry
// relayRefusalLimit times in a row whatever its code (PLAYER_BLOCKED,
// LIMIT_REACHED, a code of its own...; about a minute with the default
// backoff). INVALID_SIGNATURE is not a decision on the transaction (the
// shared secret is wrong, which the probe reports): it is retried like a
// call without an answer, as a timeout or a 5xx is, for as long as it
// takes, since its outcome is unknown.

// relayRefusalLimit is how many refusals make an entry an exception
// whatever the code.
const relayRefusalLimit = 10

// refusedForGood are the refusal codes that make an entry an exception
// at once.
var refusedForGood = map[string]bool{
	opwallet.CodeUnknownPlayer:         true,
	opwallet.CodeCurrencyMismatch:      true,
	opwallet.CodeInvalidRequest:        true,
	opwallet.CodeTransactionIDReused:   true,
	opwallet.CodeTransactionRolledBack: true,
}

// Exception states, causes and the longest reason kept.
const (
	excOpen    = "open"
	excRetried = "retried"
	excSettled = "settled_outside"

	causeForGood    = "refused_for_good"
	causeRepeatedly = "refused_repeatedly"

	maxResolveReason = 500
)

var (
	reasonExceptionNotFound = reason(walletv1.ErrorReason_ERROR_REASON_OPERATOR_EXCEPTION_NOT_FOUND)
	reasonExceptionResolved = reason(walletv1.ErrorReason_ERROR_REASON_OPERATOR_EXCEPTION_RESOLVED)
)

// opException is one exception as stored in "op-exceptions".
type opException struct {
	Seq      uint64    `json:"seq"`
	TxID     string    `json:"tx"`
	Kind     string    `json:"kind"`
	State    string    `json:"state"`
	Cause    string    `json:"cause"`
	Status   int       `json:"status"`
	Code     string    `json:"code"`
	Message  string    `json:"message,omitempty"`
	Refusals int       `json:"refusals"`
	Opened   time.Time `json:"opened"`
	// Resolved: when, by whom (subject, role), why, under which request,
	// and a retry's transaction.
	Resolved  time.Time `json:"resolved,omitzero"`
	By        string    `json:"by,omitempty"`
	Role      string    `json:"role,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	RequestID string    `json:"request_id,omitempty"`
	RetryID   string    `json:"retry_id,omitempty"`
}

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// noteRefusal records the operator's refusal of entry e: its code and
// count on the transaction and, when the refusal is for good or the
// relayRefusalLimit-th, the exception it becomes (returned; nil while it
// is retried).
func (s *Service) noteRefusal(e outboxEntry, ref *opwallet.Refusal) (exc *opException, refusals int, err error) {
	err = s.commit.Update(func(tx *bolt.Tx) error {
		exc, refusals = nil, 0
		k := seqKey(e.seq)
		ob := tx.Bucket(bucketOpOutbox)
		if ob.Get(k) == nil {
			return nil
		}
		x, err := getTx(tx, e.x.ID)
		if err != nil {
			return err
		}
		now := s.now().UTC()
		x.Refusals++
		x.OperatorCode, x.Updated = ref.Code, now
		refusals = x.Refusals
		cause := causeRepeatedly
		if refusedForGood[ref.Code] {
			cause = causeForGood
		} else if x.Refusals < relayRefusalLimit {
			return putTx(tx, x)
		}
		if err := ob.Delete(k); err != nil {
			return err
		}
		b := tx.Bucket(bucketOpExceptions)
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		exc = &opException{Seq: seq, TxID: x.ID, Kind: x.Kind, State: excOpen, Cause: cause, Status: ref.Status,
			Code: ref.Code, Message: ref.Message, Refusals: x.Refusals, Opened: now}
		if err := putJSON(tx, bucketOpExceptions, string(seqKey(seq)), exc); err != nil {
			return err
		}
		if err := tx.Bucket(bucketOpExcOpen).Put(seqKey(seq), []byte(x.ID)); err != nil {
			return err
		}
		x.Status, x.Exception, x.ExceptionSeq = statusRefused, excOpen, seq
		return putTx(tx, x)
	})
	return exc, refusals, err
}

// openExceptions counts the open exceptions by kind.
func openExceptions(tx *bolt.Tx) (map[string]int, error) {
	n := map[string]int{}
	err := tx.Bucket(bucketOpExcOpen).ForEach(func(_, v []byte) error {
		x, err := getTx(tx, string(v))
		n[x.Kind]++
		return err
	})
	return n, err
}

// queueCounts is, per operator (the operator of the transaction's
// account), the operator outbox's entries and the open exceptions by
// kind, and the operators with a seamless wallet (the gauges
// chemmy_operator_outbox_depth and chemmy_operator_exceptions_open).
func (s *Service) queueCounts() (depth map[string]int, open map[string]map[string]int, ops []string, err error) {
	if s.db == nil {
		return nil, nil, nil, errors.New("wallet: closed")
	}
	depth, open = map[string]int{}, map[string]map[string]int{}
	err = s.db.View(func(tx *bolt.Tx) error {
		err := tx.Bucket(bucketOpOutbox).ForEach(func(_, v []byte) error {
			x, err := getTx(tx, string(v))
			if err != nil {
				return err
			}
			depth[operatorOfKey(x.Account, s.opID)]++
			return nil
		})
		if err != nil {
			return err
		}
		return tx.Bucket(bucketOpExcOpen).ForEach(func(_, v []byte) error {
			x, err := getTx(tx, string(v))
			if err != nil {
				return err
			}
			op := operatorOfKey(x.Account, s.opID)
			if open[op] == nil {
				open[op] = map[string]int{}
			}
			open[op][x.Kind]++
			return nil
		})
	})
	return depth, open, s.walletOperators(), err
}

// loadException reads the exception of transaction id (NOT_FOUND
// OPERATOR_EXCEPTION_NOT_FOUND when it has none) and the transaction.
func loadException(tx *bolt.Tx, id string) (*opException, *opTx, error) {
	x := &opTx{}
	found, err := getJSON(tx, bucketOpTx, id, x)
	if err != nil {
		return nil, nil, err
	}
	notFound := failf(codes.NotFound, reasonExceptionNotFound, "no operator exception for transaction %q", id)
	if !found || x.ExceptionSeq == 0 {
		return nil, nil, notFound
	}
	exc := &opException{}
	if found, err := getJSON(tx, bucketOpExceptions, string(seqKey(x.ExceptionSeq)), exc); err != nil {
		return nil, nil, err
	} else if !found {
		return nil, nil, notFound
	}
	return exc, x, nil
}

// resolveException closes the open exception of transaction id as state
// (excRetried, excSettled) in t, for the caller of ctx, and returns it
// with its transaction: the fields every resolution shares.
func (s *Service) resolveException(ctx context.Context, t *txn, id, state, why, reqID string) (*opException, *opTx, error) {
	exc, x, err := loadException(t.tx, id)
	if err != nil {
		return nil, nil, err
	}
	if !t.sc.sees(operatorOfKey(x.Account, s.opID)) { // another operator's: as if it did not exist
		return nil, nil, failf(codes.NotFound, reasonExceptionNotFound, "no operator exception for transaction %q", id)
	}
	if exc.State != excOpen {
		return nil, nil, errs.WithMetadata(codes.FailedPrecondition, Domain, reasonExceptionResolved, map[string]string{"state": exc.State},
			"the exception of %s was %s already (%s by %s)", id, exc.State, exc.Resolved.Format(time.RFC3339), exc.By)
	}
	c, _ := auth.FromContext(ctx)
	now := t.nowT.UTC()
	exc.State, exc.Resolved, exc.By, exc.Role, exc.Reason, exc.RequestID = state, now, c.Subject, string(c.Role), why, reqID
	if err := putJSON(t.tx, bucketOpExceptions, string(seqKey(exc.Seq)), exc); err != nil {
		return nil, nil, err
	}
	if err := t.tx.Bucket(bucketOpExcOpen).Delete(seqKey(exc.Seq)); err != nil {
		return nil, nil, err
	}
	x.Exception, x.Updated = state, now
	t.op.txs[x.ID] = x
	return exc, x, nil
}

// checkResolve validates the fields of a retry or settlement.
func (s *Service) checkResolve(reqID, txID, why string, needWhy bool) error {
	if err := firstErr(checkID("request_id", reqID), checkID("transaction_id", txID)); err != nil {
		return err
	}
	if len(why) > maxResolveReason {
		return failf(codes.InvalidArgument, reasonInvalidArgument, "reason is longer than %d bytes", maxResolveReason)
	}
	if needWhy && strings.TrimSpace(why) == "" {
		return failf(codes.InvalidArgument, reasonInvalidArgument, "reason is required: say how it was settled")
	}
	if s.op == nil {
		return failf(codes.NotFound, reasonExceptionNotFound, "a transfer wallet has no operator exceptions")
	}
	return nil
}

// retryID is the id of the retry of transaction id: id.r2, then .r3...
func retryID(id string) string {
	if i := strings.LastIndex(id, ".r"); i > 0 {
		if n, err := strconv.Atoi(id[i+2:]); err == nil && n >= 2 {
			return id[:i] + ".r" + strconv.Itoa(n+1)
		}
	}
	return id + ".r2"
}

// RetryOperatorException queues an open exception's movement again under
// a new transaction id and closes the exception as retried (the proto).
func (s *Service) RetryOperatorException(ctx context.Context, req *walletv1.RetryOperatorExceptionRequest) (*walletv1.RetryOperatorExceptionResponse, error) {
	if err := s.checkResolve(req.GetRequestId(), req.GetTransactionId(), req.GetReason(), false); err != nil {
		return nil, err
	}
	r, err := idempotent(ctx, s, "RetryOperatorException", reqKey(req.GetRequestId()), req, newMsg[walletv1.RetryOperatorExceptionResponse],
		func(t *txn) (*walletv1.RetryOperatorExceptionResponse, error) {
			exc, x, err := s.resolveException(ctx, t, req.GetTransactionId(), excRetried, req.GetReason(), req.GetRequestId())
			if err != nil {
				return nil, err
			}
			n := &opTx{ID: retryID(x.ID), Kind: x.Kind, Status: statusPending, Account: x.Account, Player: x.Player,
				Round: x.Round, Table: x.Table, Amount: x.Amount, Currency: x.Currency, Reason: x.Reason,
				RolledBack: x.RolledBack, RoundStatus: x.RoundStatus, RetryOf: x.ID, Created: exc.Resolved, Updated: exc.Resolved}
			if t.tx.Bucket(bucketOpTx).Get([]byte(n.ID)) != nil {
				return nil, fmt.Errorf("wallet: retry id %s of %s is taken", n.ID, x.ID)
			}
			exc.RetryID, x.RetryID = n.ID, n.ID
			if err := putJSON(t.tx, bucketOpExceptions, string(seqKey(exc.Seq)), exc); err != nil {
				return nil, err
			}
			t.op.enqueue(n)
			return &walletv1.RetryOperatorExceptionResponse{Exception: exc.proto(x), Retry: n.proto()}, nil
		})
	if err == nil {
		s.log.Warn("operator exception retried", "transaction_id", req.GetTransactionId(), "retry_transaction_id",
			r.GetRetry().GetTransactionId(), "by", r.GetException().GetResolvedBy(), "role", r.GetException().GetResolvedByRole(),
			"reason", req.GetReason(), "request_id", req.GetRequestId())
	}
	return r, err
}

// SettleOperatorException closes an open exception as settled outside
// chemmy (the proto).
func (s *Service) SettleOperatorException(ctx context.Context, req *walletv1.SettleOperatorExceptionRequest) (*walletv1.SettleOperatorExceptionResponse, error) {
	if err := s.checkResolve(req.GetRequestId(), req.GetTransactionId(), req.GetReason(), true); err != nil {
		return nil, err
	}
	r, err := idempotent(ctx, s, "SettleOperatorException", reqKey(req.GetRequestId()), req, newMsg[walletv1.SettleOperatorExceptionResponse],
		func(t *txn) (*walletv1.SettleOperatorExceptionResponse, error) {
			exc, x, err := s.resolveException(ctx, t, req.GetTransactionId(), excSettled, req.GetReason(), req.GetRequestId())
			if err != nil {
				return nil, err
			}
			return &walletv1.SettleOperatorExceptionResponse{Exception: exc.proto(x)}, nil
		})
	if err == nil {
		s.notifyOperator() // the round's round_end may go now
		x := r.GetException().GetTransaction()
		s.log.Warn("operator exception settled outside chemmy", "transaction_id", x.GetTransactionId(), "kind", x.GetKind(),
			"player_id", x.GetPlayerId(), "round_id", x.GetRoundId(), "amount", x.GetAmount(), "currency", x.GetCurrencyCode(),
			"by", r.GetException().GetResolvedBy(), "role", r.GetException().GetResolvedByRole(), "reason", req.GetReason(),
			"request_id", req.GetRequestId())
	}
	return r, err
}

// ListOperatorExceptions pages through the exception list (the proto).
func (s *Service) ListOperatorExceptions(ctx context.Context, req *walletv1.ListOperatorExceptionsRequest) (*walletv1.ListOperatorExceptionsResponse, error) {
	sc := s.scopeOf(ctx)
	if err := checkReportOperator(sc, req.GetOperatorId()); err != nil {
		return nil, err
	}
	size, after, err := paging(req.GetPageSize(), req.GetPageToken())
	if err != nil {
		return nil, err
	}
	// The exceptions of the operator's own seamless wallet (opwallets.go):
	// another operator's are skipped.
	out := &walletv1.ListOperatorExceptionsResponse{OperatorId: sc.op}
	err = s.db.View(func(tx *bolt.Tx) error {
		n, err := s.countOpen(tx, sc)
		if err != nil {
			return err
		}
		out.OpenCount = n
		b := tx.Bucket(bucketOpExcOpen)
		if req.GetIncludeResolved() {
			b = tx.Bucket(bucketOpExceptions)
		}
		c := b.Cursor()
		for k, _ := c.Seek(seqKey(after + 1)); k != nil; k, _ = c.Next() {
			if len(out.Exceptions) == size {
				out.NextPageToken = strconv.FormatUint(after, 10)
				break
			}
			after = binary.BigEndian.Uint64(k)
			exc := &opException{}
			if found, err := getJSON(tx, bucketOpExceptions, string(k), exc); err != nil || !found {
				if err == nil {
					err = fmt.Errorf("wallet: operator exception %d not recorded", after)
				}
				return err
			}
			x, err := getTx(tx, exc.TxID)
			if err != nil {
				return err
			}
			if !sc.sees(operatorOfKey(x.Account, s.opID)) {
				continue
			}
			out.Exceptions = append(out.Exceptions, exc.proto(x))
		}
		return nil
	})
	if err != nil {
		return nil, s.internal("ListOperatorExceptions", err)
	}
	return out, nil
}

func (e *opException) proto(x *opTx) *walletv1.OperatorException {
	p := &walletv1.OperatorException{Transaction: x.proto(), State: e.State, Cause: e.Cause, OperatorStatus: int32(e.Status),
		OperatorCode: e.Code, OperatorMessage: e.Message, Refusals: int32(e.Refusals), OpenTime: timestamppb.New(e.Opened),
		ResolvedBy: e.By, ResolvedByRole: e.Role, ResolveReason: e.Reason, ResolveRequestId: e.RequestID, RetryTransactionId: e.RetryID}
	if !e.Resolved.IsZero() {
		p.ResolveTime = timestamppb.New(e.Resolved)
	}
	return p
}

// checkReportOperator refuses (INVALID_ARGUMENT) a report or exception
// list request naming an operator other than the call's (scopeFor took a
// service's or a deployment-wide auditor's operator_id already).
func checkReportOperator(sc scope, id string) error {
	if id != "" && id != sc.op {
		return failf(codes.InvalidArgument, reasonInvalidArgument, "operator_id %q: you act for operator %q", id, sc.op)
	}
	return nil
}

// countOpen counts the open exceptions of the scope's operator.
func (s *Service) countOpen(tx *bolt.Tx, sc scope) (int64, error) {
	var n int64
	err := tx.Bucket(bucketOpExcOpen).ForEach(func(_, v []byte) error {
		x, err := getTx(tx, string(v))
		if err != nil {
			return err
		}
		if sc.sees(operatorOfKey(x.Account, s.opID)) {
			n++
		}
		return nil
	})
	return n, err
}

// exceptionBlockers lists the open exceptions for MigrateMode: money
// still owed to, or by, the operator's wallet.
func exceptionBlockers(tx *bolt.Tx) ([]string, error) {
	var out []string
	err := tx.Bucket(bucketOpExcOpen).ForEach(func(_, v []byte) error {
		x, err := getTx(tx, string(v))
		if err != nil {
			return err
		}
		line := fmt.Sprintf("operator exception open: %s %s", x.Kind, x.ID)
		if x.Amount != 0 {
			line += fmt.Sprintf(" of %d (minor units of %s)", x.Amount, x.Currency)
		}
		out = append(out, line+fmt.Sprintf(" for %s in round %s, refused %s (retry it, or settle it outside chemmy: ListOperatorExceptions)",
			x.Player, x.Round, x.OperatorCode))
		return nil
	})
	return out, err
}
