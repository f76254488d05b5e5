package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/opwallet/refwallet"
)

// TestTwoOperatorWallets: a seamless stack whose operators file gives
// casino-a and casino-b each his own wallet (two reference wallets on
// loopback; the default operator keeps the stack's own). Each operator's
// croupier opens a chemin de fer table, two of its players sit, and the
// player offered the bank takes it: the debit of each bank reaches its
// own operator's wallet only (its recorded calls name its table alone),
// and the default operator's wallet sees no call.
func TestTwoOperatorWallets(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	dir := t.TempDir()
	refs := map[string]*refwallet.Server{}
	entries := ""
	for _, op := range []string{"casino-a", "casino-b"} {
		secret := "secret of " + op
		ref, err := refwallet.Start(context.Background(), refwallet.Config{DataFile: filepath.Join(dir, op+".db"), Secret: []byte(secret),
			Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ref.Stop() })
		for _, p := range []string{"ann", "abe", "bea", "ben"} {
			if _, err := ref.Fund(p, 5000); err != nil {
				t.Fatal(err)
			}
		}
		refs[op] = ref
		sf := filepath.Join(dir, op+".secret")
		if err := os.WriteFile(sf, []byte(secret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		entries += fmt.Sprintf("  - id: %s\n    wallet: {url: %q, secret_files: [%q]}\n", op, ref.BaseURL(), sf)
	}
	ops := filepath.Join(dir, "operators.yaml")
	toks := filepath.Join(dir, "tokens.yaml")
	if err := os.WriteFile(ops, []byte("operators:\n"+entries), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(toks, []byte(tenancyTokens), 0o600); err != nil {
		t.Fatal(err)
	}
	st := startStackWith(t, stack.Config{TokensFile: toks, OperatorsFile: ops, Wallet: stack.WalletSeamless, Limits: gateway.LimitConfig{Rate: -1}})
	c := dial(t, st.GatewayAddr)
	tok := func(who string) context.Context { return withToken(t, who+"-token") }

	tables := map[string]string{}
	for op, seat := range map[string][]string{"casino-a": {"a-croupier", "ann", "abe"}, "casino-b": {"b-croupier", "bea", "ben"}} {
		resp, err := c.table.CreateTable(tok(seat[0]), &tablev1.CreateTableRequest{RequestId: "wallets-" + op})
		if err != nil {
			t.Fatalf("%s opens a table: %v", op, err)
		}
		id := resp.GetTable().GetTableId()
		tables[op] = id
		for _, p := range seat[1:] {
			if _, err := c.table.JoinTable(tok(p), &tablev1.JoinTableRequest{RequestId: "join-" + p, TableId: id, PlayerId: p}); err != nil {
				t.Fatalf("%s joins %s's table: %v", p, op, err)
			}
		}
		got, err := c.table.GetTable(tok(seat[0]), &tablev1.GetTableRequest{TableId: id})
		if err != nil {
			t.Fatal(err)
		}
		p := got.GetTable().GetOfferedPlayerId()
		if _, err := c.table.AcceptBank(tok(p), &tablev1.AcceptBankRequest{RequestId: "bank-" + p, TableId: id, PlayerId: p, Amount: 500}); err != nil {
			t.Fatalf("%s banks at %s's table: %v", p, op, err)
		}
		// The debit was answered before the bank stood: its wallet holds
		// 500 less for him.
		bs, err := refs[op].Balances()
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			if b.PlayerID == p && b.Balance != 4500 {
				t.Errorf("%s's wallet: %s has %d, want 4500", op, p, b.Balance)
			}
		}
	}
	for op, ref := range refs {
		recs, err := ref.Transactions()
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			t.Errorf("%s's wallet was never called", op)
		}
		for _, r := range recs {
			if r.Request.TableID != tables[op] {
				t.Errorf("%s's wallet got %s %s of table %q, want %s's only", op, r.Kind, r.Request.TransactionID, r.Request.TableID, tables[op])
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
