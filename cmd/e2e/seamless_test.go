package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/opwallet"
	"github.com/chemmy/chemmy/services/kit/opwallet/refwallet"
)

// seamlessRig is a chemmy stack in seamless wallet mode whose operator is
// the reference operator wallet, started apart so that chemmy can be
// stopped and started again on the same files while the operator stays.
type seamlessRig struct {
	t      *testing.T
	dir    string
	ref    *refwallet.Server
	op     opwallet.Operator
	st     *stack.Stack
	c      *client
	starts int
	tokens string
}

// maxSeamlessBet caps a punter's bet: a bank a lucky banker keeps
// doubling would otherwise outgrow what the punters are funded with. Each
// punter bets once a coup (CF-BET-ORDER); what no one covers is set aside
// (CF-UNCOVERED).
const maxSeamlessBet = 2000

// seamlessTables tables play, each with three players.
const seamlessTables = 3

func seamlessPlayers(n int) []string {
	if n == 0 {
		return []string{"alice", "bob", "carol"}
	}
	return []string{fmt.Sprintf("p%d-a", n), fmt.Sprintf("p%d-b", n), fmt.Sprintf("p%d-c", n)}
}

func newSeamlessRig(t *testing.T, faults refwallet.Faults) *seamlessRig {
	t.Helper()
	dir := t.TempDir()
	secret := []byte("e2e seamless secret")
	ref, err := refwallet.Start(context.Background(), refwallet.Config{DataFile: filepath.Join(dir, "opwallet.db"), Secret: secret,
		Currency: "EUR", Faults: faults, Seed: 15,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ref.Stop() })
	// A short timeout, so that the wallet's hangs are timeouts.
	op, err := opwallet.NewHTTP(opwallet.HTTPConfig{BaseURL: ref.BaseURL(), AllowInsecureHTTP: true, Secret: secret, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// The demo tokens, and "<p>-token" for the players of the other tables.
	base, err := os.ReadFile(tokensFile(t))
	if err != nil {
		t.Fatal(err)
	}
	toks := filepath.Join(dir, "tokens.yaml")
	extra := ""
	for n := 1; n < seamlessTables; n++ {
		for _, p := range seamlessPlayers(n) {
			extra += fmt.Sprintf("  - token: %s-token\n    subject: %s\n    role: player\n", p, p)
		}
	}
	if err := os.WriteFile(toks, append(base, extra...), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &seamlessRig{t: t, dir: filepath.Join(dir, "chemmy"), ref: ref, op: op, tokens: toks}
	r.start()
	t.Cleanup(r.stop)
	return r
}

// start starts chemmy on the rig's files (free ports each time).
func (r *seamlessRig) start() {
	r.t.Helper()
	st, err := stack.Start(context.Background(), stack.Config{DataDir: r.dir, TokensFile: r.tokens, Limits: gateway.LimitConfig{Rate: -1},
		Wallet: stack.WalletSeamless, Operator: r.op, InterruptAfter: 5 * time.Second,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))})
	if err != nil {
		r.t.Fatal(err)
	}
	r.st, r.c = st, dial(r.t, st.GatewayAddr)
	r.starts++
}

func (r *seamlessRig) stop() {
	if r.st == nil {
		return
	}
	r.st.Stop()
	if err := r.st.Wait(); err != nil {
		r.t.Errorf("stack stopped with: %v", err)
	}
	r.st = nil
}

// restart stops chemmy (its outbox may hold credits not yet acknowledged)
// and starts it again.
func (r *seamlessRig) restart() {
	r.stop()
	r.start()
}

// seamlessTable plays one chemin de fer table, one move per step, as
// chemmy load does: three players, a bank of 500, the punters covering
// it, decisions answered "draw". A move the operator's faults cut off is
// made again with a new request id on the table as it then stands.
type seamlessTable struct {
	id      string
	players []string
	seq     int
	played  int64
	errs    int
	failed  int // moves refused or cut off, in all
}

func (tb *seamlessTable) rid() string {
	tb.seq++
	return tb.id + "-r" + strconv.Itoa(tb.seq)
}

// as is ctx with who's demo token.
func (r *seamlessRig) as(ctx context.Context, who string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+who+"-token")
}

