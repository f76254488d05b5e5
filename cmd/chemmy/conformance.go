package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/chemmy/chemmy/services/kit/opwallet"
	"github.com/chemmy/chemmy/services/kit/opwallet/conformance"
)

// conformanceUsage is `chemmy wallet-conformance`'s help, before the
// flags and the list of checks.
const conformanceUsage = `usage: chemmy wallet-conformance -url URL -secret-file FILE -player ID [flags]

Runs, against an operator's wallet (seamless wallet mode,
docs/operator-wallet.md), every call chemmy makes and every failure chemmy
handles, and judges each answer as chemmy's own client would: one line per
check (PASS, FAIL with what was wrong, or SKIP), then a summary line. Exit
0 when no check failed, 1 when one did, 2 on bad flags.

What it needs on the operator's side:
  - the wallet's base URL (-url, as given to wallet-svc -operator-url) and the
    HMAC secret shared with chemmy (-secret-file, else CHEMMY_OPERATOR_SECRET);
  - a test player (-player) whose account is in -currency, with a balance of
    at least 2 x -amount (default 200 minor units), that nothing else uses
    while the kit runs, with no limit refusing its debits first
    (LIMIT_REACHED: insufficient-funds debits the balance + 1). The kit reads its balance with balance calls, moves
    -amount at a time in rounds of its own (ids "cc-<run id>-..."), and gives
    everything back: the balance ends as it started. When the wallet moves
    money it should not have, the kit moves it back (a credit "refund" or a
    debit "fee" in a round "cc-<run id>-restore-N") and prints a note;
  - a player id the wallet does not know (-unknown-player; a fresh one by
    default) and a currency the test player is not in (-other-currency);
  - during a secret rotation, the secret being rotated in (-new-secret-file):
    the check secret-rotation is skipped without it;
  - game-launch sessions of the test player: one your wallet holds as ended
    (-expired-session; the check session-expired is skipped without it) and,
    if your wallet checks session_id, one it holds as live (-session; by
    default a session it never saw, which a wallet that ignores sessions
    accepts).

The calls are real transactions: run it against a test or staging wallet, or
with a test player your reports can tell apart.
`

// runWalletConformance is `chemmy wallet-conformance`.
func runWalletConformance(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return walletConformanceMain(ctx, args, os.Stdout, os.Stderr, os.Getenv)
}

func walletConformanceMain(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("chemmy wallet-conformance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, conformanceUsage, "\nflags:\n")
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "\nchecks, in the order they run:")
		for _, c := range conformance.Checks {
			fmt.Fprintf(stderr, "  %-26s %s\n", c.Name, c.Doc)
		}
	}
	base := fs.String("url", "", "the operator wallet's base URL, as given to wallet-svc -operator-url (required)")
	secretFile := fs.String("secret-file", "", "file holding the HMAC secret shared with chemmy (else env CHEMMY_OPERATOR_SECRET)")
	newSecretFile := fs.String("new-secret-file", "", "during a secret rotation: file holding the secret being rotated in (give both during a rotation; without it the check secret-rotation is skipped)")
	player := fs.String("player", "", "the test player: an account in -currency with at least 2 x -amount, used by nothing else during the run (required)")
	currency := fs.String("currency", "EUR", "the test player's currency (ISO 4217)")
	other := fs.String("other-currency", "", "a currency the test player is not in (default USD, or EUR when -currency is USD)")
	unknown := fs.String("unknown-player", "", `a player id the wallet does not know (default "cc-<run id>-nobody")`)
	amount := fs.Int64("amount", conformance.DefaultAmount, "the amount of each debit and credit, minor units")
	table := fs.String("table", conformance.DefaultTableID, "the table id of the transactions")
	timeout := fs.Duration("timeout", opwallet.DefaultTimeout, "the timeout of each call (chemmy's default: a slower answer is an unknown outcome to chemmy)")
	allowHTTP := fs.Bool("allow-http", false, "allow a plain http -url on a non-loopback host (a private network only)")
	caFile := fs.String("ca-file", "", "PEM file of the CA(s) signing the wallet's https certificate (default: the system roots)")
	session := fs.String("session", "", `a game-launch session (session_id) of the test player your wallet holds as live (default "cc-<run id>-session", one it never saw)`)
	expired := fs.String("expired-session", "", "a game-launch session of the test player your wallet holds as ended (without it the check session-expired is skipped)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "chemmy wallet-conformance: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() > 0 {
		return bad("unexpected arguments %q", fs.Args())
	}
	if *base == "" || *player == "" {
		return bad("-url and -player are required (chemmy wallet-conformance -h)")
	}
	secret, err := opwallet.ReadSecret(*secretFile, getenv)
	if err != nil {
		return bad("%v", err)
	}
	cfg := conformance.Config{BaseURL: *base, AllowInsecureHTTP: *allowHTTP, Secret: secret, Player: *player,
		Currency: *currency, OtherCurrency: *other, UnknownPlayer: *unknown, Amount: *amount, TableID: *table, Timeout: *timeout,
		Session: *session, ExpiredSession: *expired}
	if *amount <= 0 || *timeout <= 0 {
		return bad("-amount and -timeout must be > 0")
	}
	if *newSecretFile != "" {
		if cfg.NewSecret, err = opwallet.ReadSecret(*newSecretFile, func(string) string { return "" }); err != nil {
			return bad("-new-secret-file: %v", err)
		}
	}
	if *caFile != "" {
		if !strings.HasPrefix(strings.ToLower(*base), "https://") {
			return bad("-ca-file needs an https -url")
		}
		pem, err := os.ReadFile(*caFile)
		if err != nil {
			return bad("-ca-file: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return bad("-ca-file %s: no PEM certificate in it", *caFile)
		}
		cfg.TLSConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	fmt.Fprintf(stdout, "chemmy wallet-conformance: %s, test player %s (%s), amount %d\n", *base, *player, *currency, *amount)
	rep, err := conformance.Run(ctx, cfg, func(line string) { fmt.Fprintln(stdout, line) })
	if err != nil {
		return bad("%v", err)
	}
	if rep.StartBalance >= 0 && rep.EndBalance >= 0 {
		fmt.Fprintf(stdout, "the test player's balance: %d at the start, %d at the end\n", rep.StartBalance, rep.EndBalance)
	}
	verdict := "conformant"
	if !rep.OK() {
		verdict = "NOT conformant"
	}
	fmt.Fprintf(stdout, "wallet-conformance summary: %d checks, %d passed, %d failed, %d skipped: %s\n",
		len(rep.Results), rep.Passed, rep.Failed, rep.Skips, verdict)
	if !rep.OK() {
		return 1
	}
	return 0
}
