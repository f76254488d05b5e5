// Command wallet-svc runs chemmy's wallet service: accounts, a double-entry
// ledger, holds and coup settlement (package walletsvc).
//
// Flags:
//
//	-listen        gRPC address (default "127.0.0.1:7002")
//	-data-dir      directory of the ledger file wallet.db (default "./data")
//	-nats-url      NATS JetStream URL (default none)
//	-metrics-addr  Prometheus /metrics address (default none)
//	-currency      the wallet's default currency code (default "EUR"): an active
//	               ISO 4217 code or one of -currencies
//	-currencies    the codes accepted besides ISO 4217's, with their exponent (minor
//	               unit), e.g. "CHIPS:0,GOLD:2" (default none); any other code is
//	               refused (CURRENCY_UNKNOWN)
//	-request-retention  how long a request_id's answer is kept (default 168h, 7 days;
//	               negative: for ever), and in seamless mode an ended round's
//	               record; coup settlements are kept for ever
//	-stream-max-age, -stream-max-bytes, -stream-replicas  limits of the CHEMMY
//	               event stream when this service creates it (default 168h, 1 GiB,
//	               1; at least 1h, 4 MiB, 1..5; negative age or bytes: none); an existing
//	               stream is never changed
//	-session-gap   a pause in a player's play longer than this ends his session
//	               (session loss and time limits; default 30m)
//	-limits-cooling-off  how long a looser player limit waits (default 24h)
//	-limits-override  let an operator lift a player limit at once, without the
//	               cooling-off (SetPlayerLimits override, with a reason, recorded):
//	               only where the regulator allows it (default off)
//	-wallet-mode   transfer (default: wallet-svc holds the players' money,
//	               Deposit/Withdraw) or seamless (the operator's wallet holds it:
//	               debit before a stake, credit after; walletsvc doc.go). The
//	               ledger file keeps the mode of its first start; a start in the
//	               other is refused (exit 1), naming both: `chemmy wallet migrate
//	               -data-dir DIR -to MODE` changes it offline (docs/guide-integration.md,
//	               "Changing the wallet mode")
//	-operator-url  seamless: the operator wallet's base URL (POST <url>/debit, ...;
//	               https unless loopback; docs/operator-wallet.md)
//	-operator-secret-file  seamless: file holding the HMAC secret shared with the
//	               operator (else env CHEMMY_OPERATOR_SECRET; required). A probe
//	               (balance of "chemmy-probe", at start and every 30 s) checks the
//	               URL and the secret: metric chemmy_operator_up{operator}, an ERROR log
//	-operator-timeout  seamless: timeout of one call to the operator (default 3s)
//	-operator-allow-http  seamless: allow a plain http -operator-url on a
//	               non-loopback host, for an operator on a private network only
//	               (the signature authenticates, it does not hide amounts nor
//	               player ids); logs a warning at start
//	-operator-ca-file  seamless: PEM bundle of the CA(s) that sign the operator's
//	               https certificate (a private CA; default: the system roots)
//	-operator-id   the default operator's id (default "operator"; the gateway's
//	               -default-operator): his wallet in seamless mode is -operator-url's
//	               unless the operators file gives his entry a wallet
//	-operators     the operators file (docs/operators.md; CHEMMY_WALLET_OPERATORS):
//	               each operator's currencies (an account in another is refused
//	               CURRENCY_UNKNOWN) and, in seamless mode, his own wallet (url,
//	               secret_files: the current secret signs, answers signed with it or
//	               the previous one are trusted; ca_file); an operator without one
//	               (but the default operator with -operator-url) is refused
//	               SEAMLESS_WALLET. With it, -operator-url may be left out when the
//	               file gives the default operator a wallet
//	-reload-interval  how often the operators file and its secret files are read
//	               again (default 10s; CHEMMY_WALLET_RELOAD_SECONDS): a rotated
//	               secret or an added operator is taken without restart, a bad file
//	               keeps the last good one (an ERROR log,
//	               chemmy_wallet_reload_errors_total{what="operators"})
//	-log-level     debug, info, warn or error (default "info")
//	-nats-nkey     nkey seed file for NATS (CHEMMY_NATS_NKEY)
//	-tls-cert, -tls-key, -tls-ca  mutual TLS (CHEMMY_TLS_CERT, CHEMMY_TLS_KEY, CHEMMY_TLS_CA)
//	-insecure      development only: plaintext, identity from metadata (CHEMMY_INSECURE)
//
// It logs JSON to stderr and stops gracefully on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/chemmy/chemmy/services/kit/app"
	currencyset "github.com/chemmy/chemmy/services/kit/currency"
	"github.com/chemmy/chemmy/services/kit/grpcx"
	"github.com/chemmy/chemmy/services/kit/opwallet"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/services/kit/store"
	"github.com/chemmy/chemmy/services/kit/trust"
	"github.com/chemmy/chemmy/wallet-svc/walletsvc"
)