// step makes the table's next move and returns the coups played so far.
func (r *seamlessRig) step(tb *seamlessTable) int64 {
	t := r.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got, err := r.c.table.GetTable(r.as(ctx, "croupier"), &tablev1.GetTableRequest{TableId: tb.id})
	if err != nil {
		t.Fatalf("GetTable %s: %v", tb.id, err)
	}
	tbl := got.GetTable()
	tb.played = tbl.GetCoupsPlayed()
	switch tbl.GetState() {
	case tablev1.TableState_TABLE_STATE_OFFERING_BANK:
		p := tbl.GetOfferedPlayerId()
		_, err = r.c.table.AcceptBank(r.as(ctx, p), &tablev1.AcceptBankRequest{RequestId: tb.rid(), TableId: tb.id, PlayerId: p, Amount: 500})
	case tablev1.TableState_TABLE_STATE_BETTING:
		cp := tbl.GetCoup()
		p := cp.GetTurnPlayerId()
		if slices.ContainsFunc(cp.GetBets(), func(b *tablev1.Bet) bool { return b.GetPlayerId() == p }) {
			// His turn again, the bank still not covered: enough
			// (CF-BET-ORDER; the rest is set aside, CF-UNCOVERED).
			_, err = r.c.table.DeclineBet(r.as(ctx, p), &tablev1.DeclineBetRequest{RequestId: tb.rid(), TableId: tb.id, PlayerId: p})
			break
		}
		_, err = r.c.table.PlaceBet(r.as(ctx, p), &tablev1.PlaceBetRequest{RequestId: tb.rid(), TableId: tb.id, PlayerId: p, Amount: min(cp.GetUncovered(), maxSeamlessBet)})
	case tablev1.TableState_TABLE_STATE_DECISION:
		p := tbl.GetCoup().GetDecisionPlayerId()
		_, err = r.c.table.DecideDraw(r.as(ctx, p), &tablev1.DecideDrawRequest{RequestId: tb.rid(), TableId: tb.id, PlayerId: p, Choice: tablev1.DrawChoice_DRAW_CHOICE_DRAW})
	default:
		time.Sleep(20 * time.Millisecond) // dealing or settling: look again
	}
	switch status.Code(err) {
	case codes.OK:
		tb.errs = 0
	case codes.InvalidArgument, codes.PermissionDenied, codes.Unauthenticated, codes.Internal, codes.Unknown, codes.NotFound:
		t.Fatalf("table %s (%s): %v", tb.id, tbl.GetState(), err)
	default:
		// The operator did not answer a debit (UNAVAILABLE), refused it,
		// or the table moved on meanwhile: play the table as it stands.
		tb.failed++
		if tb.errs++; tb.errs > 200 {
			t.Fatalf("table %s stuck in %s: %v", tb.id, tbl.GetState(), err)
		}
	}
	return tb.played
}

