package tablesvc

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/wallet-svc/walletsvc"
)

// asOf is a context acting as subject with role, of operator.
func (h *harness) asOf(subject string, role auth.Role, operator string) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	h.t.Cleanup(cancel)
	return auth.Outgoing(ctx, auth.Caller{Subject: subject, Role: role, Operator: operator})
}

// TestOperatorsShareNothing: casino-a's croupier opens a table on a
// prepared shoe and casino-a's players play a coup at it; casino-b's
// players and staff are answered NOT_FOUND TABLE_NOT_FOUND on every call
// naming it, with the message of a table that does not exist, and
// ROUND_NOT_FOUND for its round; the lobby and the round history show
// each operator his own; a deployment-wide auditor and the service see
// both. The coup's money moves on casino-a's wallet accounts (table-svc
// names its table's operator to the wallet: design-tenancy step 3): the
// default operator's "ann" and "abe" are untouched.
func TestOperatorsShareNothing(t *testing.T) {
	h := newHarness(t)
	for op, players := range map[string][]string{"casino-a": {"ann", "abe"}, "casino-b": {"bea"}, "": {"ann", "abe"}} {
		staff := h.asOf("op", auth.RoleOperator, op)
		for _, p := range players {
			if _, err := h.wallets.Deposit(staff, &walletv1.DepositRequest{RequestId: "fund/" + p, AccountId: "player:" + p, Amount: 10000}); err != nil {
				t.Fatalf("%s funds %s: %v", op, p, err)
			}
		}
	}
	aCroupier := h.asOf("croupier-a", auth.RoleCroupier, "casino-a")
	aOperator := h.asOf("operator-a", auth.RoleOperator, "casino-a")
	ann := func() context.Context { return h.asOf("ann", auth.RolePlayer, "casino-a") }
	abe := func() context.Context { return h.asOf("abe", auth.RolePlayer, "casino-a") }
	bea := func() context.Context { return h.asOf("bea", auth.RolePlayer, "casino-b") }
	bCroupier := func() context.Context { return h.asOf("croupier-b", auth.RoleCroupier, "casino-b") }
	bAuditor := func() context.Context { return h.asOf("auditor-b", auth.RoleAuditor, "casino-b") }
	everywhere := func() context.Context { return h.asOf("auditor-all", auth.RoleAuditor, "*") }

	// aCoup opens a casino-a table on a prepared shoe (its operator's)
	// where ann and abe play a coup (abe's 9 beats ann's 8): the table
	// and the coup.
	aCoup := func() (string, string, string) {
		t.Helper()
		order := []string{"4C", "3H", "5D", "5S"}
		for len(order) < 40 {
			order = append(order, "KD")
		}
		sh, err := h.shoes.CreateShoeFromOrder(aOperator, &shoev1.CreateShoeFromOrderRequest{RequestId: h.rid(), Cards: order, TestShoe: true})
		if err != nil {
			t.Fatal(err)
		}
		created, err := h.tables.CreateTable(aOperator, &tablev1.CreateTableRequest{RequestId: h.rid(), HouseRules: certMoney(nil), ShoeId: sh.GetShoe().GetShoeId()})
		if err != nil {
			t.Fatal(err)
		}
		id := created.GetTable().GetTableId()
		for _, p := range []struct {
			ctx func() context.Context
			id  string
		}{{ann, "ann"}, {abe, "abe"}} {
			if _, err := h.tables.JoinTable(p.ctx(), &tablev1.JoinTableRequest{RequestId: h.rid(), TableId: id, PlayerId: p.id}); err != nil {
				t.Fatalf("%s joins casino-a's table: %v", p.id, err)
			}
		}
		if _, err := h.tables.AcceptBank(ann(), &tablev1.AcceptBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "ann", Amount: 1000}); err != nil {
			t.Fatal(err)
		}
		bet, err := h.tables.PlaceBet(abe(), &tablev1.PlaceBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "abe", Amount: 500})
		if err != nil {
			t.Fatal(err)
		}
		coup := bet.GetTable().GetLastCoup().GetCoupId()
		if coup == "" || !bet.GetTable().GetLastCoup().GetSettled() {
			t.Fatalf("no settled coup at casino-a's table: %v", bet.GetTable().GetLastCoup())
		}
		return id, created.GetTable().GetOperatorId(), coup
	}
	a, aOp, coup := aCoup()
	if aOp != "casino-a" {
		t.Fatalf("casino-a's table has operator_id %q", aOp)
	}
	// abe's 9 beats ann's 8: abe's 500 comes out of ann's bank of 1000,
	// at casino-a; the default operator's ann and abe keep their 10000.
	for _, c := range []struct {
		op, player string
		want       int64
	}{{"casino-a", "ann", 9500}, {"casino-a", "abe", 10500}, {"", "ann", 10000}, {"", "abe", 10000}} {
		r, err := h.wallets.GetAccount(h.asOf("aud", auth.RoleAuditor, c.op), &walletv1.GetAccountRequest{AccountId: "player:" + c.player})
		if err != nil || r.GetAccount().GetBalance() != c.want || r.GetAccount().GetHeld() != 0 {
			t.Errorf("%q's %s after the coup: %v, %v; want %d, nothing held", c.op, c.player, r.GetAccount(), err, c.want)
		}
	}
	bResp, err := h.tables.CreateTable(bCroupier(), &tablev1.CreateTableRequest{RequestId: h.rid()})
	if err != nil {
		t.Fatal(err)
	}
	b := bResp.GetTable().GetTableId()
	if got := bResp.GetTable().GetOperatorId(); got != "casino-b" {
		t.Fatalf("casino-b's table has operator_id %q", got)
	}
	// A caller of no operator (a test, a service) opens the default
	// operator's table.
	dResp, err := h.tables.CreateTable(h.as("croupier"), &tablev1.CreateTableRequest{RequestId: h.rid()})
	if err != nil {
		t.Fatal(err)
	}
	d := dResp.GetTable().GetTableId()
	if got := dResp.GetTable().GetOperatorId(); got != "operator" {
		t.Fatalf("a table of no operator's caller has operator_id %q, want operator", got)
	}

	// Across the boundary: what a table that does not exist gets.
	notFound := func(what string, err error) {
		t.Helper()
		if status.Code(err) != codes.NotFound || errs.Reason(err) != "TABLE_NOT_FOUND" || status.Convert(err).Message() != `no table "`+a+`"` {
			t.Errorf("%s of casino-a's table as casino-b: %v (reason %q), want NOT_FOUND TABLE_NOT_FOUND no table %q", what, err, errs.Reason(err), a)
		}
	}
	_, err = h.tables.GetTable(bCroupier(), &tablev1.GetTableRequest{TableId: a})
	notFound("GetTable", err)
	_, err = h.tables.GetTable(bAuditor(), &tablev1.GetTableRequest{TableId: a})
	notFound("an auditor's GetTable", err)
	_, err = h.tables.GetTable(bea(), &tablev1.GetTableRequest{TableId: a})
	notFound("a player's GetTable", err)
	_, err = h.tables.JoinTable(bea(), &tablev1.JoinTableRequest{RequestId: h.rid(), TableId: a, PlayerId: "bea"})
	notFound("JoinTable", err)
	_, err = h.tables.JoinGallery(bea(), &tablev1.JoinGalleryRequest{RequestId: h.rid(), TableId: a, PlayerId: "bea"})
	notFound("JoinGallery", err)
	_, err = h.tables.PlaceBet(bea(), &tablev1.PlaceBetRequest{RequestId: h.rid(), TableId: a, PlayerId: "bea", Amount: 100})
	notFound("PlaceBet", err)
	_, err = h.tables.AcceptBank(bea(), &tablev1.AcceptBankRequest{RequestId: h.rid(), TableId: a, PlayerId: "bea", Amount: 100})
	notFound("AcceptBank", err)
	_, err = h.tables.LeaveTable(bCroupier(), &tablev1.LeaveTableRequest{RequestId: h.rid(), TableId: a, PlayerId: "ann"})
	notFound("a croupier's LeaveTable", err)
	_, err = h.tables.CloseTable(bCroupier(), &tablev1.CloseTableRequest{RequestId: h.rid(), TableId: a, Reason: "not mine"})
	notFound("CloseTable", err)
	_, err = h.tables.VoidCoup(bCroupier(), &tablev1.VoidCoupRequest{RequestId: h.rid(), TableId: a, CoupId: coup, Reason: "not mine"})
	notFound("VoidCoup", err)
	_, err = h.tables.GetRoads(bea(), &tablev1.GetRoadsRequest{TableId: a})
	notFound("GetRoads", err)
	_, err = h.tables.GetOdds(bea(), &tablev1.GetOddsRequest{TableId: a})
	notFound("GetOdds", err)
	_, err = h.tables.GetAdvice(bea(), &tablev1.GetAdviceRequest{TableId: a, PlayerId: "bea"})
	notFound("GetAdvice", err)
	_, err = h.tables.AnswerRealityCheck(bea(), &tablev1.AnswerRealityCheckRequest{RequestId: h.rid(), TableId: a, PlayerId: "bea",
		CheckNumber: 1, Answer: 1})
	notFound("AnswerRealityCheck", err)
	_, err = h.tables.ListRounds(bCroupier(), &tablev1.ListRoundsRequest{TableId: a})
	notFound("ListRounds of the table", err)
	_, err = h.tables.GetRound(bCroupier(), &tablev1.GetRoundRequest{TableId: a, CoupId: coup})
	if status.Code(err) != codes.NotFound || errs.Reason(err) != "ROUND_NOT_FOUND" ||
		status.Convert(err).Message() != `no round "`+coup+`" at table "`+a+`"` {
		t.Errorf("GetRound of casino-a's round as casino-b: %v, want NOT_FOUND ROUND_NOT_FOUND", err)
	}
	// Nothing of it changed: still open, ann and abe seated.
	if got, err := h.tables.GetTable(aCroupier, &tablev1.GetTableRequest{TableId: a}); err != nil ||
		got.GetTable().GetState() == tablev1.TableState_TABLE_STATE_CLOSED || len(got.GetTable().GetSeats()) != 2 {
		t.Fatalf("casino-a's table after casino-b's calls: %v %v", got.GetTable(), err)
	}

	// The lobby: each operator his own; everyone's for "*".
	lobby := func(ctx context.Context) map[string]string {
		t.Helper()
		resp, err := h.tables.ListTables(ctx, &tablev1.ListTablesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, tb := range resp.GetTables() {
			out[tb.GetTableId()] = tb.GetOperatorId()
		}
		return out
	}
	for _, c := range []struct {
		name string
		ctx  context.Context
		want map[string]string
	}{
		{"casino-a's croupier", aCroupier, map[string]string{a: "casino-a"}},
		{"casino-a's player", ann(), map[string]string{a: "casino-a"}},
		{"casino-b's player", bea(), map[string]string{b: "casino-b"}},
		{"casino-b's auditor", bAuditor(), map[string]string{b: "casino-b"}},
		{"a caller of no operator", h.as("croupier"), map[string]string{d: "operator"}},
		{"the deployment's auditor", everywhere(), map[string]string{a: "casino-a", b: "casino-b", d: "operator"}},
		{"the service", h.asRole("table-svc", auth.RoleService), map[string]string{a: "casino-a", b: "casino-b", d: "operator"}},
	} {
		if got := lobby(c.ctx); !maps.Equal(got, c.want) {
			t.Errorf("%s's lobby %v, want %v", c.name, got, c.want)
		}
	}

	// The round history: the round is casino-a's.
	rounds := func(ctx context.Context, req *tablev1.ListRoundsRequest) []*tablev1.Round {
		t.Helper()
		resp, err := h.tables.ListRounds(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetRounds()
	}
	if rs := rounds(aCroupier, &tablev1.ListRoundsRequest{}); len(rs) != 1 || rs[0].GetCoupId() != coup || rs[0].GetOperatorId() != "casino-a" {
		t.Errorf("casino-a's rounds %v, want coup %s of casino-a", rs, coup)
	}
	if rs := rounds(ann(), &tablev1.ListRoundsRequest{PlayerId: "ann"}); len(rs) != 1 || rs[0].GetCoupId() != coup {
		t.Errorf("ann's rounds %v, want coup %s", rs, coup)
	}
	if rs := rounds(bAuditor(), &tablev1.ListRoundsRequest{}); len(rs) != 0 {
		t.Errorf("casino-b's auditor lists %v", rs)
	}
	if rs := rounds(bAuditor(), &tablev1.ListRoundsRequest{PlayerId: "ann"}); len(rs) != 0 {
		t.Errorf("casino-b's auditor lists ann's rounds %v", rs)
	}
	if rs := rounds(everywhere(), &tablev1.ListRoundsRequest{TableId: a}); len(rs) != 1 || rs[0].GetCoupId() != coup {
		t.Errorf("the deployment's auditor lists %v at casino-a's table", rs)
	}
	// Its events carry the operator.
	got, err := h.tables.GetRound(everywhere(), &tablev1.GetRoundRequest{TableId: a, CoupId: coup})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.GetEvents()) == 0 {
		t.Fatal("a round without events")
	}
	for _, ev := range got.GetEvents() {
		if ev.GetOperatorId() != "casino-a" {
			t.Errorf("event %d of casino-a's round has operator_id %q", ev.GetSequence(), ev.GetOperatorId())
		}
	}
	if _, err := h.tables.GetRound(ann(), &tablev1.GetRoundRequest{TableId: a, CoupId: coup}); err != nil {
		t.Errorf("ann reads her round: %v", err)
	}

	// A page reads at most roundScan rounds: with two rounds of casino-a
	// in the history, casino-b's page ends short, with a token, after the
	// first one read; the next one is the last.
	aCoup()
	h.table.roundScan = 1
	page, err := h.tables.ListRounds(bAuditor(), &tablev1.ListRoundsRequest{})
	if err != nil || len(page.GetRounds()) != 0 || page.GetNextPageToken() == "" {
		t.Errorf("casino-b's first page, one round read: %v %v, want none and a next_page_token", page, err)
	} else if page, err = h.tables.ListRounds(bAuditor(), &tablev1.ListRoundsRequest{PageToken: page.GetNextPageToken()}); err != nil ||
		len(page.GetRounds()) != 0 || page.GetNextPageToken() != "" {
		t.Errorf("casino-b's second page: %v %v, want none and no token", page, err)
	}
	h.table.roundScan = maxRoundScan

	// Two operators' members of staff of one subject are two callers: the
	// same request of each opens a table of each.
	same := &tablev1.CreateTableRequest{RequestId: "same-request"}
	one, err := h.tables.CreateTable(h.asOf("croupier-x", auth.RoleCroupier, "casino-a"), same)
	if err != nil {
		t.Fatal(err)
	}
	other, err := h.tables.CreateTable(h.asOf("croupier-x", auth.RoleCroupier, "casino-b"), same)
	if err != nil {
		t.Fatal(err)
	}
	if one.GetTable().GetTableId() == other.GetTable().GetTableId() || one.GetTable().GetOperatorId() != "casino-a" ||
		other.GetTable().GetOperatorId() != "casino-b" {
		t.Fatalf("one request of croupier-x of casino-a and of casino-b: %s of %s, %s of %s", one.GetTable().GetTableId(),
			one.GetTable().GetOperatorId(), other.GetTable().GetTableId(), other.GetTable().GetOperatorId())
	}
}

