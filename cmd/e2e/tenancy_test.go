package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// tenancyTokens is a token file of two operators, casino-a and casino-b,
// each with a croupier, an operator, an auditor and three players (each
// a "bob"), and a deployment-wide auditor (operator "*").
const tenancyTokens = `tokens:
  - {token: a-croupier-token, subject: croupier-a, role: croupier, operator: casino-a}
  - {token: a-operator-token, subject: operator-a, role: operator, operator: casino-a}
  - {token: a-auditor-token, subject: auditor-a, role: auditor, operator: casino-a}
  - {token: ann-token, subject: ann, role: player, operator: casino-a}
  - {token: abe-token, subject: abe, role: player, operator: casino-a}
  - {token: b-croupier-token, subject: croupier-b, role: croupier, operator: casino-b}
  - {token: b-operator-token, subject: operator-b, role: operator, operator: casino-b}
  - {token: b-auditor-token, subject: auditor-b, role: auditor, operator: casino-b}
  - {token: bea-token, subject: bea, role: player, operator: casino-b}
  - {token: ben-token, subject: ben, role: player, operator: casino-b}
  - {token: everywhere-token, subject: auditor-all, role: auditor, operator: "*"}
  - {token: bob-a-token, subject: bob, role: player, operator: casino-a}
  - {token: bob-b-token, subject: bob, role: player, operator: casino-b}
`