// TestSeamlessWalletUnderFaults plays chemin de fer rounds in seamless
// mode against the reference operator wallet answering with random
// timeouts, 5xx errors, duplicate and late answers, chemmy stopped and
// started again meanwhile; then, the faults off and the tables closed, it
// checks that every movement is accounted for exactly once on both sides:
// the operator's books balance; its balances plus chemmy's commission
// equal what the players were funded with; every round a player staked in
// has one round_end and no rollback after a credit; and chemmy's
// reconciliation report (GetOperatorReport) matches the operator's ledger
// transaction by transaction; every round the operator saw resolves with
// GetRound and is over. CHEMMY_SEAMLESS_ROUNDS sets the rounds
// (default 60; make seamless-soak plays thousands).
func TestSeamlessWalletUnderFaults(t *testing.T) {
	rounds := int64(60)
	if v := os.Getenv("CHEMMY_SEAMLESS_ROUNDS"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			t.Fatalf("CHEMMY_SEAMLESS_ROUNDS=%q", v)
		}
		rounds = n
	}
	faults := refwallet.Faults{Timeout: 0.04, Error: 0.04, Duplicate: 0.04, Late: 0.04, HangMS: 600, LateMS: 200}
	r := newSeamlessRig(t, faults)
	const funding = 1_000_000
	var tables []*seamlessTable
	for n := range seamlessTables {
		tb := &seamlessTable{players: seamlessPlayers(n)}
		for _, p := range tb.players {
			if _, err := r.ref.Fund(p, funding); err != nil {
				t.Fatal(err)
			}
		}
		resp, err := r.c.table.CreateTable(as(t, "croupier"), &tablev1.CreateTableRequest{RequestId: fmt.Sprintf("seamless-table-%d", n)})
		if err != nil {
			t.Fatal(err)
		}
		tb.id = resp.GetTable().GetTableId()
		for _, p := range tb.players {
			if _, err := r.c.table.JoinTable(as(t, p), &tablev1.JoinTableRequest{RequestId: tb.id + "-join-" + p, TableId: tb.id, PlayerId: p}); err != nil {
				t.Fatalf("join %s: %v", p, err)
			}
		}
		tables = append(tables, tb)
	}
	const restarts = 3
	nextRestart := rounds / (restarts + 1)
	for {
		var played int64
		for _, tb := range tables {
			played += r.step(tb)
		}
		if played >= rounds {
			break
		}
		if played >= nextRestart && r.starts <= restarts {
			r.restart()
			nextRestart += rounds / (restarts + 1)
		}
	}
	// The faults off: each table finishes its coup and closes, every bank
	// coming back; then the outbox drains.
	if err := r.ref.SetFaults(refwallet.Faults{}); err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		for i := 0; ; i++ {
			_, err := r.c.table.CloseTable(as(t, "croupier"), &tablev1.CloseTableRequest{RequestId: tb.id + "-close", TableId: tb.id, Reason: "end of the soak"})
			if err == nil {
				break
			}
			if i > 400 {
				t.Fatalf("close %s: %v", tb.id, err)
			}
			r.step(tb)
		}
	}
	r.restart() // once more: the outbox goes on after a start too
	var players []string
	for _, tb := range tables {
		players = append(players, tb.players...)
	}
	report := r.waitDrained(players)
	r.checkBooks(players, funding, report)
	// Every round the operator saw, the rolled back and refused stakes'
	// included, is a round of table-svc's history, over (issue 23).
	r.roundsResolve()
	failed := 0
	for _, tb := range tables {
		failed += tb.failed
	}
	byStatus := map[string]int{}
	for _, tx := range report {
		byStatus[tx.GetKind()+" "+tx.GetStatus()]++
	}
	t.Logf("seamless soak: %d rounds on %d tables, %d chemmy starts, %d moves refused or cut off; operator transactions: %v",
		rounds, len(tables), r.starts, failed, byStatus)
}

