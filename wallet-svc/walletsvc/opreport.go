package walletsvc

import (
	"context"
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// GetOperatorReport is the reconciliation report of seamless mode: the
// operator transactions created on one UTC day, oldest first (the
// "op-day" index), a page at a time, with the day's totals per kind and
// currency. The page token is the index sequence of the last transaction
// returned (decimal). See the proto for the totals. A credit, rollback or
// round_end the operator refused for good is "refused" with its
// exception's state (opexceptions.go), and the response counts the
// exceptions open now, whatever their day.
func (s *Service) GetOperatorReport(ctx context.Context, req *walletv1.GetOperatorReportRequest) (*walletv1.GetOperatorReportResponse, error) {
	sc := s.scopeOf(ctx)
	if err := checkReportOperator(sc, req.GetOperatorId()); err != nil {
		return nil, err
	}
	day, err := time.Parse(time.DateOnly, req.GetDay())
	if err != nil {
		return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "day %q is not YYYY-MM-DD", req.GetDay())
	}
	size, after, err := paging(req.GetPageSize(), req.GetPageToken())
	if err != nil {
		return nil, err
	}
	prefix := []byte(day.Format(time.DateOnly))
	// The report is of the operator's own seamless wallet (opwallets.go):
	// another operator's transactions are skipped.
	out := &walletv1.GetOperatorReportResponse{OperatorId: sc.op, Day: string(prefix)}
	type tk struct{ kind, cur string }
	totals := map[tk]*walletv1.OperatorTotals{}
	err = s.db.View(func(tx *bolt.Tx) error {
		n, err := s.countOpen(tx, sc)
		if err != nil {
			return err
		}
		out.OpenExceptionCount = n
		c := tx.Bucket(bucketOpDay).Cursor()
		for k, v := c.Seek(prefix); k != nil && hasPrefix(k, prefix); k, v = c.Next() {
			x, err := getTx(tx, string(v))
			if err != nil {
				return err
			}
			if !sc.sees(operatorOfKey(x.Account, s.opID)) {
				continue
			}
			tot := totals[tk{x.Kind, x.Currency}]
			if tot == nil {
				tot = &walletv1.OperatorTotals{Kind: x.Kind, CurrencyCode: x.Currency}
				totals[tk{x.Kind, x.Currency}] = tot
			}
			tot.Count++
			switch x.Status {
			case statusPending:
				tot.PendingCount++
				tot.PendingAmount += x.Amount
			case statusApplied, statusRolledBack, statusAcknowledged:
				tot.SettledCount++
				tot.SettledAmount += x.Amount
			case statusRefused:
				tot.RefusedCount++
				tot.RefusedAmount += x.Amount
				switch x.Exception {
				case excOpen:
					tot.ExceptionCount++
					tot.ExceptionAmount += x.Amount
				case excSettled:
					tot.SettledOutsideCount++
					tot.SettledOutsideAmount += x.Amount
				}
			}
			seq := binary.BigEndian.Uint64(k[len(prefix):])
			if seq <= after {
				continue
			}
			if len(out.Transactions) == size {
				if out.NextPageToken == "" {
					out.NextPageToken = strconv.FormatUint(after, 10)
				}
				continue
			}
			after = seq
			out.Transactions = append(out.Transactions, x.proto())
		}
		return nil
	})
	if err != nil {
		return nil, s.internal("GetOperatorReport", err)
	}
	for _, t := range totals {
		out.Totals = append(out.Totals, t)
	}
	slices.SortFunc(out.Totals, func(a, b *walletv1.OperatorTotals) int {
		if a.Kind != b.Kind {
			return strings.Compare(a.Kind, b.Kind)
		}
		return strings.Compare(a.CurrencyCode, b.CurrencyCode)
	})
	return out, nil
}

func (x *opTx) proto() *walletv1.OperatorTransaction {
	return &walletv1.OperatorTransaction{TransactionId: x.ID, Kind: x.Kind, Status: x.Status, AccountId: x.Account,
		PlayerId: x.Player, RoundId: x.Round, TableId: x.Table, Amount: x.Amount, CurrencyCode: x.Currency,
		Reason: x.Reason, RolledBackTransactionId: x.RolledBack, RoundStatus: x.RoundStatus,
		OperatorTransactionId: x.OperatorTxID, CreateTime: timestamppb.New(x.Created), UpdateTime: timestamppb.New(x.Updated),
		RequestId: x.RequestID, OperatorCode: x.OperatorCode, ExceptionState: x.Exception, RetryOfTransactionId: x.RetryOf,
		RetryTransactionId: x.RetryID, OperatorBalance: x.OperatorBalance}
}
