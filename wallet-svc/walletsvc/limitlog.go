package walletsvc

import (
	"cmp"
	"context"
	"encoding/binary"
	"slices"
	"strconv"

	"go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// keyLimitChangesLogged, in the "wallet" bucket, says that the limit
// changes recorded before the "limit_change_log" existed were logged
// (logOldLimitChanges).
var keyLimitChangesLogged = []byte("limit-changes-logged")

// logLimitChange appends k, a "limit_changes" key, to the log of every
// account's changes.
func logLimitChange(tx *bbolt.Tx, k []byte) error {
	b := tx.Bucket(bucketLimitChangeLog)
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	return b.Put(binary.BigEndian.AppendUint64(nil, seq), k)
}

// logOldLimitChanges logs, once per ledger file, the limit changes
// recorded by a version without the log, in their time order.
func (s *Service) logOldLimitChanges() error {
	return s.commit.Update(func(tx *bbolt.Tx) error {
		w := tx.Bucket(bucketWallet)
		if w.Get(keyLimitChangesLogged) != nil {
			return nil
		}
		if tx.Bucket(bucketLimitChangeLog).Stats().KeyN == 0 {
			type old struct {
				at  uint64
				key []byte
			}
			var all []old
			err := tx.Bucket(bucketLimitChanges).ForEach(func(k, _ []byte) error {
				ch, err := readLimitChange(tx, k)
				if err != nil {
					return err
				}
				all = append(all, old{uint64(ch.GetChangeTime().AsTime().UnixNano()), append([]byte(nil), k...)})
				return nil
			})
			if err != nil {
				return err
			}
			slices.SortStableFunc(all, func(a, b old) int { return cmp.Compare(a.at, b.at) })
			for _, o := range all {
				if err := logLimitChange(tx, o.key); err != nil {
					return err
				}
			}
		}
		return w.Put(keyLimitChangesLogged, []byte{1})
	})
}

func readLimitChange(tx *bbolt.Tx, k []byte) (*walletv1.LimitChange, error) {
	ch := &walletv1.LimitChange{}
	return ch, proto.Unmarshal(tx.Bucket(bucketLimitChanges).Get(k), ch)
}

// ListLimitChanges pages through the log of every account's limit
// changes (see the proto). The page token is the log sequence of the
// last change returned.
func (s *Service) ListLimitChanges(ctx context.Context, req *walletv1.ListLimitChangesRequest) (*walletv1.ListLimitChangesResponse, error) {
	acct := req.GetAccountId()
	if acct != "" {
		if err := checkPlayerAccount(acct, s.cur); err != nil {
			return nil, err
		}
		acct = limitsKey(acct, s.currency)
	}
	start, end := req.GetStartTime(), req.GetEndTime()
	if start != nil && end != nil && end.AsTime().Before(start.AsTime()) {
		return nil, failf(codes.InvalidArgument, reasonInvalidArgument, "end_time is before start_time")
	}
	size, after, err := paging(req.GetPageSize(), req.GetPageToken())
	if err != nil {
		return nil, err
	}
	out := &walletv1.ListLimitChangesResponse{}
	sc := s.scopeOf(ctx)
	err = s.db.View(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bucketLimitChangeLog).Cursor()
		for k, v := c.Seek(binary.BigEndian.AppendUint64(nil, after+1)); k != nil; k, v = c.Next() {
			ch, err := readLimitChange(tx, v)
			if err != nil {
				return err
			}
			at := ch.GetChangeTime().AsTime()
			if (acct != "" && ch.GetAccountId() != acct) || !sc.owns(ch.GetAccountId()) || (start != nil && at.Before(start.AsTime())) ||
				(end != nil && !at.Before(end.AsTime())) {
				continue
			}
			if len(out.Changes) == size {
				out.NextPageToken = strconv.FormatUint(after, 10)
				return nil
			}
			out.Changes = append(out.Changes, ch)
			after = binary.BigEndian.Uint64(k)
		}
		return nil
	})
	if err != nil {
		return nil, s.internal("ListLimitChanges", err)
	}
	return out, nil
}