func main() {
	app.TuneGC()
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "wallet-svc:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("wallet-svc", flag.ContinueOnError)
	listen := fs.String("listen", walletsvc.DefaultListenAddr, "gRPC listen address")
	dataDir := fs.String("data-dir", "./data", "directory of the ledger file wallet.db")
	natsURL := fs.String("nats-url", "", "NATS JetStream URL (empty: no NATS)")
	metricsAddr := fs.String("metrics-addr", "", "Prometheus /metrics address (empty: none)")
	currency := fs.String("currency", walletsvc.DefaultCurrency, "the wallet's default currency: an active ISO 4217 code or one of -currencies")
	currencies := fs.String("currencies", "", `codes accepted besides ISO 4217's, with their exponent (minor unit): "CHIPS:0,GOLD:2"`)
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	nkey := fs.String("nats-nkey", os.Getenv("CHEMMY_NATS_NKEY"), "file holding the NATS nkey seed of this service")
	sessionGap := fs.Duration("session-gap", walletsvc.DefaultSessionGap, "a pause in a player's play longer than this ends his session (session loss and time limits)")
	limitsOverride := fs.Bool("limits-override", false, "let an operator lift a player limit at once, without the cooling-off (only where the regulator allows it)")
	coolingOff := fs.Duration("limits-cooling-off", walletsvc.DefaultLimitsCoolingOff, "how long a looser responsible-gaming limit waits before it takes effect")
	retention := fs.Duration("request-retention", store.DefaultRetention, "how long the answer to a request_id is kept (clients must not retry older requests); negative: for ever")
	opFlags := registerOperatorFlags(fs)
	opID := fs.String("operator-id", walletsvc.DefaultOperatorID, "the default operator's id (the gateway's -default-operator); in seamless mode -operator-url is his wallet")
	opsFile := fs.String("operators", os.Getenv("CHEMMY_WALLET_OPERATORS"), "operators file: each operator's currencies and, in seamless mode, wallet (CHEMMY_WALLET_OPERATORS)")
	reload := fs.Duration("reload-interval", envSeconds("CHEMMY_WALLET_RELOAD_SECONDS", walletsvc.DefaultOperatorsReloadInterval), "how often the operators file and its secret files are read again (CHEMMY_WALLET_RELOAD_SECONDS)")
	stream := outbox.RegisterStreamFlags(fs)
	tc := trust.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	known, err := currencyset.ParseSet(*currencies)
	if err != nil {
		return fmt.Errorf("-currencies: %w", err)
	}
	seamlessFromFile := opFlags.mode == "seamless" && opFlags.url == "" && *opsFile != ""
	var operator opwallet.Operator
	if !seamlessFromFile {
		if operator, err = operatorOf(*opFlags, os.Getenv, log); err != nil {
			return err
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Tracing, when the OTEL_* environment asks for it (grpcx.SetupTracing);
	// spans still batched go out before the exit.
	if _, err := grpcx.SetupTracing(ctx, trust.Wallet); err != nil {
		fmt.Fprintln(os.Stderr, "tracing:", err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = grpcx.ShutdownTracing(sctx)
	}()
	err = walletsvc.Run(ctx, walletsvc.Config{
		ListenAddr:       *listen,
		DBPath:           filepath.Join(*dataDir, "wallet.db"),
		NATSURL:          *natsURL,
		MetricsAddr:      *metricsAddr,
		Currency:         *currency,
		Currencies:       known,
		NATSNkeyFile:     *nkey,
		Trust:            *tc,
		Logger:           log,
		RequestRetention: *retention,
		SessionGap:       *sessionGap,
		LimitsCoolingOff: *coolingOff,
		LimitsOverride:   *limitsOverride,
		Stream:           *stream,
		Operator:         operator,
		OperatorID:       *opID,
		OperatorsFile:    *opsFile,
		// The default operator's wallet is the file's (Start refuses a
		// file that gives him none).
		Seamless:                seamlessFromFile,
		OperatorsReloadInterval: *reload,
		OperatorTimeout:         opFlags.timeout,
		OperatorAllowHTTP:       opFlags.allowHTTP,
	})
	if err != nil {
		log.Error("wallet-svc stopped", "err", err)
		return err
	}
	log.Info("wallet-svc stopped")
	return nil
}

// envSeconds is the duration of env variable name in seconds (a
// decimal), else def.
func envSeconds(name string, def time.Duration) time.Duration {
	if v, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil {
		return time.Duration(v * float64(time.Second))
	}
	return def
}

// operatorFlags are the flags choosing the wallet mode and the
// operator's wallet.
type operatorFlags struct {
	mode, url, secretFile, caFile string
	timeout                       time.Duration
	allowHTTP                     bool
}

// registerOperatorFlags defines the wallet mode and operator flags on fs.
func registerOperatorFlags(fs *flag.FlagSet) *operatorFlags {
	f := &operatorFlags{}
	fs.StringVar(&f.mode, "wallet-mode", "transfer", "transfer (wallet-svc holds the players' money) or seamless (the operator's wallet does); the ledger keeps the mode of its first start, another is refused (chemmy wallet migrate changes it)")
	fs.StringVar(&f.url, "operator-url", "", "seamless: base URL of the operator's wallet")
	fs.StringVar(&f.secretFile, "operator-secret-file", "", "seamless: file holding the HMAC secret shared with the operator (else env CHEMMY_OPERATOR_SECRET)")
	fs.DurationVar(&f.timeout, "operator-timeout", opwallet.DefaultTimeout, "seamless: timeout of one call to the operator's wallet")
	fs.BoolVar(&f.allowHTTP, "operator-allow-http", false, "seamless: allow a plain http -operator-url on a non-loopback host (a private network only: amounts and player ids travel in clear)")
	fs.StringVar(&f.caFile, "operator-ca-file", "", "seamless: PEM file of the CA(s) signing the operator's https certificate (default: the system roots)")
	return f
}

// operatorOf is the operator's wallet of f.mode: nil in transfer mode; in
// seamless mode the HTTP adapter at f.url, signing with the secret read
// from f.secretFile (else env CHEMMY_OPERATOR_SECRET; surrounding white
// space trimmed), trusting the CAs of f.caFile (else the system roots),
// plain http on a non-loopback host only with f.allowHTTP (logged as a
// warning on log).
func operatorOf(f operatorFlags, getenv func(string) string, log *slog.Logger) (opwallet.Operator, error) {
	switch f.mode {
	case "transfer":
		if f.url != "" || f.caFile != "" || f.allowHTTP {
			return nil, errors.New("-operator-url, -operator-ca-file and -operator-allow-http need -wallet-mode seamless")
		}
		return nil, nil
	case "seamless":
	default:
		return nil, fmt.Errorf("-wallet-mode %q: want transfer or seamless", f.mode)
	}
	if f.url == "" {
		return nil, errors.New("-wallet-mode seamless needs -operator-url")
	}
	secret, err := opwallet.ReadSecret(f.secretFile, getenv)
	if err != nil {
		return nil, fmt.Errorf("-wallet-mode seamless needs the operator's secret (-operator-secret-file or %s): %w", opwallet.SecretEnv, err)
	}
	cfg := opwallet.HTTPConfig{BaseURL: f.url, Secret: secret, Timeout: f.timeout, AllowInsecureHTTP: f.allowHTTP}
	if f.caFile != "" {
		if !strings.HasPrefix(strings.ToLower(f.url), "https://") {
			return nil, errors.New("-operator-ca-file needs an https -operator-url")
		}
		tc, err := walletsvc.OperatorTLS(f.caFile)
		if err != nil {
			return nil, fmt.Errorf("-operator-ca-file: %w", err)
		}
		cfg.TLSConfig = tc
	}
	op, err := opwallet.NewHTTP(cfg)
	if err != nil {
		return nil, err
	}
	if f.allowHTTP && strings.HasPrefix(strings.ToLower(f.url), "http://") {
		log.Warn("plain http to the operator's wallet (-operator-allow-http): amounts and player ids travel in clear; for a private network only",
			"operator_url", f.url)
	}
	return op, nil
}
