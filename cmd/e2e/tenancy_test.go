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
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// tenancyTokens is a token file of two operators, casino-a and casino-b,
// each with a croupier, an operator, an auditor and two players, and a
// deployment-wide auditor (operator "*").
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
`

// TestTwoOperatorsShareNothing: two operators on one deployment (mutual
// TLS, two table-svc shards). casino-a's croupier opens a punto banco
// table, casino-b's another; casino-a's players play a coup at theirs.
// Every call of casino-b's players and staff naming casino-a's table or
// round is answered NOT_FOUND, exactly as for a table that does not
// exist; each operator's lobby and round history hold its own; the
// deployment-wide auditor sees both; the events of casino-a's table
// carry its operator.
func TestTwoOperatorsShareNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	toks := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(toks, []byte(tenancyTokens), 0o600); err != nil {
		t.Fatal(err)
	}
	st := startStackWith(t, stack.Config{TokensFile: toks, Limits: gateway.LimitConfig{Rate: -1}, Shards: 2})
	c := dial(t, st.GatewayAddr)
	tok := func(who string) context.Context { return withToken(t, who+"-token") }

	// The wallet is shared until step 3: casino-a's operator funds.
	for acct, amount := range map[string]int64{"player:ann": 10_000, "player:abe": 10_000, "house:bank": 1_000_000} {
		if _, err := c.wallet.Deposit(tok("a-operator"), &walletv1.DepositRequest{RequestId: t.Name() + "/" + acct, AccountId: acct, Amount: amount}); err != nil {
			t.Fatalf("deposit to %s: %v", acct, err)
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

	// casino-a's players play a coup.
	for _, p := range []string{"ann", "abe"} {
		if _, err := c.table.JoinTable(tok(p), &tablev1.JoinTableRequest{RequestId: t.Name() + "/join/" + p, TableId: a, PlayerId: p}); err != nil {
			t.Fatalf("%s joins casino-a's table: %v", p, err)
		}
	}
	poll(t, "the betting at casino-a's table", func() bool { return get("a-croupier", a).GetState() == tablev1.TableState_TABLE_STATE_BETTING })
	var coup string
	for p, spot := range map[string]tablev1.BetSpot{"ann": tablev1.BetSpot_BET_SPOT_BANK, "abe": tablev1.BetSpot_BET_SPOT_PLAYER} {
		resp, err := c.table.PlaceBet(tok(p), &tablev1.PlaceBetRequest{RequestId: t.Name() + "/bet/" + p, TableId: a, PlayerId: p, Spot: spot, Amount: 100})
		if err != nil {
			t.Fatalf("%s bets: %v", p, err)
		}
		coup = resp.GetTable().GetCoup().GetCoupId()
	}
	if coup == "" {
		t.Fatal("no coup in play after the bets")
	}
	poll(t, "coup "+coup+" settled", func() bool {
		lc := get("a-croupier", a).GetLastCoup()
		return lc.GetCoupId() == coup && lc.GetSettled()
	})

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
	// And casino-a's own see nothing of casino-b's table.
	_, err = c.table.GetTable(tok("ann"), &tablev1.GetTableRequest{TableId: b})
	if status.Code(err) != codes.NotFound || errs.Reason(err) != "TABLE_NOT_FOUND" {
		t.Errorf("ann's GetTable of casino-b's table: %v", err)
	}
	// casino-a's table is as it was: open, ann and abe seated.
	if tb := get("a-croupier", a); tb.GetState() == tablev1.TableState_TABLE_STATE_CLOSED || len(tb.GetSeats()) != 2 {
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
	for _, who := range []string{"a-croupier", "a-auditor", "everywhere"} {
		if rs := rounds(who, &tablev1.ListRoundsRequest{}); len(rs) != 1 || rs[0].GetCoupId() != coup || rs[0].GetOperatorId() != "casino-a" {
			t.Errorf("%s's rounds %v, want coup %s of casino-a", who, rs, coup)
		}
	}
	if rs := rounds("ann", &tablev1.ListRoundsRequest{PlayerId: "ann"}); len(rs) != 1 || rs[0].GetCoupId() != coup {
		t.Errorf("ann's rounds %v, want coup %s", rs, coup)
	}
	for _, who := range []string{"b-croupier", "b-auditor"} {
		if rs := rounds(who, &tablev1.ListRoundsRequest{}); len(rs) != 0 {
			t.Errorf("%s lists casino-a's rounds %v", who, rs)
		}
		if rs := rounds(who, &tablev1.ListRoundsRequest{PlayerId: "ann"}); len(rs) != 0 {
			t.Errorf("%s lists ann's rounds %v", who, rs)
		}
	}
	if got, err := c.table.GetRound(tok("ann"), &tablev1.GetRoundRequest{TableId: a, CoupId: coup}); err != nil || got.GetRound().GetOperatorId() != "casino-a" {
		t.Errorf("ann's GetRound of her round: %v %v", got.GetRound(), err)
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
