// Command chemmy is the suite's command line.
//
//	chemmy run [flags]   start NATS and all four services in one process
//	chemmy version       the version, source revision and Go version of this build
//	chemmy verify [FILE] check a closed shoe's reveal (JSON from GetShoeReveal)
//	chemmy odds [flags]  exact odds of a variant from a shoe composition (chemmy odds -h)
//	chemmy load [flags]  many tables playing coups at once through the gateway (chemmy load -h)
//	chemmy events [flags] the events on NATS as JSON lines, to the end of the stream (-follow: and then
//	                 the new ones; -table ID, -nkey FILE; chemmy events -h)
//	chemmy wallet mode|migrate [flags]  the wallet mode of a data dir, and its change (offline; chemmy wallet)
//	chemmy wallet-conformance [flags]   run the conformance kit against an operator's wallet
//	                 (seamless mode; chemmy wallet-conformance -h, docs/operator-wallet.md)
//
// `chemmy run` flags:
//
//	-data-dir DIR    bbolt files and the embedded NATS store (default ".chemmy")
//	-listen ADDR     the gateway's public address (default "127.0.0.1:7000")
//	-http ADDR       the gateway's HTTP/JSON address and table console (default "127.0.0.1:7080"; empty: none)
//	-metrics-addr A  /metrics of every service (labelled service) and of the process, /healthz,
//	                 /readyz (default "127.0.0.1:9100"; empty: none)
//	-tokens FILE     the gateway's token file (default "deploy/local/tokens.yaml")
//	-nats-url URL    an external NATS with JetStream instead of the embedded one
//	-nats-port N     port of the embedded NATS (default 4222; -1 picks a free one)
//	-currency CODE   the wallet's default currency (default "EUR"): ISO 4217's or one of -currencies
//	-currencies L    codes accepted besides ISO 4217's, with their exponent: "CHIPS:0,GOLD:2"
//	-limits-override let an operator lift a player limit at once (SetPlayerLimits override,
//	                 recorded): only where the regulator allows it (default off)
//	-log-level L     debug, info, warn or error (default "info": a line per call, what starts and stops)
//	-insecure        development only: plaintext between the services, identity metadata believed
//	-rate-limit R    calls per second per caller at the gateway (default 20; negative: none)
//	-max-conns N     connections open at once on the gateway's gRPC and HTTP addresses together
//	                 (default 10000, or fewer to leave a quarter of the open-file limit, at least
//	                 1024, to NATS, the stores and the rest; negative: none); more are closed at once
//	-max-conns-per-addr N  of those, per client IP address (default 256; negative: none)
//	-stream-max-age D, -stream-max-bytes N, -stream-replicas N
//	                 limits of the CHEMMY event stream when it is created (default 168h,
//	                 1 GiB, 1; at least 1h, 4 MiB, 1..5; negative age or bytes: none); an existing
//	                 stream is never changed
//	-wallet MODE     transfer (default) or seamless; a data dir keeps the mode it was first run in
//	                 (another is refused, naming both: chemmy wallet migrate changes it)
//	-interrupt-after D  how long a coup may be unable to go on before its result (shoe-svc or wallet-svc
//	                 unreachable or refusing) before table-svc voids it, every bet returned
//	                 (default 2m, or CHEMMY_TABLE_INTERRUPT_AFTER)
//
// Each start makes a throw-away CA and the services' certificates in
// DIR/tls and their NATS nkeys in DIR/nats-keys (reader.nk: read-only).
//
// It prints the gateway's address and stops cleanly on Ctrl-C (SIGINT) or
// SIGTERM.
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
	"syscall"
	"time"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	"github.com/chemmy/chemmy/services/kit/app"
	currencyset "github.com/chemmy/chemmy/services/kit/currency"
	"github.com/chemmy/chemmy/services/kit/grpcx"
	"github.com/chemmy/chemmy/services/kit/opwallet"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/services/kit/shard"
	"github.com/chemmy/chemmy/table-svc/tablesvc"
	"github.com/chemmy/chemmy/wallet-svc/walletsvc"
)