// waitDrained waits until table-svc has rolled back every escrow intent
// (its recovery after a start cancels them, which may end rounds and queue
// rollbacks and round_ends), then chemmy's report has nothing pending and
// every player's chemmy account is empty, and returns the report's
// transactions of every day the run touched, by id. The intents come
// first: once none is left nothing else queues an operator transaction,
// so the report read after is final.
func (r *seamlessRig) waitDrained(players []string) map[string]*walletv1.OperatorTransaction {
	t := r.t
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		if n := r.intents(); n != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("not drained after 90 s: %v escrow intents left in table-svc", n)
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		txs, pending := r.report()
		empty := true
		for _, p := range players {
			a := r.c.account(t, "player:"+p)
			empty = empty && a.GetBalance() == 0 && a.GetHeld() == 0
		}
		if pending == 0 && empty {
			return txs
		}
		if time.Now().After(deadline) {
			t.Fatalf("not drained after 90 s: %d transactions pending, player accounts empty: %v", pending, empty)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// intents is table-svc's chemmy_table_escrow_intents, over its shards.
func (r *seamlessRig) intents() float64 {
	r.t.Helper()
	mfs, err := r.st.Metrics().Gather()
	if err != nil {
		r.t.Fatal(err)
	}
	found, n := false, 0.0
	for _, mf := range mfs {
		if mf.GetName() != "chemmy_table_escrow_intents" {
			continue
		}
		for _, m := range mf.GetMetric() {
			found = true
			n += m.GetGauge().GetValue()
		}
	}
	if !found {
		r.t.Fatal("table-svc has no chemmy_table_escrow_intents")
	}
	return n
}

// report reads GetOperatorReport for every day of the operator's records,
// every page, and counts the pending transactions.
func (r *seamlessRig) report() (map[string]*walletv1.OperatorTransaction, int) {
	t := r.t
	t.Helper()
	recs, err := r.ref.Transactions()
	if err != nil {
		t.Fatal(err)
	}
	days := map[string]bool{time.Now().UTC().Format(time.DateOnly): true}
	for _, rec := range recs {
		days[rec.Day()] = true
	}
	out := map[string]*walletv1.OperatorTransaction{}
	pending := 0
	for day := range days {
		token := ""
		for {
			resp, err := r.c.wallet.GetOperatorReport(as(t, "auditor"), &walletv1.GetOperatorReportRequest{Day: day, PageSize: 1000, PageToken: token})
			if err != nil {
				t.Fatalf("GetOperatorReport %s: %v", day, err)
			}
			for _, tx := range resp.GetTransactions() {
				out[tx.GetTransactionId()] = tx
				if tx.GetStatus() == "pending" {
					pending++
				}
			}
			if token = resp.GetNextPageToken(); token == "" {
				break
			}
		}
	}
	return out, pending
}

// checkBooks compares the two sides once everything is settled.
func (r *seamlessRig) checkBooks(players []string, funding int64, report map[string]*walletv1.OperatorTransaction) {
	t := r.t
	t.Helper()
	if err := r.ref.CheckBooks(); err != nil {
		t.Fatalf("the operator's books: %v", err)
	}
	// Conservation: what left the players' operator balances is the
	// house's commission in chemmy.
	bals, err := r.ref.Balances()
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, b := range bals {
		total += b.Balance
	}
	commission := r.c.account(t, "house:commission").GetBalance()
	if want := funding * int64(len(players)); total+commission != want {
		t.Errorf("operator balances %d + chemmy's commission %d = %d, want the %d funded", total, commission, total+commission, want)
	}
	recs, err := r.ref.Transactions()
	if err != nil {
		t.Fatal(err)
	}
	// Per player and round: one round_end once he staked; no rollback
	// after a credit.
	type key struct{ player, round string }
	staked, ends, credited := map[key]bool{}, map[key]int{}, map[key]bool{}
	reasons := map[string]int{}
	seen := map[string]bool{}
	for _, rec := range recs {
		req := rec.Request
		k := key{req.PlayerID, req.RoundID}
		seen[req.TransactionID] = true
		switch rec.Kind {
		case opwallet.OpDebit:
			reasons[req.Reason]++
			if rec.Status != refwallet.StatusRefused {
				staked[k] = true
			}
		case opwallet.OpCredit:
			credited[k] = true
		case opwallet.OpRollback: // records come in the order the operator decided them
			if credited[k] {
				t.Errorf("rollback %s of round %s for %s after a credit", req.TransactionID, req.RoundID, req.PlayerID)
			}
		case opwallet.OpRoundEnd:
			ends[k]++
		}
		// chemmy's side of the same transaction.
		tx := report[req.TransactionID]
		if tx == nil {
			t.Errorf("operator transaction %s (%s) is not in chemmy's report", req.TransactionID, rec.Kind)
			continue
		}
		if tx.GetKind() != rec.Kind || tx.GetAmount() != req.Amount || tx.GetPlayerId() != req.PlayerID || tx.GetRoundId() != req.RoundID {
			t.Errorf("transaction %s: operator %s %d %s round %s, chemmy %s %d %s round %s", req.TransactionID,
				rec.Kind, req.Amount, req.PlayerID, req.RoundID, tx.GetKind(), tx.GetAmount(), tx.GetPlayerId(), tx.GetRoundId())
		}
		want := map[string][]string{
			refwallet.StatusApplied:    {"applied", "acknowledged"},
			refwallet.StatusRolledBack: {"rolled_back"},
			refwallet.StatusRefused:    {"refused", "rolled_back"}, // a late debit after its rollback
		}[rec.Status]
		if !slices.Contains(want, tx.GetStatus()) {
			t.Errorf("transaction %s (%s): operator %s, chemmy %s", req.TransactionID, rec.Kind, rec.Status, tx.GetStatus())
		}
	}
	if reasons["bank"] == 0 || reasons["bet"] == 0 || len(reasons) != 2 {
		t.Errorf("debit reasons %v: want the banks as \"bank\", the bets as \"bet\"", reasons)
	}
	for k := range staked {
		if ends[k] != 1 {
			t.Errorf("round %s of %s: %d round_end, want 1", k.round, k.player, ends[k])
		}
	}
	// chemmy sent nothing the operator did not record, but debits that
	// never reached it (rolled back, a tombstone on the operator's side).
	for id, tx := range report {
		if !seen[id] && !(tx.GetKind() == opwallet.OpDebit && tx.GetStatus() == "rolled_back") {
			t.Errorf("chemmy's transaction %s (%s, %s) is not in the operator's ledger", id, tx.GetKind(), tx.GetStatus())
		}
	}
}

// TestSeamlessRefusalReachesThePlayer: the operator's refusal of a debit
// reaches the player through the table with its reason and code: an
// unknown player's bank OPERATOR_REFUSED (operator_code UNKNOWN_PLAYER), a
// bank beyond his balance INSUFFICIENT_FUNDS; nothing is held either way.
func TestSeamlessRefusalReachesThePlayer(t *testing.T) {
	r := newSeamlessRig(t, refwallet.Faults{})
	if _, err := r.ref.Fund("bob", 300); err != nil {
		t.Fatal(err)
	}
	resp, err := r.c.table.CreateTable(as(t, "croupier"), &tablev1.CreateTableRequest{RequestId: "refusals"})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetTable().GetTableId()
	for _, p := range []string{"alice", "bob"} {
		if _, err := r.c.table.JoinTable(as(t, p), &tablev1.JoinTableRequest{RequestId: "join-" + p, TableId: id, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ player, reason, code string }{
		{"alice", "OPERATOR_REFUSED", opwallet.CodeUnknownPlayer},
		{"bob", "INSUFFICIENT_FUNDS", opwallet.CodeInsufficientFunds},
	} {
		got, err := r.c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: id})
		if err != nil {
			t.Fatal(err)
		}
		p := got.GetTable().GetOfferedPlayerId()
		if p != c.player {
			// The offer goes round: decline until it is c.player's.
			if _, err := r.c.table.DeclineBank(as(t, p), &tablev1.DeclineBankRequest{RequestId: "decline-" + p, TableId: id, PlayerId: p}); err != nil {
				t.Fatal(err)
			}
		}
		_, err = r.c.table.AcceptBank(as(t, c.player), &tablev1.AcceptBankRequest{RequestId: "bank-" + c.player, TableId: id, PlayerId: c.player, Amount: 500})
		if status.Code(err) != codes.FailedPrecondition || errs.Reason(err) != c.reason || errs.Info(err).GetMetadata()["operator_code"] != c.code {
			t.Fatalf("%s's bank: %v (%v), want FAILED_PRECONDITION %s with operator_code %s", c.player, err, errs.Info(err), c.reason, c.code)
		}
		if a := r.c.account(t, "player:"+c.player); a.GetHeld() != 0 || a.GetBalance() != 0 {
			t.Fatalf("%s after the refusal: %v", c.player, a)
		}
	}
}

// TestSeamlessRoundBalances: in seamless mode GetRound gives each
// player's balances in the operator's wallet around the round, as the
// operator answered them (the wallet's GetOperatorRound). One chemin de
// fer coup against the reference operator wallet, the players funded
// 5000 each: every player's balance before is 5000; a punter's after is
// what the operator's own books hold for him once the round's money is
// answered (he moved nothing since); a punter reading the round sees his
// own balances only.
func TestSeamlessRoundBalances(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	r := newSeamlessRig(t, refwallet.Faults{})
	players := seamlessPlayers(0)
	for _, p := range players {
		if _, err := r.ref.Fund(p, 5000); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	resp, err := r.c.table.CreateTable(r.as(ctx, "croupier"), &tablev1.CreateTableRequest{RequestId: "round-balances"})
	if err != nil {
		t.Fatal(err)
	}
	tb := &seamlessTable{id: resp.GetTable().GetTableId(), players: players}
	for _, p := range players {
		if _, err := r.c.table.JoinTable(r.as(ctx, p), &tablev1.JoinTableRequest{RequestId: tb.rid(), TableId: tb.id, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	for {
		// step moves after it reads the table: look first, so that
		// nothing of the next coup is staked.
		g, err := r.c.table.GetTable(r.as(ctx, "croupier"), &tablev1.GetTableRequest{TableId: tb.id})
		if err != nil {
			t.Fatal(err)
		}
		if g.GetTable().GetCoupsPlayed() >= 1 {
			break
		}
		r.step(tb)
	}
	list, err := r.c.table.ListRounds(r.as(ctx, "croupier"), &tablev1.ListRoundsRequest{TableId: tb.id})
	if err != nil || len(list.GetRounds()) != 1 {
		t.Fatalf("ListRounds: %v, %v", list, err)
	}
	round := list.GetRounds()[0]
	var banker string
	for _, p := range round.GetPlayers() {
		if p.GetBanker() {
			banker = p.GetPlayerId()
		}
		if p.BalanceBefore != nil || p.BalanceAfter != nil {
			t.Errorf("ListRounds gives %s's balances: %v", p.GetPlayerId(), p)
		}
	}
	// Wait until the operator has answered every movement of the round.
	var got *tablev1.Round
	deadline := time.Now().Add(60 * time.Second)
	for {
		g, err := r.c.table.GetRound(r.as(ctx, "croupier"), &tablev1.GetRoundRequest{TableId: tb.id, CoupId: round.GetCoupId()})
		if err != nil {
			t.Fatal(err)
		}
		got = g.GetRound()
		if !slices.ContainsFunc(got.GetPlayers(), func(p *tablev1.RoundPlayer) bool { return p.BalanceAfter == nil }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the round's balances are not all answered: %v", got.GetPlayers())
		}
		time.Sleep(50 * time.Millisecond)
	}
	books, err := r.ref.Balances()
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]int64{}
	for _, b := range books {
		held[b.PlayerID] = b.Balance
	}
	var punter *tablev1.RoundPlayer
	for _, p := range got.GetPlayers() {
		if p.GetBalanceBefore() != 5000 {
			t.Errorf("%s's balance before: %v, want 5000 (his funding)", p.GetPlayerId(), p.BalanceBefore)
		}
		if p.GetPlayerId() == banker {
			continue // his bank may still be held for his next coup
		}
		punter = p
		if p.GetBalanceAfter() != held[p.GetPlayerId()] || p.GetBalanceAfter()-p.GetBalanceBefore() != p.GetNet() {
			t.Errorf("%s's balance after: %d, the operator holds %d; net %d", p.GetPlayerId(), p.GetBalanceAfter(), held[p.GetPlayerId()], p.GetNet())
		}
	}
	if punter == nil {
		t.Fatalf("no punter in the round: %v", got.GetPlayers())
	}
	mine, err := r.c.table.GetRound(r.as(ctx, punter.GetPlayerId()), &tablev1.GetRoundRequest{TableId: tb.id, CoupId: round.GetCoupId()})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range mine.GetRound().GetPlayers() {
		if own := p.GetPlayerId() == punter.GetPlayerId(); own != (p.BalanceBefore != nil && p.BalanceAfter != nil) {
			t.Errorf("%s reads %s's balances: %v", punter.GetPlayerId(), p.GetPlayerId(), p)
		}
	}
}