// TestOperatorOfOldRecords: a table and a round stored before tables had
// operators are the default operator's.
func TestOperatorOfOldRecords(t *testing.T) {
	if got := (&table{}).operator(); got != "operator" {
		t.Errorf("an old table's operator %q, want operator", got)
	}
	if got := (&roundRecord{}).operator(); got != "operator" {
		t.Errorf("an old round's operator %q, want operator", got)
	}
	for _, c := range []struct {
		caller auth.Caller
		op     string
		want   bool
	}{
		{auth.Caller{Role: auth.RoleCroupier}, "operator", true},
		{auth.Caller{Role: auth.RoleCroupier}, "", true},
		{auth.Caller{Role: auth.RoleCroupier}, "casino-a", false},
		{auth.Caller{Role: auth.RoleCroupier, Operator: "casino-a"}, "", false},
		{auth.Caller{Role: auth.RolePlayer, Operator: "casino-a"}, "casino-a", true},
		{auth.Caller{Role: auth.RoleAuditor, Operator: "*"}, "casino-a", true},
		{auth.Caller{Role: auth.RoleService}, "casino-a", true},
	} {
		if got := sees(c.caller, c.op); got != c.want {
			t.Errorf("sees(%+v, %q) = %v, want %v", c.caller, c.op, got, c.want)
		}
	}
}

