package sim

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// Retries judged. A request whose reply was lost is sent again with the
// same request_id; by the contract (table.proto: "a retry with the same
// id changes nothing and answers as the first try did (with the table as
// it stands now); the same id with a different request fails with
// REQUEST_ID_REUSED"):
//
//   - retry-same-answer: its answer is the first answer. What may
//     legitimately differ is the table, which is the table as it stands
//     now (and JoinTable's seat_number, read from it): when the table has
//     written no event since the first answer, the two answers are equal
//     field for field, but for the turn's deadline when table-svc started
//     again in between (it gives a pending turn its time again);
//   - retry-changes-nothing: sending it again writes no event, moves no
//     money and holds none (the balances and holds of the table's players
//     and of the house accounts), and leaves the table as it was;
//   - amended-retry-refused: sent again under the same request_id with
//     another payload (a client that changed its mind), it is refused
//     ALREADY_EXISTS REQUEST_ID_REUSED, and changes nothing as above.
//
// The answers of shoe-svc and wallet-svc to table-svc are judged as the
// first kind too, for every request of table-svc sent more than once (a
// retransmission, its retry after a lost reply, a late copy): each
// success is the first answer, equal field for field
// (dependency-same-answer, faults.go).

// answer is a TableService response: each holds the table.
type answer interface {
	proto.Message
	GetTable() *tablev1.Table
}

// tableOf is the table of an answer (nil for none).
func tableOf(a answer) *tablev1.Table {
	if a == nil {
		return nil
	}
	return a.GetTable()
}

// firstAnswer is what a request answered the first time, kept when its
// reply is lost on the way: the answer, the table's last event then, and
// when table-svc had last started.
type firstAnswer struct {
	resp       answer
	eventSeq   uint64
	tableStart time.Time
}

// rest is what a request sent again must not change: the table's events,
// the table as the croupier sees it, and the money of the table's players
// and of the house (nil when wallet-svc is down).
type rest struct {
	eventSeq uint64
	view     *tablev1.Table
	money    map[string][2]int64 // account -> balance, held
}

// restOf reads the state a request sent again must leave as it is; nil
// when table-svc cannot tell.
func (s *sim) restOf(t *simTable) *rest {
	if !s.cl.isUp(svcTable) {
		return nil
	}
	seq, err := s.cl.table.EventSeq(t.id)
	if err != nil {
		return nil
	}
	r := &rest{eventSeq: seq}
	ctx, cancel := s.as("croupier")
	resp, err := s.cl.tables.GetTable(ctx, &tablev1.GetTableRequest{TableId: t.id})
	cancel()
	if err != nil {
		return nil
	}
	r.view = resp.GetTable()
	if !s.cl.isUp(svcWallet) {
		return r
	}
	r.money = map[string][2]int64{}
	for _, id := range append(append([]string(nil), t.players...), "house:commission", "house:bank") {
		acct := id
		if !strings.HasPrefix(id, "house:") {
			acct = "player:" + id
		}
		bal, held, err := s.account(acct)
		if err != nil {
			r.money = nil
			return r
		}
		r.money[acct] = [2]int64{bal, held}
	}
	return r
}

// diff lists what changed from r to o.
func (r *rest) diff(o *rest) []string {
	var out []string
	if o.eventSeq != r.eventSeq {
		out = append(out, fmt.Sprintf("events %d -> %d", r.eventSeq, o.eventSeq))
	}
	if !proto.Equal(r.view, o.view) {
		out = append(out, fmt.Sprintf("table %s -> %s", brief(r.view), brief(o.view)))
	}
	if r.money != nil && o.money != nil {
		var accts []string
		for a := range r.money {
			accts = append(accts, a)
		}
		sort.Strings(accts)
		for _, a := range accts {
			if b, c := r.money[a], o.money[a]; b != c {
				out = append(out, fmt.Sprintf("%s balance %d held %d -> balance %d held %d", a, b[0], b[1], c[0], c[1]))
			}
		}
	}
	return out
}

// judgeRetry checks a request sent again after its reply was lost
// (lostReply), or sent again amended (amended), against its first answer
// and the state before it.
func (s *sim) judgeRetry(a *action, before *rest, resp answer, err error) {
	s.judge(a, before, s.restOf(a.t), s.cl.tableStart, resp, err)
}

// judge is judgeRetry with the state after the request, and when
// table-svc last started.
func (s *sim) judge(a *action, before, after *rest, tableStart time.Time, resp answer, err error) {
	if before != nil && after != nil {
		if d := before.diff(after); len(d) > 0 {
			s.violate("retry-changes-nothing", "", "t%d: %s's %s, sent again (%v), changed %s",
				a.t.n, a.who, a.desc, status.Code(err), strings.Join(d, "; "))
		}
	}
	if a.amended {
		if status.Code(err) != codes.AlreadyExists || errs.Reason(err) != "REQUEST_ID_REUSED" {
			s.violate("amended-retry-refused", "", "t%d: %s's %s, sent again under the request_id of a request applied with another payload, answered %v %s; want ALREADY_EXISTS REQUEST_ID_REUSED",
				a.t.n, a.who, a.desc, status.Code(err), errs.Reason(err))
		}
		return
	}
	if err != nil || a.first == nil || after == nil {
		return // idempotent-retry judges a failure
	}
	first, again := proto.Clone(a.first.resp), proto.Clone(resp)
	if after.eventSeq != a.first.eventSeq {
		// The table has moved on: it is the table as it stands now.
		clearTable(first)
		clearTable(again)
	} else if !tableStart.Equal(a.first.tableStart) {
		clearDeadline(first)
		clearDeadline(again)
	}
	if !proto.Equal(first, again) {
		s.violate("retry-same-answer", "", "t%d: %s's %s, sent again after its reply was lost, answered %v; the first answer was %v",
			a.t.n, a.who, a.desc, again, first)
	}
}

// clearTable leaves a response without its table and what is read from
// it (JoinTable's seat).
func clearTable(m proto.Message) {
	switch r := m.(type) {
	case *tablev1.JoinTableResponse:
		r.Table, r.SeatNumber = nil, 0
	default:
		fd := m.ProtoReflect().Descriptor().Fields().ByName("table")
		if fd != nil {
			m.ProtoReflect().Clear(fd)
		}
	}
}

// clearDeadline leaves a response's table without its turn deadline.
func clearDeadline(m proto.Message) {
	if t := m.(answer).GetTable(); t != nil {
		t.TurnDeadline = nil
	}
}
