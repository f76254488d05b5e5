package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/opwallet"
	"github.com/chemmy/chemmy/services/kit/opwallet/refwallet"
)

// TestEveryWalletRoundResolves: every round id chemmy sends to the
// operator's wallet is a round of table-svc's history (GetRound answers
// it), and no round of a closed table stays in play. Against the
// reference operator wallet in seamless mode, at chemin de fer tables:
//
//   - "played": coups dealt and settled, then one voided (VoidCoup after a
//     bet), then the table closed between coups;
//   - "refused": dave, whom the operator holds 100, puts up a bank of 500
//     (refused INSUFFICIENT_FUNDS before any coup exists), alice takes
//     the bank, dave bets 300 against it (refused), and the table closes
//     with no coup dealt;
//   - "bank-only": bob puts up a bank and the table closes at once;
//   - "timeout": carol lets her betting turns run out against bob's bank,
//     then the table closes;
//   - "fee": under hourly_fee alice and bob sit more than a second before
//     a coup is played, so each pays a seat fee (CF-BANK-WINS), sent to
//     the operator's wallet in a round of its own ("fee-<request id>"),
//     then the table closes.
//
// The round ids come from the operator's own records (every debit,
// credit, rollback and round_end it saw, the refused ones included).
// Each must resolve with GetRound at its table; every round of the
// closed tables (ListRounds) must be over; the rounds the scenario knows
// must be in the state it expects: the voided coup VOIDED, the coups
// played SETTLED (as many as the table counted), the fee rounds SETTLED,
// the rest CANCELLED.
func TestEveryWalletRoundResolves(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	r := newSeamlessRig(t, refwallet.Faults{})
	for _, p := range []string{"alice", "bob", "carol"} {
		if _, err := r.ref.Fund(p, 100_000); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.ref.Fund("dave", 100); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	open := func(name string, rules *tablev1.HouseRules, players ...string) *seamlessTable {
		t.Helper()
		resp, err := r.c.table.CreateTable(r.as(ctx, "croupier"), &tablev1.CreateTableRequest{RequestId: "wallet-rounds-" + name, HouseRules: rules})
		if err != nil {
			t.Fatal(err)
		}
		tb := &seamlessTable{id: resp.GetTable().GetTableId(), players: players}
		for _, p := range players {
			if _, err := r.c.table.JoinTable(r.as(ctx, p), &tablev1.JoinTableRequest{RequestId: tb.rid(), TableId: tb.id, PlayerId: p}); err != nil {
				t.Fatalf("%s joins %s: %v", p, name, err)
			}
		}
		return tb
	}
	get := func(tb *seamlessTable) *tablev1.Table {
		t.Helper()
		g, err := r.c.table.GetTable(r.as(ctx, "croupier"), &tablev1.GetTableRequest{TableId: tb.id})
		if err != nil {
			t.Fatal(err)
		}
		return g.GetTable()
	}
	closeNow := func(tb *seamlessTable) {
		t.Helper()
		if _, err := r.c.table.CloseTable(r.as(ctx, "croupier"), &tablev1.CloseTableRequest{RequestId: tb.rid(), TableId: tb.id, Reason: "wallet rounds"}); err != nil {
			t.Fatalf("close %s: %v", tb.id, err)
		}
	}
	refused := func(err error, what string) {
		t.Helper()
		if status.Code(err) != codes.FailedPrecondition || errs.Reason(err) != "INSUFFICIENT_FUNDS" {
			t.Fatalf("%s: %v, want FAILED_PRECONDITION INSUFFICIENT_FUNDS", what, err)
		}
	}
	// closeBetweenCoups closes tb once its coup in play is over (a table
	// closes between coups only), playing it on meanwhile.
	closeBetweenCoups := func(tb *seamlessTable) {
		t.Helper()
		for i := 0; ; i++ {
			_, err := r.c.table.CloseTable(r.as(ctx, "croupier"), &tablev1.CloseTableRequest{RequestId: tb.id + "-close", TableId: tb.id, Reason: "wallet rounds"})
			if err == nil {
				return
			}
			if i > 400 {
				t.Fatalf("close %s: %v", tb.id, err)
			}
			r.step(tb)
		}
	}
	want := map[string]tablev1.RoundState{} // coup id -> its expected final state

	// "played": three coups settled, one voided, one more settled.
	played := open("played", nil, "alice", "bob", "carol")
	for get(played).GetCoupsPlayed() < 3 {
		r.step(played)
	}
	for {
		tbl := get(played)
		if tbl.GetState() == tablev1.TableState_TABLE_STATE_BETTING && len(tbl.GetCoup().GetBets()) > 0 {
			id := tbl.GetCoup().GetCoupId()
			if _, err := r.c.table.VoidCoup(r.as(ctx, "croupier"), &tablev1.VoidCoupRequest{RequestId: played.rid(), TableId: played.id, CoupId: id, Reason: "wallet rounds"}); err != nil {
				t.Fatalf("void %s: %v", id, err)
			}
			want[id] = tablev1.RoundState_ROUND_STATE_VOIDED
			break
		}
		r.step(played)
	}
	for get(played).GetCoupsPlayed() < 4 {
		r.step(played)
	}
	closeBetweenCoups(played)

	// "refused": dave's bank and bet refused by the operator, alice's
	// bank up, no coup dealt.
	ref := open("refused", nil, "dave", "alice")
	if p := get(ref).GetOfferedPlayerId(); p != "dave" {
		t.Fatalf("bank offered to %q, want dave (seat 1)", p)
	}
	_, err := r.c.table.AcceptBank(r.as(ctx, "dave"), &tablev1.AcceptBankRequest{RequestId: ref.rid(), TableId: ref.id, PlayerId: "dave", Amount: 500})
	refused(err, "dave's bank")
	if _, err := r.c.table.DeclineBank(r.as(ctx, "dave"), &tablev1.DeclineBankRequest{RequestId: ref.rid(), TableId: ref.id, PlayerId: "dave"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.c.table.AcceptBank(r.as(ctx, "alice"), &tablev1.AcceptBankRequest{RequestId: ref.rid(), TableId: ref.id, PlayerId: "alice", Amount: 500}); err != nil {
		t.Fatal(err)
	}
	refCoup := get(ref).GetCoup().GetCoupId()
	if turn := get(ref).GetCoup().GetTurnPlayerId(); turn != "dave" {
		t.Fatalf("betting turn %q, want dave", turn)
	}
	_, err = r.c.table.PlaceBet(r.as(ctx, "dave"), &tablev1.PlaceBetRequest{RequestId: ref.rid(), TableId: ref.id, PlayerId: "dave", Amount: 300})
	refused(err, "dave's bet")
	closeNow(ref)
	want[refCoup] = tablev1.RoundState_ROUND_STATE_CANCELLED

	// "bank-only": a bank put up, the table closed before any coup.
	bankOnly := open("bank-only", nil, "bob", "carol")
	if _, err := r.c.table.AcceptBank(r.as(ctx, "bob"), &tablev1.AcceptBankRequest{RequestId: bankOnly.rid(), TableId: bankOnly.id, PlayerId: "bob", Amount: 500}); err != nil {
		t.Fatal(err)
	}
	want[get(bankOnly).GetCoup().GetCoupId()] = tablev1.RoundState_ROUND_STATE_CANCELLED
	closeNow(bankOnly)

	// "timeout": carol's betting turn runs out (betting reopens for her
	// after each), then the table closes.
	timeout := open("timeout", &tablev1.HouseRules{BetTimeLimitMs: 1000}, "bob", "carol")
	if _, err := r.c.table.AcceptBank(r.as(ctx, "bob"), &tablev1.AcceptBankRequest{RequestId: timeout.rid(), TableId: timeout.id, PlayerId: "bob", Amount: 500}); err != nil {
		t.Fatal(err)
	}
	toCoup := get(timeout).GetCoup().GetCoupId()
	for deadline := time.Now().Add(30 * time.Second); ; {
		list, err := r.c.table.ListRounds(r.as(ctx, "croupier"), &tablev1.ListRoundsRequest{TableId: timeout.id})
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(list.GetRounds(), func(x *tablev1.Round) bool {
			return x.GetCoupId() == toCoup && slices.ContainsFunc(x.GetPlayers(), func(p *tablev1.RoundPlayer) bool { return p.GetPlayerId() == "carol" })
		}) {
			break // her turn_timed_out is in the round
		}
		if time.Now().After(deadline) {
			t.Fatalf("carol's turn did not time out: %v", list.GetRounds())
		}
		time.Sleep(50 * time.Millisecond)
	}
	closeNow(timeout)
	want[toCoup] = tablev1.RoundState_ROUND_STATE_CANCELLED

	// "fee": 360,000 an hour is 100 a second; seat time is billed by the
	// whole second, so the players sit more than one before the coup.
	fee := open("fee", &tablev1.HouseRules{HourlyFee: 360_000}, "alice", "bob")
	time.Sleep(1100 * time.Millisecond)
	for get(fee).GetCoupsPlayed() < 1 {
		r.step(fee)
	}
	closeBetweenCoups(fee)

	tables := []*seamlessTable{played, ref, bankOnly, timeout, fee}
	report := r.waitDrained([]string{"alice", "bob", "carol", "dave"})
	if len(report) == 0 {
		t.Fatal("no operator transaction")
	}

	// Every round the operator saw resolves at its table, and is over.
	seen, final := r.roundsResolve()
	refusedDebits := 0
	for _, kinds := range seen {
		for _, k := range kinds {
			if k == opwallet.OpDebit+" "+refwallet.StatusRefused {
				refusedDebits++
			}
		}
	}
	if refusedDebits != 2 {
		t.Errorf("the operator refused %d debits, want 2 (dave's bank and bet)", refusedDebits)
	}

	// Every round of every (closed) table is over; the ones the scenario
	// knows are in the state it made.
	settled := 0
	for _, tb := range tables {
		token := ""
		for {
			list, err := r.c.table.ListRounds(r.as(ctx, "croupier"), &tablev1.ListRoundsRequest{TableId: tb.id, PageToken: token})
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range list.GetRounds() {
				final[x.GetCoupId()] = x.GetState()
				switch x.GetState() {
				case tablev1.RoundState_ROUND_STATE_SETTLED:
					if tb == played {
						settled++
					}
				case tablev1.RoundState_ROUND_STATE_VOIDED, tablev1.RoundState_ROUND_STATE_CANCELLED:
				default:
					t.Errorf("round %s of closed table %s is %s", x.GetCoupId(), tb.id, x.GetState())
				}
			}
			if token = list.GetNextPageToken(); token == "" {
				break
			}
		}
	}
	if n := get(played).GetCoupsPlayed(); int64(settled) != n {
		t.Errorf("%d settled rounds at the played table, it counts %d coups played", settled, n)
	}
	for id, s := range want {
		if final[id] != s {
			t.Errorf("round %s: %s, want %s", id, final[id], s)
		}
	}
	// The seat fees of the fee table were debited in rounds of their own,
	// each resolved (above) and settled.
	feeRounds := 0
	for k, kinds := range seen {
		if k.table == fee.id && strings.HasPrefix(k.round, "fee-") {
			feeRounds++
			if final[k.round] != tablev1.RoundState_ROUND_STATE_SETTLED {
				t.Errorf("fee round %s (operator: %v): %s, want SETTLED", k.round, kinds, final[k.round])
			}
		}
	}
	if feeRounds < 2 {
		t.Errorf("%d fee rounds at the fee table, want at least 2 (alice's and bob's seat fees)", feeRounds)
	}
	// dave's refused bank named a round of its own, which nothing else
	// names: it resolves (above) and is over.
	daves := 0
	for k := range seen {
		if k.table == ref.id && k.round != refCoup {
			daves++
			if final[k.round] != tablev1.RoundState_ROUND_STATE_CANCELLED {
				t.Errorf("dave's refused bank's round %s: %s, want CANCELLED", k.round, final[k.round])
			}
		}
	}
	if daves != 1 {
		t.Errorf("%d rounds of the refused table besides alice's coup, want 1 (dave's refused bank)", daves)
	}
}

// walletRound is a round as the operator's wallet saw it: its table and
// its round id.
type walletRound struct{ table, round string }

// roundsResolve checks that every round of the operator's records (every
// debit, credit, rollback and round_end it saw, the refused ones
// included) resolves with GetRound at its table and is over, every
// table being closed. It returns the operator's transactions of each
// round ("kind status") and each round's state.
func (r *seamlessRig) roundsResolve() (map[walletRound][]string, map[string]tablev1.RoundState) {
	t := r.t
	t.Helper()
	recs, err := r.ref.Transactions()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[walletRound][]string{}
	for _, rec := range recs {
		k := walletRound{rec.Request.TableID, rec.Request.RoundID}
		seen[k] = append(seen[k], rec.Kind+" "+rec.Status)
	}
	final := map[string]tablev1.RoundState{}
	for k, kinds := range seen {
		g, err := r.c.table.GetRound(as(t, "croupier"), &tablev1.GetRoundRequest{TableId: k.table, CoupId: k.round})
		if err != nil {
			t.Errorf("round %s of table %s (operator: %v): GetRound %v", k.round, k.table, kinds, err)
			continue
		}
		s := g.GetRound().GetState()
		final[k.round] = s
		if s == tablev1.RoundState_ROUND_STATE_IN_PLAY || s == tablev1.RoundState_ROUND_STATE_UNSPECIFIED {
			t.Errorf("round %s of closed table %s (operator: %v) is %s", k.round, k.table, kinds, s)
		}
	}
	return seen, final
}