// TestTwoOperatorsShareNothing: two operators on one deployment (mutual
// TLS, two table-svc shards). casino-a's croupier opens a punto banco
// table, casino-b's another; casino-a's players play a coup at theirs.
// Every call of casino-b's players and staff naming casino-a's table or
// round is answered NOT_FOUND, exactly as for a table that does not
// exist; each operator's lobby and round history hold its own; the
// deployment-wide auditor sees both; the events of casino-a's table
// carry its operator. The money (design-tenancy step 3): each operator
// funds its own players (each has a "bob", funded under the same
// request id) and its own house bank, and plays a coup at its table;
// each one's bob has his own account, every read or write of the other
// operator's accounts is NOT_FOUND, each operator's audit balances apart
// and the deployment's in sum, and each operator's money is conserved;
// the business metrics count each operator's coup in its own series.
func TestTwoOperatorsShareNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	toks := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(toks, []byte(tenancyTokens), 0o600); err != nil {
		t.Fatal(err)
	}
	st := startStackWith(t, stack.Config{TokensFile: toks, Limits: gateway.LimitConfig{Rate: -1}, Shards: 2, MetricsAddr: "127.0.0.1:0"})
	c := dial(t, st.GatewayAddr)
	tok := func(who string) context.Context { return withToken(t, who+"-token") }

	// Each operator funds its own accounts (request ids per operator: the
	// same ones at both).
	funds := map[string]map[string]int64{
		"casino-a": {"player:ann": 10_000, "player:abe": 10_000, "player:bob": 10_000, "house:bank": 1_000_000},
		"casino-b": {"player:bea": 10_000, "player:ben": 10_000, "player:bob": 7_000, "house:bank": 1_000_000},
	}
	for op, accts := range funds {
		staff := map[string]string{"casino-a": "a-operator", "casino-b": "b-operator"}[op]
		for acct, amount := range accts {
			if _, err := c.wallet.Deposit(tok(staff), &walletv1.DepositRequest{RequestId: t.Name() + "/" + acct, AccountId: acct, Amount: amount}); err != nil {
				t.Fatalf("%s's deposit to %s: %v", op, acct, err)
			}
		}
	}
	zero := int32(0)
	open := func(croupier, name string) string {
		t.Helper()
		resp, err := c.table.CreateTable(tok(croupier), &tablev1.CreateTableRequest{RequestId: t.Name() + "/" + name,
			Variant: tablev1.Variant_VARIANT_PUNTO_BANCO, PuntoBancoRules: &tablev1.PuntoBancoRules{BettingWindowMs: 1000, ResultPauseMs: &zero}})
		if err != nil {
			t.Fatalf("%s opens a table: %v", croupier, err)
		}
		return resp.GetTable().GetTableId()
	}
	a, b := open("a-croupier", "a"), open("b-croupier", "b")
	get := func(who, id string) *tablev1.Table {
		t.Helper()
		resp, err := c.table.GetTable(tok(who), &tablev1.GetTableRequest{TableId: id})
		if err != nil {
			t.Fatalf("%s's GetTable %s: %v", who, id, err)
		}
		return resp.GetTable()
	}
	if op := get("a-croupier", a).GetOperatorId(); op != "casino-a" {
		t.Fatalf("casino-a's table has operator_id %q", op)
	}
	if op := get("b-croupier", b).GetOperatorId(); op != "casino-b" {
		t.Fatalf("casino-b's table has operator_id %q", op)
	}

	// casino-a's croupier watches his table from before the coup.
	wctx, stopWatch := context.WithCancel(tok("a-croupier"))
	defer stopWatch()
	watch, err := c.table.WatchTable(wctx, &tablev1.WatchTableRequest{TableId: a})
	if err != nil {
		t.Fatal(err)
	}
	if first, err := watch.Recv(); err != nil || first.GetTable().GetTableId() != a {
		t.Fatalf("casino-a's croupier watches his table: %v %v", first, err)
	}
	events := make(chan *eventsv1.TableEvent, 1000)
	go func() {
		defer close(events)
		for {
			m, err := watch.Recv()
			if err != nil {
				return
			}
			if ev := m.GetEvent(); ev != nil {
				events <- ev
			}
		}
	}()

	// Each operator's players play a coup at its table (token name, player).
	play := func(croupier, id string, bets map[[2]string]tablev1.BetSpot) string {
		t.Helper()
		for who := range bets {
			if _, err := c.table.JoinTable(tok(who[0]), &tablev1.JoinTableRequest{RequestId: t.Name() + "/join/" + who[0], TableId: id, PlayerId: who[1]}); err != nil {
				t.Fatalf("%s joins table %s: %v", who[0], id, err)
			}
		}
		poll(t, "the betting at table "+id, func() bool { return get(croupier, id).GetState() == tablev1.TableState_TABLE_STATE_BETTING })
		var coup string
		for who, spot := range bets {
			resp, err := c.table.PlaceBet(tok(who[0]), &tablev1.PlaceBetRequest{RequestId: t.Name() + "/bet/" + who[0], TableId: id, PlayerId: who[1], Spot: spot, Amount: 100})
			if err != nil {
				t.Fatalf("%s bets: %v", who[0], err)
			}
			coup = resp.GetTable().GetCoup().GetCoupId()
		}
		if coup == "" {
			t.Fatal("no coup in play after the bets")
		}
		poll(t, "coup "+coup+" settled", func() bool {
			lc := get(croupier, id).GetLastCoup()
			return lc.GetCoupId() == coup && lc.GetSettled()
		})
		return coup
	}
	coup := play("a-croupier", a, map[[2]string]tablev1.BetSpot{{"ann", "ann"}: tablev1.BetSpot_BET_SPOT_BANK,
		{"abe", "abe"}: tablev1.BetSpot_BET_SPOT_PLAYER, {"bob-a", "bob"}: tablev1.BetSpot_BET_SPOT_BANK})
	coupB := play("b-croupier", b, map[[2]string]tablev1.BetSpot{{"bea", "bea"}: tablev1.BetSpot_BET_SPOT_PLAYER,
		{"bob-b", "bob"}: tablev1.BetSpot_BET_SPOT_PLAYER})

	// Across the boundary: NOT_FOUND TABLE_NOT_FOUND, as a table that
	// does not exist.
	notFound := func(what string, err error) {
		t.Helper()
		if status.Code(err) != codes.NotFound || errs.Reason(err) != "TABLE_NOT_FOUND" || status.Convert(err).Message() != `no table "`+a+`"` {
			t.Errorf("%s of casino-a's table: %v (reason %q), want NOT_FOUND TABLE_NOT_FOUND `no table %q`", what, err, errs.Reason(err), a)
		}
	}
	for _, who := range []string{"b-croupier", "b-operator", "b-auditor", "bea"} {
		_, err := c.table.GetTable(tok(who), &tablev1.GetTableRequest{TableId: a})
		notFound(who+"'s GetTable", err)
		_, err = c.table.GetRoads(tok(who), &tablev1.GetRoadsRequest{TableId: a})
		notFound(who+"'s GetRoads", err)
		ws, err := c.table.WatchTable(tok(who), &tablev1.WatchTableRequest{TableId: a})
		if err == nil {
			_, err = ws.Recv()
		}
		notFound(who+"'s WatchTable", err)
		if who != "bea" {
			_, err = c.table.ListRounds(tok(who), &tablev1.ListRoundsRequest{TableId: a})
			notFound(who+"'s ListRounds", err)
			_, err = c.table.GetRound(tok(who), &tablev1.GetRoundRequest{TableId: a, CoupId: coup})
			if status.Code(err) != codes.NotFound || errs.Reason(err) != "ROUND_NOT_FOUND" {
				t.Errorf("%s's GetRound of casino-a's round: %v, want NOT_FOUND ROUND_NOT_FOUND", who, err)
			}
		}
	}
	_, err = c.table.JoinTable(tok("bea"), &tablev1.JoinTableRequest{RequestId: t.Name() + "/bea-join", TableId: a, PlayerId: "bea"})
	notFound("bea's JoinTable", err)
	_, err = c.table.PlaceBet(tok("bea"), &tablev1.PlaceBetRequest{RequestId: t.Name() + "/bea-bet", TableId: a, PlayerId: "bea",
		Spot: tablev1.BetSpot_BET_SPOT_BANK, Amount: 100})
	notFound("bea's PlaceBet", err)
	_, err = c.table.LeaveTable(tok("b-croupier"), &tablev1.LeaveTableRequest{RequestId: t.Name() + "/b-stand-up", TableId: a, PlayerId: "ann"})
	notFound("casino-b's croupier's LeaveTable", err)
	_, err = c.table.CloseTable(tok("b-croupier"), &tablev1.CloseTableRequest{RequestId: t.Name() + "/b-close", TableId: a, Reason: "not ours"})
	notFound("casino-b's croupier's CloseTable", err)
	// Nor its shoe (shoe-svc): NOT_FOUND SHOE_NOT_FOUND, as no shoe.
	shoeA := get("a-croupier", a).GetShoeId()
	for _, who := range []string{"b-croupier", "bea"} {
		_, err := c.shoe.GetShoe(tok(who), &shoev1.GetShoeRequest{ShoeId: shoeA})
		if status.Code(err) != codes.NotFound || errs.Reason(err) != "SHOE_NOT_FOUND" || status.Convert(err).Message() != `no shoe "`+shoeA+`"` {
			t.Errorf("%s's GetShoe of casino-a's table's shoe: %v, want NOT_FOUND SHOE_NOT_FOUND", who, err)
		}
	}
	if _, err := c.shoe.GetShoe(tok("ann"), &shoev1.GetShoeRequest{ShoeId: shoeA}); err != nil {
		t.Errorf("ann's GetShoe of her table's shoe: %v", err)
	}
	// And casino-a's own see nothing of casino-b's table.
	_, err = c.table.GetTable(tok("ann"), &tablev1.GetTableRequest{TableId: b})
	if status.Code(err) != codes.NotFound || errs.Reason(err) != "TABLE_NOT_FOUND" {
		t.Errorf("ann's GetTable of casino-b's table: %v", err)
	}
	// casino-a's table is as it was: open, ann, abe and bob seated.
	if tb := get("a-croupier", a); tb.GetState() == tablev1.TableState_TABLE_STATE_CLOSED || len(tb.GetSeats()) != 3 {
		t.Errorf("casino-a's table after casino-b's calls: %v", tb)
	}

	// The lobby, over both shards.
	lobby := func(who string) map[string]string {
		t.Helper()
		resp, err := c.table.ListTables(tok(who), &tablev1.ListTablesRequest{})
		if err != nil || len(resp.GetUnreachable()) != 0 {
			t.Fatalf("%s's ListTables: %v %v", who, resp, err)
		}
		out := map[string]string{}
		for _, tb := range resp.GetTables() {
			out[tb.GetTableId()] = tb.GetOperatorId()
		}
		return out
	}
	for who, want := range map[string]map[string]string{
		"a-croupier": {a: "casino-a"}, "ann": {a: "casino-a"}, "a-auditor": {a: "casino-a"},
		"b-croupier": {b: "casino-b"}, "bea": {b: "casino-b"}, "b-auditor": {b: "casino-b"},
		"everywhere": {a: "casino-a", b: "casino-b"},
	} {
		got := lobby(who)
		if len(got) != len(want) {
			t.Errorf("%s's lobby %v, want %v", who, got, want)
			continue
		}
		for id, op := range want {
			if got[id] != op {
				t.Errorf("%s's lobby %v, want %v", who, got, want)
			}
		}
	}

	// The round history.
	rounds := func(who string, req *tablev1.ListRoundsRequest) []*tablev1.Round {
		t.Helper()
		resp, err := c.table.ListRounds(tok(who), req)
		if err != nil {
			t.Fatalf("%s's ListRounds: %v", who, err)
		}
		return resp.GetRounds()
	}
	for _, who := range []string{"a-croupier", "a-auditor"} {
		if rs := rounds(who, &tablev1.ListRoundsRequest{}); len(rs) != 1 || rs[0].GetCoupId() != coup || rs[0].GetOperatorId() != "casino-a" {
			t.Errorf("%s's rounds %v, want coup %s of casino-a", who, rs, coup)
		}
	}
	if rs := rounds("everywhere", &tablev1.ListRoundsRequest{}); len(rs) != 2 {
		t.Errorf("the deployment's auditor's rounds %v, want casino-a's and casino-b's", rs)
	}
	if rs := rounds("ann", &tablev1.ListRoundsRequest{PlayerId: "ann"}); len(rs) != 1 || rs[0].GetCoupId() != coup {
		t.Errorf("ann's rounds %v, want coup %s", rs, coup)
	}
	for _, who := range []string{"b-croupier", "b-auditor"} {
		if rs := rounds(who, &tablev1.ListRoundsRequest{}); len(rs) != 1 || rs[0].GetCoupId() != coupB {
			t.Errorf("%s's rounds %v, want casino-b's coup %s only", who, rs, coupB)
		}
		if rs := rounds(who, &tablev1.ListRoundsRequest{PlayerId: "ann"}); len(rs) != 0 {
			t.Errorf("%s lists ann's rounds %v", who, rs)
		}
	}
	if got, err := c.table.GetRound(tok("ann"), &tablev1.GetRoundRequest{TableId: a, CoupId: coup}); err != nil || got.GetRound().GetOperatorId() != "casino-a" {
		t.Errorf("ann's GetRound of her round: %v %v", got.GetRound(), err)
	}

	// The money. Each operator's bob has his own account: his statement
	// starts with his own operator's deposit, and names only his
	// operator's coup (none when it was a tie: a push moves nothing).
	for _, c0 := range []struct {
		who, coup, other string
		deposit          int64
	}{
		{"bob-a", coup, coupB, 10_000}, {"bob-b", coupB, coup, 7_000}} {
		stmt, err := c.wallet.ListStatement(tok(c0.who), &walletv1.ListStatementRequest{AccountId: "player:bob"})
		if err != nil {
			t.Fatalf("%s's statement: %v", c0.who, err)
		}
		es := stmt.GetEntries()
		if len(es) < 1 || es[0].GetAmount() != c0.deposit || es[0].GetTransfer().GetReason() != "deposit" {
			t.Fatalf("%s's statement %v: want his operator's deposit of %d first", c0.who, es, c0.deposit)
		}
		var net int64
		for _, e := range es {
			net += e.GetAmount()
			if e.GetTransfer().GetReference() == c0.other {
				t.Errorf("%s's statement names the other operator's coup %s", c0.who, c0.other)
			}
		}
		if stmt.GetAccount().GetBalance() != net {
			t.Errorf("%s: balance %d, his statement sums to %d", c0.who, stmt.GetAccount().GetBalance(), net)
		}
	}
	bal := func(who, acct string) (int64, error) {
		r, err := c.wallet.GetAccount(tok(who), &walletv1.GetAccountRequest{AccountId: acct})
		return r.GetAccount().GetBalance(), err
	}
	// Every read or write of the other operator's accounts: NOT_FOUND
	// ACCOUNT_NOT_FOUND, as an account that does not exist.
	accountNotFound := func(what string, err error) {
		t.Helper()
		if status.Code(err) != codes.NotFound || errs.Reason(err) != "ACCOUNT_NOT_FOUND" {
			t.Errorf("%s: %v (reason %q), want NOT_FOUND ACCOUNT_NOT_FOUND", what, err, errs.Reason(err))
		}
	}
	for _, x := range []struct{ who, acct string }{{"b-auditor", "player:ann"}, {"b-operator", "player:abe"}, {"b-croupier", "player:ann"},
		{"a-auditor", "player:bea"}, {"a-operator", "player:ben"}, {"everywhere", "player:bea"}} {
		_, err := bal(x.who, x.acct)
		accountNotFound(x.who+"'s GetAccount of "+x.acct, err)
		_, err = c.wallet.ListStatement(tok(x.who), &walletv1.ListStatementRequest{AccountId: x.acct})
		accountNotFound(x.who+"'s ListStatement of "+x.acct, err)
	}
	_, err = c.wallet.Withdraw(tok("b-operator"), &walletv1.WithdrawRequest{RequestId: t.Name() + "/b-takes", AccountId: "player:ann", Amount: 1})
	accountNotFound("casino-b's operator's Withdraw from ann", err)
	_, err = c.wallet.Withdraw(tok("a-operator"), &walletv1.WithdrawRequest{RequestId: t.Name() + "/a-takes", AccountId: "player:bea", Amount: 1})
	accountNotFound("casino-a's operator's Withdraw from bea", err)
	// Conservation, per operator: its accounts hold what it deposited (the
	// commission and the house bank included), read by its own auditor.
	inWallet := map[string]int64{}
	for op, accts := range funds {
		aud := map[string]string{"casino-a": "a-auditor", "casino-b": "b-auditor"}[op]
		var deposited, held int64
		for acct, amount := range accts {
			deposited += amount
			n, err := bal(aud, acct)
			if err != nil {
				t.Fatalf("%s's %s: %v", op, acct, err)
			}
			held += n
		}
		commission, err := bal(aud, "house:commission")
		if err != nil {
			t.Fatal(err)
		}
		if held+commission != deposited {
			t.Errorf("%s's accounts hold %d (commission %d), it deposited %d", op, held+commission, commission, deposited)
		}
		inWallet[op] = deposited
	}
	// The audits: each operator's own books, balanced; the deployment's
	// auditor sees both, and their sum.
	audit := func(who string) *walletv1.AuditLedgerResponse {
		t.Helper()
		r, err := c.wallet.AuditLedger(tok(who), &walletv1.AuditLedgerRequest{})
		if err != nil {
			t.Fatalf("%s's AuditLedger: %v", who, err)
		}
		if !r.GetBalanced() {
			t.Errorf("%s's audit: %v", who, r.GetDiscrepancies())
		}
		return r
	}
	books := func(who string, r *walletv1.AuditLedgerResponse) map[string]int64 {
		t.Helper()
		out := map[string]int64{}
		for _, b := range r.GetOperators() {
			if !b.GetBalanced() {
				t.Errorf("%s sees %s's books unbalanced", who, b.GetOperatorId())
			}
			for _, cur := range b.GetCurrencies() {
				if cur.GetSumOfBalances() != 0 {
					t.Errorf("%s sees %s's %s sum to %d", who, b.GetOperatorId(), cur.GetCurrencyCode(), cur.GetSumOfBalances())
				}
				out[b.GetOperatorId()] += cur.GetInWallet()
			}
		}
		return out
	}
	total := func(r *walletv1.AuditLedgerResponse) (in int64) {
		for _, cur := range r.GetCurrencies() {
			in += cur.GetInWallet()
			if cur.GetSumOfBalances() != 0 {
				t.Errorf("%s sums to %d", cur.GetCurrencyCode(), cur.GetSumOfBalances())
			}
		}
		return in
	}
	for who, op := range map[string]string{"a-auditor": "casino-a", "b-auditor": "casino-b"} {
		r := audit(who)
		if got := books(who, r); len(got) != 1 || got[op] != inWallet[op] || total(r) != inWallet[op] {
			t.Errorf("%s's audit: books %v, in wallet %d; want %s's only, %d", who, got, total(r), op, inWallet[op])
		}
	}
	// (and the default operator's, empty: its house accounts exist from
	// the wallet's first start).
	all := audit("everywhere")
	if got := books("everywhere", all); len(got) != 3 || got["casino-a"] != inWallet["casino-a"] || got["casino-b"] != inWallet["casino-b"] ||
		got["operator"] != 0 || total(all) != inWallet["casino-a"]+inWallet["casino-b"] {
		t.Errorf("the deployment's audit: books %v, in wallet %d; want %v and the default operator's empty ones, their sum", got, total(all), inWallet)
	}

	// The business series are split by operator: each operator's one
	// coup (and its one settlement, its one open table) in its own
	// series, none in the default operator's.
	mfs := scrape(t, "http://"+st.MetricsAddr+"/metrics")
	for _, x := range []struct {
		name, op string
		want     float64
	}{
		{"chemmy_coups_total", "casino-a", 1}, {"chemmy_coups_total", "casino-b", 1}, {"chemmy_coups_total", "operator", 0},
		{"chemmy_settlements_total", "casino-a", 1}, {"chemmy_settlements_total", "casino-b", 1}, {"chemmy_settlements_total", "operator", 0},
		{"chemmy_tables_open", "casino-a", 1}, {"chemmy_tables_open", "casino-b", 1}, {"chemmy_tables_open", "operator", 0},
	} {
		if got, _ := series(mfs, x.name, l("operator", x.op)); got != x.want {
			t.Errorf("%s{operator=%q} = %v, want %v", x.name, x.op, got, x.want)
		}
	}

	// The events of casino-a's table, as its croupier watched them, up to
	// the coup's settlement: each carries casino-a.
	var seen int
	timeout := time.After(time.Minute)
	for settled := false; !settled; {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("the watch ended after %d events, before coup %s's settlement", seen, coup)
			}
			seen++
			if ev.GetOperatorId() != "casino-a" {
				t.Errorf("event %d (%T) of casino-a's table has operator_id %q", ev.GetSequence(), ev.GetPayload(), ev.GetOperatorId())
			}
			settled = ev.GetCoupSettled() != nil && ev.GetCoupId() == coup
		case <-timeout:
			t.Fatalf("no settlement of coup %s among %d events watched", coup, seen)
		}
	}
}

// poll waits until ok, looking every 50 ms (for at most a minute: a
// bound on a hang, not a timed assertion).
func poll(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