func usage() {
	fmt.Fprintln(os.Stderr, "usage: chemmy run [flags]   (chemmy run -h lists the flags)")
	fmt.Fprintln(os.Stderr, "       chemmy odds [flags]  (chemmy odds -h lists the flags)")
	fmt.Fprintln(os.Stderr, "       chemmy load [flags]  (chemmy load -h lists the flags)")
	fmt.Fprintln(os.Stderr, "       chemmy events [flags] (the events as JSON lines, -follow for the new ones too; chemmy events -h)")
	fmt.Fprintln(os.Stderr, "       chemmy wallet mode|migrate [flags] (a data dir's wallet mode, and its change: chemmy wallet)")
	fmt.Fprintln(os.Stderr, "       chemmy wallet-conformance [flags] (check an operator's wallet against the seamless protocol: chemmy wallet-conformance -h)")
	fmt.Fprintln(os.Stderr, "       chemmy verify [FILE] (a closed shoe's GetShoeReveal JSON; stdin without FILE)")
	fmt.Fprintln(os.Stderr, "       chemmy check [flags] (a running chemmy at rest: ledger, escrow, events, shards: chemmy check -h)")
	fmt.Fprintln(os.Stderr, "       chemmy cluster [flags] (the Kubernetes topology as processes on 127.0.0.1: make cluster, deploy/README.md)")
	fmt.Fprintln(os.Stderr, "       chemmy version (this build's version, source revision and Go version)")
	os.Exit(2)
}

func main() {
	app.TuneGC()
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "run":
		os.Exit(run(os.Args[2:]))
	case "verify":
		os.Exit(runVerify(os.Args[2:]))
	case "odds":
		os.Exit(runOdds(os.Args[2:]))
	case "load":
		os.Exit(runLoad(os.Args[2:]))
	case "events":
		os.Exit(runEvents(os.Args[2:]))
	case "wallet":
		os.Exit(runWallet(os.Args[2:]))
	case "wallet-conformance":
		os.Exit(runWalletConformance(os.Args[2:]))
	case "check":
		os.Exit(runCheck(os.Args[2:]))
	case "cluster": // the local rehearsal of deploy/k8s (cmd/chemmy/cluster.go)
		os.Exit(runCluster(os.Args[2:]))
	case "version", "-version", "--version":
		os.Exit(runVersion(os.Args[2:], os.Stdout))
	default:
		usage()
	}
}

func run(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runMain(ctx, args, os.Stdout, os.Stderr)
}

