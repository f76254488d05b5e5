package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"time"

	"github.com/chemmy/chemmy/wallet-svc/walletsvc"
)

// walletUsage is `chemmy wallet`'s help.
const walletUsage = `usage: chemmy wallet mode -data-dir DIR
       chemmy wallet migrate -data-dir DIR -to seamless|transfer [-by WHO]

Offline commands on wallet-svc's ledger file DIR/wallet.db (the data dir of
chemmy run, or of wallet-svc -data-dir), the services stopped.

A ledger file belongs to the wallet mode it was first started in: transfer
(the players' money in wallet-svc's own ledger, Deposit and Withdraw) or
seamless (the players' money in the operator's wallet). A start in the other
mode is refused, naming both; changing it is this explicit step.

mode      prints the file's wallet mode and its mode log (when, from, to, how,
          by whom).

migrate   changes the recorded mode, logs who (-by) and when, and moves no
          money: it changes nothing else. It is refused, naming what stands
          in the way, unless the file holds nothing of the mode it leaves:

          -to seamless: every player account (every currency) at 0. The
            players' money in the ledger must first go back to your
            platform: PassBank or CloseTable for a bank still up, then
            WalletService/Withdraw of each player account, and credit it
            to the players in your wallet. The house's accounts (float,
            commission) stay as they are.
          -to transfer: nothing still owed to or pending with the operator's
            wallet: no credit, rollback or round end left to send, no debit
            in flight, no round open (a coup in play, a bank up). Start it in
            seamless mode until GetOperatorReport shows nothing pending and
            the banks have come back, then stop it. The player accounts are
            then at 0: fund them with Deposit.

          It is reversible: migrate back under the same conditions. A file
          already in that mode is left as it is (exit 0). Exit 1 when
          refused, 2 on bad flags. docs/guide-integration.md, "Changing the wallet mode".
`

// runWallet is `chemmy wallet`.
func runWallet(args []string) int {
	return walletMain(args, os.Stdout, os.Stderr, time.Now)
}

func walletMain(args []string, stdout, stderr io.Writer, now func() time.Time) int {
	if len(args) == 0 || (args[0] != "mode" && args[0] != "migrate") {
		fmt.Fprint(stderr, walletUsage)
		return 2
	}
	fs := flag.NewFlagSet("chemmy wallet "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, walletUsage, "\nflags:\n"); fs.PrintDefaults() }
	dataDir := fs.String("data-dir", ".chemmy", "the data dir holding wallet.db (chemmy run -data-dir, wallet-svc -data-dir)")
	var to, by *string
	if args[0] == "migrate" {
		to = fs.String("to", "", "the wallet mode to move to: seamless or transfer (required)")
		by = fs.String("by", defaultBy(), "who migrates, for the mode log")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "chemmy wallet %s: unexpected arguments %q\n", args[0], fs.Args())
		return 2
	}
	path := filepath.Join(*dataDir, "wallet.db")
	if args[0] == "mode" {
		info, err := walletsvc.ReadMode(path)
		if err != nil {
			fmt.Fprintln(stderr, "chemmy wallet mode:", err)
			return 1
		}
		printMode(stdout, path, info)
		return 0
	}
	if *to != walletsvc.ModeSeamless && *to != walletsvc.ModeTransfer {
		fmt.Fprintf(stderr, "chemmy wallet migrate: -to %q: want seamless or transfer\n", *to)
		return 2
	}
	if *by == "" {
		fmt.Fprintln(stderr, "chemmy wallet migrate: -by is empty")
		return 2
	}
	from, changed, err := walletsvc.MigrateMode(path, *to, *by, now().UTC())
	var refused *walletsvc.MigrateRefusal
	switch {
	case errors.As(err, &refused):
		fmt.Fprintln(stderr, "chemmy wallet migrate: refused:", err)
		return 1
	case err != nil:
		fmt.Fprintln(stderr, "chemmy wallet migrate:", err)
		return 1
	case !changed:
		fmt.Fprintf(stdout, "%s is already in %s mode: nothing changed\n", path, *to)
		return 0
	}
	fmt.Fprintf(stdout, "%s: wallet mode %s -> %s (no money moved; logged, by %s)\n", path, from, *to, *by)
	fmt.Fprintf(stdout, "start it with: chemmy run -data-dir %s -wallet %s   (wallet-svc -data-dir %s -wallet-mode %s)\n",
		*dataDir, *to, *dataDir, *to)
	return 0
}

// printMode prints a ledger file's mode and its log.
func printMode(w io.Writer, path string, info walletsvc.ModeInfo) {
	switch {
	case info.Mode == "":
		fmt.Fprintf(w, "%s: never used; its first start records the mode it is started in\n", path)
	case info.Inferred:
		fmt.Fprintf(w, "%s: %s mode (inferred: a file of an older version; its next start records it)\n", path, info.Mode)
	default:
		fmt.Fprintf(w, "%s: %s mode\n", path, info.Mode)
	}
	for _, c := range info.Log {
		from := c.From
		if from == "" {
			from = "-"
		}
		fmt.Fprintf(w, "  %s  %s -> %s  %s", c.Time.UTC().Format(time.RFC3339), from, c.To, c.How)
		if c.By != "" {
			fmt.Fprintf(w, " by %s", c.By)
		}
		if c.Note != "" {
			fmt.Fprintf(w, " (%s)", c.Note)
		}
		fmt.Fprintln(w)
	}
}

// defaultBy is user@host, as far as they are known.
func defaultBy() string {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if name == "" {
		name = "unknown"
	}
	if host, err := os.Hostname(); err == nil && host != "" {
		return name + "@" + host
	}
	return name
}
