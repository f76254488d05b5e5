// Command opwallet runs the reference operator wallet: the operator side
// of chemmy's seamless wallet mode (docs/operator-wallet.md), with its
// books in a bbolt file, admin endpoints and fault injection. Point
// chemmy's HTTP adapter at the base URL it prints.
//
//	opwallet [flags]
//
//	-listen ADDR        listen address (default "127.0.0.1:7090")
//	-data FILE          bbolt file of the books (default ".chemmy/opwallet.db")
//	-secret-file FILE   the HMAC secret shared with chemmy (else env CHEMMY_OPERATOR_SECRET; required)
//	-new-secret-file F  during a secret rotation, the secret being rotated in: calls signed with either
//	                    secret are accepted, each answered signed with its own (docs/operator-wallet.md)
//	-admin-token-file F the bearer token of /admin/ (else env CHEMMY_OPERATOR_ADMIN_TOKEN; none: /admin/ off)
//	-currency CODE      the wallet's currency (default "EUR")
//	-fund LIST          players created at start if unknown, "alice=100000,bob=50000" (minor units)
//	-fault-timeout R, -fault-error R, -fault-duplicate R, -fault-late R
//	                    fault rates per call, 0..1, summing to at most 1 (default 0)
//	-hang D             how long a timeout or late call waits for the client to give up at most (default 10s)
//	-late-delay D       how long a late call waits after that before applying (default 1s)
//	-seed N             seed of the fault draws, for a reproducible run (default 0: random)
//	-log-level L        debug, info, warn or error (default "info")
//
// It stops cleanly on Ctrl-C (SIGINT) or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/chemmy/chemmy/services/kit/app"
	"github.com/chemmy/chemmy/services/kit/opwallet/refwallet"
)

func main() {
	app.TuneGC()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "opwallet:", err)
		os.Exit(2)
	}
}

// options are the parsed flags.
type options struct {
	cfg  refwallet.Config
	fund map[string]int64
}

// parse reads the flags and the environment (getenv) into options.
func parse(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("opwallet", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: opwallet [flags]  (the reference operator wallet; docs/operator-wallet.md)")
		fs.PrintDefaults()
	}
	listen := fs.String("listen", "127.0.0.1:7090", "listen address")
	data := fs.String("data", ".chemmy/opwallet.db", "bbolt file of the books")
	secretFile := fs.String("secret-file", "", "file holding the HMAC secret shared with chemmy (else env CHEMMY_OPERATOR_SECRET)")
	newSecretFile := fs.String("new-secret-file", "", "during a secret rotation: file holding the secret being rotated in; calls signed with either secret are accepted, each answered signed with the secret that signed it")
	adminFile := fs.String("admin-token-file", "", "file holding the bearer token of /admin/ (else env CHEMMY_OPERATOR_ADMIN_TOKEN; none: /admin/ off)")
	currency := fs.String("currency", "EUR", "ISO 4217 code of the wallet's currency")
	fund := fs.String("fund", "", `players created at start if unknown, "alice=100000,bob=50000" (minor units)`)
	var f refwallet.Faults
	fs.Float64Var(&f.Timeout, "fault-timeout", 0, "rate of calls that hang until the client gives up (applied or not)")
	fs.Float64Var(&f.Error, "fault-error", 0, "rate of calls answered 500 (before or after applying)")
	fs.Float64Var(&f.Duplicate, "fault-duplicate", 0, "rate of first-time transactions answered as duplicates")
	fs.Float64Var(&f.Late, "fault-late", 0, "rate of calls applied after the client gave up")
	hang := fs.Duration("hang", 10*time.Second, "longest wait of a timeout or late call for the client to give up")
	late := fs.Duration("late-delay", time.Second, "wait of a late call after the client gave up, before applying")
	seed := fs.Uint64("seed", 0, "seed of the fault draws (0: random)")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	secret, err := fromFileOrEnv(*secretFile, "CHEMMY_OPERATOR_SECRET", getenv)
	if err != nil {
		return options{}, err
	}
	if secret == "" {
		return options{}, errors.New("no secret: give -secret-file or CHEMMY_OPERATOR_SECRET")
	}
	var newSecret []byte
	if *newSecretFile != "" {
		ns, err := fromFileOrEnv(*newSecretFile, "", getenv)
		if err != nil {
			return options{}, err
		}
		if ns == "" || ns == secret {
			return options{}, errors.New("-new-secret-file: empty, or the same secret as -secret-file")
		}
		newSecret = []byte(ns)
	}
	token, err := fromFileOrEnv(*adminFile, "CHEMMY_OPERATOR_ADMIN_TOKEN", getenv)
	if err != nil {
		return options{}, err
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(*level)); err != nil {
		return options{}, fmt.Errorf("-log-level: %w", err)
	}
	if *hang <= 0 || *late <= 0 {
		return options{}, errors.New("-hang and -late-delay must be > 0")
	}
	f.HangMS, f.LateMS = hang.Milliseconds(), late.Milliseconds()
	if err := f.Validate(); err != nil {
		return options{}, err
	}
	players, err := parseFund(*fund)
	if err != nil {
		return options{}, err
	}
	return options{
		cfg: refwallet.Config{
			Addr: *listen, DataFile: *data, Secret: []byte(secret), NewSecret: newSecret, AdminToken: token,
			Currency: *currency, Faults: f, Seed: *seed,
			Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lv})),
		},
		fund: players,
	}, nil
}

// fromFileOrEnv reads a secret from file (trailing white space trimmed),
// or from the environment variable env when file is "".
func fromFileOrEnv(file, env string, getenv func(string) string) (string, error) {
	if file == "" {
		return strings.TrimSpace(getenv(env)), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// parseFund reads "alice=100000,bob=50000".
func parseFund(s string) (map[string]int64, error) {
	out := map[string]int64{}
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		name, amount, found := strings.Cut(item, "=")
		n, err := strconv.ParseInt(amount, 10, 64)
		if !found || name == "" || err != nil || n < 0 {
			return nil, fmt.Errorf("-fund: %q is not player=amount (minor units, >= 0)", item)
		}
		out[name] = n
	}
	return out, nil
}

func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	o, err := parse(args, getenv, stderr)
	if err != nil {
		return err
	}
	s, err := refwallet.Start(ctx, o.cfg)
	if err != nil {
		return err
	}
	known := map[string]bool{}
	bals, err := s.Balances()
	if err != nil {
		s.Stop()
		return err
	}
	for _, b := range bals {
		known[b.PlayerID] = true
	}
	for p, n := range o.fund {
		if !known[p] {
			if err := s.SetBalance(p, n); err != nil {
				s.Stop()
				return err
			}
		}
	}
	fmt.Fprintf(stderr, "opwallet: base URL %s (admin %s)\n", s.BaseURL(), map[bool]string{true: "on", false: "off"}[o.cfg.AdminToken != ""])
	<-ctx.Done()
	return s.Stop()
}