// runMain is `chemmy run` with args, until ctx ends; it returns the exit
// code.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chemmy run", flag.ExitOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", ".chemmy", "directory of the bbolt files and the embedded NATS store")
	listen := fs.String("listen", "127.0.0.1:7000", "the gateway's public gRPC address")
	httpAddr := fs.String("http", "127.0.0.1:7080", "the gateway's HTTP/JSON address (Connect, NDJSON streams, the table console); empty serves none")
	metricsAddr := fs.String("metrics-addr", "127.0.0.1:9100", "Prometheus /metrics of every service (each series labelled service: gateway, table-svc, wallet-svc, shoe-svc, and shard with -shards > 1) and of the process, /healthz, /readyz; empty serves none")
	tokens := fs.String("tokens", "deploy/local/tokens.yaml", "the gateway's token file")
	natsURL := fs.String("nats-url", "", "external NATS JetStream URL; empty starts an embedded one")
	natsPort := fs.Int("nats-port", 4222, "port of the embedded NATS; -1 picks a free one")
	currency := fs.String("currency", "EUR", "the wallet's default currency: an active ISO 4217 code or one of -currencies")
	limitsOverride := fs.Bool("limits-override", false, "let an operator lift a player limit at once, without the cooling-off (only where the regulator allows it)")
	currencies := fs.String("currencies", "", `codes accepted besides ISO 4217's, with their exponent (minor unit): "CHIPS:0,GOLD:2"`)
	level := fs.String("log-level", "info", "log level: debug, info (a line per call: method, code, duration, caller, trace id), warn, error")
	insecure := fs.Bool("insecure", false, "development only: plaintext between the services, caller identity as plain metadata")
	rate := fs.Float64("rate-limit", 0, "calls per second per caller at the gateway; 0: the gateway's default (20), negative: no limit")
	maxConns := fs.Int("max-conns", 0, "connections open at once on the gateway's gRPC and HTTP addresses together; more are closed as accepted (HTTP: 503); 0: default 10000, or fewer to leave a quarter of the process's open-file limit (at least 1024) to NATS, the stores and the rest; negative: no cap")
	maxConnsPerAddr := fs.Int("max-conns-per-addr", 0, "of those, per client IP address; 0: default 256, negative: no cap")
	stream := outbox.RegisterStreamFlags(fs)
	shards := fs.Int("shards", 1, "table-svc shards, each with its own shoe-svc; the gateway routes by the shard in the table and shoe ids (shard k's files in <data-dir>/shard-k, shard 0's in <data-dir>)")
	interruptAfter := fs.Duration("interrupt-after", tablesvc.DefaultInterruptAfter,
		"how long a coup may be unable to go on before its result (shoe-svc or wallet-svc unreachable or refusing) before table-svc voids it, every bet returned (CHEMMY_TABLE_INTERRUPT_AFTER)")
	walletMode := fs.String("wallet", stack.WalletTransfer, "wallet mode: transfer (wallet-svc holds the players' money, funded by Deposit) or seamless (the operator's wallet holds it: docs/operator-wallet.md); a data dir keeps the mode it was first run in, another is refused (chemmy wallet migrate changes it)")
	operatorURL := fs.String("operator-url", "", "seamless: the operator wallet's base URL (https, or http on loopback); empty starts the reference operator wallet at -operator-wallet-addr")
	operatorSecret := fs.String("operator-secret-file", "", "seamless with -operator-url: the file of the HMAC secret shared with the operator wallet (or CHEMMY_OPERATOR_SECRET)")
	operatorTimeout := fs.Duration("operator-timeout", opwallet.DefaultTimeout, "seamless with -operator-url: the timeout of each call to the operator wallet")
	operatorID := fs.String("operator-id", walletsvc.DefaultOperatorID, "seamless: the operator's name in the reconciliation report (GetOperatorReport)")
	operatorsFile := fs.String("operators", "", "the operators file (docs/operators.md): the gateway's JWT issuers, wallet-svc's currencies and, seamless, each operator's own wallet; read again every 10s")
	operatorAddr := fs.String("operator-wallet-addr", "127.0.0.1:7090", "seamless without -operator-url: the reference operator wallet's address")
	if v, ok := os.LookupEnv("CHEMMY_TABLE_INTERRUPT_AFTER"); ok {
		if err := fs.Set("interrupt-after", v); err != nil {
			fmt.Fprintln(stderr, "chemmy run: bad CHEMMY_TABLE_INTERRUPT_AFTER:", err)
			return 2
		}
	}
	_ = fs.Parse(args)
	if *interruptAfter <= 0 {
		fmt.Fprintln(stderr, "chemmy run: -interrupt-after must be positive")
		return 2
	}
	if *shards < 1 || *shards > shard.Max {
		fmt.Fprintf(stderr, "chemmy run: -shards must be 1..%d\n", shard.Max)
		return 2
	}

	op, err := operatorFromFlags(*walletMode, *operatorURL, *operatorSecret, *operatorTimeout)
	if err != nil {
		fmt.Fprintln(stderr, "chemmy run:", err)
		return 2
	}

	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		fmt.Fprintln(stderr, "chemmy run: bad -log-level:", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl}))
	// Tracing when the OTEL_* environment asks for it: each service's
	// spans under its own service.name (grpcx tracing).
	if _, err := grpcx.SetupTracing(ctx, ""); err != nil {
		log.Error("tracing", "err", err)
	}
	known, err := currencyset.ParseSet(*currencies)
	if err != nil {
		fmt.Fprintln(stderr, "chemmy run: bad -currencies:", err)
		return 2
	}
	st, err := stack.Start(ctx, stack.Config{
		DataDir: *dataDir, GatewayAddr: *listen, TokensFile: *tokens, GatewayHTTPAddr: *httpAddr, MetricsAddr: *metricsAddr,
		NATSURL: *natsURL, NATSPort: *natsPort, Currency: *currency, Currencies: known, LimitsOverride: *limitsOverride, Logger: log,
		Insecure: *insecure, Limits: gateway.LimitConfig{Rate: *rate}, Stream: *stream, Shards: *shards,
		GatewayConn:    gateway.ConnConfig{MaxConns: *maxConns, MaxConnsPerAddr: *maxConnsPerAddr},
		InterruptAfter: *interruptAfter, Wallet: *walletMode, Operator: op, OperatorWalletAddr: *operatorAddr, OperatorID: *operatorID,
		OperatorsFile: *operatorsFile,
	})
	if err != nil {
		fmt.Fprintln(stderr, "chemmy run:", err)
		return 1
	}
	fmt.Fprintf(stdout, "chemmy is running\n  gateway  %s   (grpcurl -plaintext %s list)\n  nats     %s\n  data     %s\n",
		st.GatewayAddr, st.GatewayAddr, st.NATSURL, *dataDir)
	if st.GatewayHTTPAddr != "" {
		fmt.Fprintf(stdout, "  http     http://%s/   (table console; HTTP/JSON: curl -H 'Authorization: Bearer croupier-token' -H 'Content-Type: application/json' -d '{}' http://%s/chemmy.table.v1.TableService/ListTables ...)\n",
			st.GatewayHTTPAddr, st.GatewayHTTPAddr)
	}
	if st.MetricsAddr != "" {
		fmt.Fprintf(stdout, "  metrics  http://%s/metrics   (every service, labelled service; also /healthz, /readyz)\n", st.MetricsAddr)
	}
	if st.PKI != nil {
		fmt.Fprintf(stdout, "  mTLS     CA and certificates in %s\n", st.PKI.Dir)
	}
	if st.NATSKeys != nil {
		fmt.Fprintf(stdout, "  nats key %s (read-only: nats sub --nkey %s --inbox-prefix _INBOX_reader 'chemmy.>')\n", st.NATSKeys.SeedFile("reader"), st.NATSKeys.SeedFile("reader"))
		fmt.Fprintf(stdout, "  events   chemmy events -nats-url %s -nkey %s\n", st.NATSURL, st.NATSKeys.SeedFile("reader"))
	}
	if st.OperatorWallet != nil {
		fmt.Fprintf(stdout, "  operator %s   (reference operator wallet, seamless mode; fund a player: curl -H \"Authorization: Bearer $(cat %s)\" -d '{\"player_id\":\"alice\",\"deposit\":5000}' http://%s/admin/players)\n",
			st.OperatorWallet.BaseURL(), st.OperatorAdminTokenFile, st.OperatorWallet.Addr())
	} else if *walletMode == stack.WalletSeamless {
		fmt.Fprintf(stdout, "  operator %s   (seamless mode)\n", *operatorURL)
	}
	if *shards > 1 {
		fmt.Fprintf(stdout, "  shards   %d table-svc shards, each with its shoe-svc (docs/sharding.md)\n", *shards)
	}
	fmt.Fprintln(stdout, "Ctrl-C stops it.")
	<-ctx.Done()
	fmt.Fprintln(stdout, "stopping...")
	st.Stop()
	if err := st.Wait(); err != nil {
		fmt.Fprintln(stderr, "chemmy run:", err)
		return 1
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = grpcx.ShutdownTracing(sctx) // sends the spans still batched, when tracing is on
	fmt.Fprintln(stdout, "stopped")
	return 0
}

// operatorFromFlags is the operator wallet of -operator-url (nil without
// one: transfer mode, or the stack's reference operator wallet).
func operatorFromFlags(mode, url, secretFile string, timeout time.Duration) (opwallet.Operator, error) {
	if url == "" {
		return nil, nil
	}
	if mode != stack.WalletSeamless {
		return nil, errors.New("-operator-url needs -wallet seamless")
	}
	secret, err := opwallet.ReadSecret(secretFile, os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("-operator-url needs the HMAC secret (-operator-secret-file or %s): %w", opwallet.SecretEnv, err)
	}
	return opwallet.NewHTTP(opwallet.HTTPConfig{BaseURL: url, Secret: secret, Timeout: timeout})
}
