package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/opwallet/refwallet"
)

// TestTwoOperatorWallets: a seamless stack whose operators file gives
// casino-a and casino-b each his own wallet (two reference wallets on
// loopback; the default operator keeps the stack's own). Each operator's
// croupier opens a chemin de fer table where two of its players play a
// whole coup through the real services: the player offered the bank puts
// up 500, the other bets 200 against it, the cards are dealt and drawn,
// the coup settles. Then casino-b rotates its secret with no restart: its
// wallet is restarted knowing the new secret only, and wallet-svc's
// secret files are rewritten (the new one current, the old one
// previous); a second coup is played at each table, and the tables close
// (the bank comes back). Each operator's wallet saw only its own table
// and players, the default operator's wallet none; each player's balance
// in his operator's wallet is what the coups make of the 5000 he was
// funded with, worked out here from the outcomes (the punter wins or
// loses his 200; the banker the opposite, less the house's 5% commission
// on a won coup, CF-BANK-WINS; a stand-off moves nothing).
func TestTwoOperatorWallets(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	dir := t.TempDir()
	refs := map[string]*refwallet.Server{}
	entries := ""
	startRef := func(op, addr, secret string) *refwallet.Server {
		t.Helper()
		ref, err := refwallet.Start(context.Background(), refwallet.Config{Addr: addr, DataFile: filepath.Join(dir, op+".db"), Secret: []byte(secret),
			Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ref.Stop() })
		return ref
	}
	write := func(path, data string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	players := map[string][]string{"casino-a": {"ann", "abe"}, "casino-b": {"bea", "ben"}}
	for _, op := range []string{"casino-a", "casino-b"} {
		secret := "secret of " + op
		ref := startRef(op, "", secret)
		for _, p := range []string{"ann", "abe", "bea", "ben"} {
			if _, err := ref.Fund(p, 5000); err != nil {
				t.Fatal(err)
			}
		}
		refs[op] = ref
		sf, prev := filepath.Join(dir, op+".secret"), filepath.Join(dir, op+".previous")
		write(sf, secret+"\n")
		write(prev, "retired secret of "+op+"\n")
		entries += fmt.Sprintf("  - id: %s\n    wallet: {url: %q, secret_files: [%q, %q]}\n", op, ref.BaseURL(), sf, prev)
	}
	ops := filepath.Join(dir, "operators.yaml")
	toks := filepath.Join(dir, "tokens.yaml")
	write(ops, "operators:\n"+entries)
	write(toks, tenancyTokens)
	st := startStackWith(t, stack.Config{TokensFile: toks, OperatorsFile: ops, Wallet: stack.WalletSeamless, Limits: gateway.LimitConfig{Rate: -1},
		ReloadInterval: 50 * time.Millisecond})
	c := dial(t, st.GatewayAddr)
	tok := func(who string) context.Context { return withToken(t, who+"-token") }
	croupier := map[string]string{"casino-a": "a-croupier", "casino-b": "b-croupier"}

	tables := map[string]string{}
	for op, seat := range players {
		resp, err := c.table.CreateTable(tok(croupier[op]), &tablev1.CreateTableRequest{RequestId: "wallets-" + op})
		if err != nil {
			t.Fatalf("%s opens a table: %v", op, err)
		}
		id := resp.GetTable().GetTableId()
		tables[op] = id
		for _, p := range seat {
			if _, err := c.table.JoinTable(tok(p), &tablev1.JoinTableRequest{RequestId: "join-" + p, TableId: id, PlayerId: p}); err != nil {
				t.Fatalf("%s joins %s's table: %v", p, op, err)
			}
		}
	}
	// want is each player's balance in his operator's wallet, by hand.
	want := map[string]map[string]int64{}
	for op, seat := range players {
		want[op] = map[string]int64{}
		for _, p := range seat {
			want[op][p] = 5000
		}
	}
	seq := 0
	rid := func() string { seq++; return fmt.Sprintf("two-wallets-%d", seq) }
	// coup plays the next coup at op's table to its settlement: the bank
	// of 500 (or the one kept), a bet of 200, every draw decided "draw";
	// a move the table refuses meanwhile (a debit retried, the table
	// moved on) is tried again as the table stands, for 60 s at most.
	coup := func(op string) {
		t.Helper()
		id := tables[op]
		start, err := c.table.GetTable(tok(croupier[op]), &tablev1.GetTableRequest{TableId: id})
		if err != nil {
			t.Fatal(err)
		}
		played := start.GetTable().GetCoupsPlayed()
		var banker, punter string
		for deadline := time.Now().Add(60 * time.Second); ; {
			if time.Now().After(deadline) {
				t.Fatalf("%s's coup %d not played in 60 s", op, played+1)
			}
			g, err := c.table.GetTable(tok(croupier[op]), &tablev1.GetTableRequest{TableId: id})
			if err != nil {
				t.Fatal(err)
			}
			tbl := g.GetTable()
			if tbl.GetCoupsPlayed() > played {
				last := tbl.GetLastCoup()
				if last.GetBankerPlayerId() != banker || !last.GetSettled() {
					t.Fatalf("%s's coup: %v, banker %s", op, last, banker)
				}
				switch last.GetOutcome() {
				case tablev1.Outcome_OUTCOME_BANK_WINS:
					want[op][banker] += 200 - 200*5/100
					want[op][punter] -= 200
				case tablev1.Outcome_OUTCOME_BANK_LOSES:
					want[op][banker] -= 200
					want[op][punter] += 200
				case tablev1.Outcome_OUTCOME_STAND_OFF:
				default:
					t.Fatalf("%s's coup: outcome %s", op, last.GetOutcome())
				}
				return
			}
			switch tbl.GetState() {
			case tablev1.TableState_TABLE_STATE_OFFERING_BANK:
				p := tbl.GetOfferedPlayerId()
				_, err = c.table.AcceptBank(tok(p), &tablev1.AcceptBankRequest{RequestId: rid(), TableId: id, PlayerId: p, Amount: 500})
			case tablev1.TableState_TABLE_STATE_BETTING:
				cp := tbl.GetCoup()
				p := cp.GetTurnPlayerId()
				banker = cp.GetBankerPlayerId()
				if slices.ContainsFunc(cp.GetBets(), func(b *tablev1.Bet) bool { return b.GetPlayerId() == p }) {
					_, err = c.table.DeclineBet(tok(p), &tablev1.DeclineBetRequest{RequestId: rid(), TableId: id, PlayerId: p})
					break
				}
				punter = p
				_, err = c.table.PlaceBet(tok(p), &tablev1.PlaceBetRequest{RequestId: rid(), TableId: id, PlayerId: p, Amount: 200})
			case tablev1.TableState_TABLE_STATE_DECISION:
				p := tbl.GetCoup().GetDecisionPlayerId()
				_, err = c.table.DecideDraw(tok(p), &tablev1.DecideDrawRequest{RequestId: rid(), TableId: id, PlayerId: p, Choice: tablev1.DrawChoice_DRAW_CHOICE_DRAW})
			default:
				time.Sleep(20 * time.Millisecond) // dealing or settling
			}
			switch status.Code(err) {
			case codes.OK, codes.Unavailable, codes.FailedPrecondition, codes.Aborted, codes.DeadlineExceeded:
				if err != nil {
					time.Sleep(20 * time.Millisecond)
				}
			default:
				t.Fatalf("%s's table (%s): %v", op, tbl.GetState(), err)
			}
		}
	}
	for _, op := range []string{"casino-a", "casino-b"} {
		coup(op)
	}

	// casino-b rotates: its wallet now knows only the new secret; the
	// secret files name it current and the old one previous. No restart
	// of chemmy: wallet-svc reads them again (ReloadInterval).
	u, err := url.Parse(refs["casino-b"].BaseURL())
	if err != nil {
		t.Fatal(err)
	}
	if err := refs["casino-b"].Stop(); err != nil {
		t.Fatal(err)
	}
	refs["casino-b"] = startRef("casino-b", u.Host, "new secret of casino-b")
	write(filepath.Join(dir, "casino-b.previous"), "secret of casino-b\n")
	write(filepath.Join(dir, "casino-b.secret"), "new secret of casino-b\n")
	for _, op := range []string{"casino-a", "casino-b"} {
		coup(op)
	}
	for op, id := range tables {
		for i := 0; ; i++ {
			_, err := c.table.CloseTable(tok(croupier[op]), &tablev1.CloseTableRequest{RequestId: "close-" + op, TableId: id, Reason: "two wallets"})
			if err == nil {
				break
			}
			if i > 200 {
				t.Fatalf("close %s's table: %v", op, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// Each wallet's balances, once the bank came back and every credit
	// arrived; each saw its own table and players only.
	for op, ref := range refs {
		got := map[string]int64{}
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			bs, err := ref.Balances()
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range bs {
				got[b.PlayerID] = b.Balance
			}
			match := true
			for p, w := range want[op] {
				match = match && got[p] == w
			}
			if match || time.Now().After(deadline) {
				break
			}
		}
		for _, p := range []string{"ann", "abe", "bea", "ben"} {
			w, ok := want[op][p]
			if !ok {
				w = 5000 // another operator's player: untouched
			}
			if got[p] != w {
				t.Errorf("%s's wallet: %s has %d, want %d", op, p, got[p], w)
			}
		}
		recs, err := ref.Transactions()
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			t.Errorf("%s's wallet was never called", op)
		}
		for _, r := range recs {
			if r.Request.TableID != tables[op] || !slices.Contains(players[op], r.Request.PlayerID) {
				t.Errorf("%s's wallet got %s %s of table %q, player %q; want %s's table and players only", op, r.Kind,
					r.Request.TransactionID, r.Request.TableID, r.Request.PlayerID, op)
			}
		}
	}
	if st.OperatorWallet == nil {
		t.Fatal("the stack started no wallet of its own for the default operator")
	}
	if recs, err := st.OperatorWallet.Transactions(); err != nil || len(recs) != 0 {
		t.Errorf("the default operator's wallet got %d calls (%v), want none", len(recs), err)
	}
}
