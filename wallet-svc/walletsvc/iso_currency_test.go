package walletsvc

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/currency"
	"github.com/chemmy/chemmy/services/kit/trust"
)

// TestCurrencyExponents: the wallet accepts ISO 4217's codes with ISO's
// minor unit and the configured ones with theirs; any other code is
// refused (CURRENCY_UNKNOWN) for an account, a hold and GetCurrency; the
// exponent comes with every account, transfer and transfer event. The
// expected exponents are ISO 4217's list, written out by hand.
func TestCurrencyExponents(t *testing.T) {
	e := &env{t: t, path: filepath.Join(t.TempDir(), "wallet.db")}
	e.config = func(c *Config) {
		set, err := currency.ParseSet("CHIPS:0,GOLD:4")
		if err != nil {
			t.Fatal(err)
		}
		c.Currencies = set
	}
	e.start()
	t.Cleanup(e.stop)
	for _, c := range []struct {
		code, want string // want: the code answered ("" for the default)
		exp        int32
		iso, def   bool
	}{
		{"", "EUR", 2, true, true}, {"EUR", "EUR", 2, true, true}, {"JPY", "JPY", 0, true, false},
		{"KWD", "KWD", 3, true, false}, {"IQD", "IQD", 3, true, false}, {"CLF", "CLF", 4, true, false},
		{"CHIPS", "CHIPS", 0, false, false}, {"GOLD", "GOLD", 4, false, false},
	} {
		r, err := e.c.GetCurrency(as(operator), &walletv1.GetCurrencyRequest{CurrencyCode: c.code})
		if err != nil {
			t.Fatalf("GetCurrency(%q): %v", c.code, err)
		}
		cur := r.GetCurrency()
		if cur.GetCurrencyCode() != c.want || cur.Exponent == nil || cur.GetExponent() != c.exp || cur.GetIso() != c.iso || cur.GetWalletDefault() != c.def {
			t.Errorf("GetCurrency(%q) = %v, want %s %d iso %v default %v", c.code, cur, c.want, c.exp, c.iso, c.def)
		}
	}
	for _, code := range []string{"ABC", "TOKENS", "XAU", "eur", "978", strings.Repeat("Z", 40)} {
		_, err := e.c.GetCurrency(as(operator), &walletv1.GetCurrencyRequest{CurrencyCode: code})
		wantErr(t, err, codes.InvalidArgument, "CURRENCY_UNKNOWN")
	}

	// Accounts and transfers carry the exponent; JPY's is 0 and set.
	for acct, exp := range map[string]int32{"player:a": 2, "player:a@JPY": 0, "player:a@KWD": 3, "player:a@CHIPS": 0} {
		r := e.deposit(acct, 1000)
		if r.GetAccount().CurrencyExponent == nil || r.GetAccount().GetCurrencyExponent() != exp {
			t.Errorf("Deposit(%s): account exponent %v, want %d", acct, r.GetAccount().CurrencyExponent, exp)
		}
		if r.GetTransfer().CurrencyExponent == nil || r.GetTransfer().GetCurrencyExponent() != exp {
			t.Errorf("Deposit(%s): transfer exponent %v, want %d", acct, r.GetTransfer().CurrencyExponent, exp)
		}
		if a := e.account(acct); a.CurrencyExponent == nil || a.GetCurrencyExponent() != exp {
			t.Errorf("GetAccount(%s): exponent %v, want %d", acct, a.CurrencyExponent, exp)
		}
	}
	// An unknown code, well formed, is CURRENCY_UNKNOWN everywhere; a
	// malformed one stays INVALID_ACCOUNT.
	_, err := e.c.Deposit(as(operator), &walletv1.DepositRequest{RequestId: "abc", AccountId: "player:a@ABC", Amount: 1})
	wantErr(t, err, codes.InvalidArgument, "CURRENCY_UNKNOWN")
	_, err = e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: "abc-hold", AccountId: "player:a@TOKENS", Amount: 1, Reference: "test"})
	wantErr(t, err, codes.InvalidArgument, "CURRENCY_UNKNOWN")
	_, err = e.c.GetAccount(as(auditor), &walletv1.GetAccountRequest{AccountId: "house:commission@XAU"})
	wantErr(t, err, codes.InvalidArgument, "CURRENCY_UNKNOWN")
	_, err = e.c.Deposit(as(operator), &walletv1.DepositRequest{RequestId: "low", AccountId: "player:a@usd", Amount: 1})
	wantErr(t, err, codes.InvalidArgument, "INVALID_ACCOUNT")

	// The ledger's events carry it too.
	seen := map[string]bool{}
	wantExp := map[string]int{"EUR": 2, "JPY": 0, "KWD": 3, "CHIPS": 0}
	for _, o := range e.outboxEvents() {
		x := o.ev
		tr := x.GetTransferRecorded()
		want := wantExp[tr.GetCurrencyCode()]
		if tr.CurrencyExponent == nil || int(tr.GetCurrencyExponent()) != want {
			t.Errorf("event of transfer %s in %s: exponent %v, want %d", tr.GetTransferId(), tr.GetCurrencyCode(), tr.CurrencyExponent, want)
		}
		seen[tr.GetCurrencyCode()] = true
	}
	if len(seen) != 4 {
		t.Errorf("transfer events in %v, want EUR, JPY, KWD and CHIPS", seen)
	}
	e.audit()
}

// TestUnknownDefaultCurrencyRefused: a wallet does not start in a
// default currency that is neither ISO 4217's nor configured, and says
// how to configure it.
func TestUnknownDefaultCurrencyRefused(t *testing.T) {
	c := Config{ListenAddr: "127.0.0.1:0", DBPath: filepath.Join(t.TempDir(), "wallet.db"), Trust: trust.Config{Insecure: true},
		Logger: slog.New(slog.DiscardHandler), Currency: "CHIPS"}
	if svc, err := Start(context.Background(), c); err == nil {
		svc.Stop()
		_ = svc.Wait()
		t.Fatal("started in an unconfigured currency")
	} else if !strings.Contains(err.Error(), "-currencies CHIPS:") {
		t.Errorf("error %q does not say how to configure it", err)
	}
	set, _ := currency.ParseSet("CHIPS:0")
	c.Currencies = set
	svc, err := Start(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	svc.Stop()
	if err := svc.Wait(); err != nil {
		t.Fatal(err)
	}
}