// TestOperatorCurrenciesAtCreateTable: an operator whose entry in the
// wallet's operators file lists only EUR cannot open a USD table:
// CreateTable answers INVALID_ARGUMENT CURRENCY_UNKNOWN and no table
// exists; his EUR table opens, and the default operator (no entry) opens
// a USD one.
func TestOperatorCurrenciesAtCreateTable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "operators.yaml")
	if err := os.WriteFile(file, []byte("operators:\n  - id: casino-a\n    currencies: [EUR]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarnessWith(t, func(c *walletsvc.Config) { c.OperatorsFile = file })
	a := h.asOf("croupier-a", auth.RoleCroupier, "casino-a")
	_, err := h.tables.CreateTable(a, &tablev1.CreateTableRequest{RequestId: h.rid(), CurrencyCode: "USD"})
	wantReason(t, err, codes.InvalidArgument, reasonCurrencyUnknown)
	if list, err := h.tables.ListTables(a, &tablev1.ListTablesRequest{}); err != nil || len(list.GetTables()) != 0 {
		t.Fatalf("casino-a's tables after the refusal: %v, %v", list.GetTables(), err)
	}
	for _, x := range []struct {
		who context.Context
		cur string
	}{{a, "EUR"}, {h.as("croupier"), "USD"}} {
		resp, err := h.tables.CreateTable(x.who, &tablev1.CreateTableRequest{RequestId: h.rid(), CurrencyCode: x.cur})
		if err != nil || resp.GetTable().GetCurrencyCode() != x.cur {
			t.Fatalf("a %s table: %v, %v", x.cur, resp.GetTable().GetCurrencyCode(), err)
		}
	}
}
