// Command wallet-svc runs chemmy's wallet service: accounts, a double-entry
// ledger, holds and coup settlement (package walletsvc).
//
// Flags:
//
//	-listen        gRPC address (default "127.0.0.1:7002")
//	-data-dir      directory of the ledger file wallet.db (default "./data")
//	-nats-url      NATS JetStream URL (default none)
//	-metrics-addr  Prometheus /metrics address (default none)
//	-currency      the wallet's currency code (default "EUR")
//	-request-retention  how long a request_id's answer is kept (default 168h, 7 days;
//	               negative: for ever); coup settlements are kept for ever
//	-stream-max-age, -stream-max-bytes, -stream-replicas  limits of the CHEMMY
//	               event stream when this service creates it (default 720h, 1 GiB,
//	               1; negative age or bytes: none); an existing stream is never changed
//	-session-gap   a pause in a player's play longer than this ends his session
//	               (session loss and time limits; default 30m)
//	-limits-cooling-off  how long a looser player limit waits (default 24h)
//	-log-level     debug, info, warn or error (default "info")
//	-nats-nkey     nkey seed file for NATS (CHEMMY_NATS_NKEY)
//	-tls-cert, -tls-key, -tls-ca  mutual TLS (CHEMMY_TLS_CERT, CHEMMY_TLS_KEY, CHEMMY_TLS_CA)
//	-insecure      development only: plaintext, identity from metadata (CHEMMY_INSECURE)
//
// It logs JSON to stderr and stops gracefully on SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/chemmy/chemmy/services/kit/grpcx"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/services/kit/store"
	"github.com/chemmy/chemmy/services/kit/trust"
	"github.com/chemmy/chemmy/wallet-svc/walletsvc"
)

func main() {
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
	currency := fs.String("currency", walletsvc.DefaultCurrency, "currency code of the wallet (ISO 4217 or chip code)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	nkey := fs.String("nats-nkey", os.Getenv("CHEMMY_NATS_NKEY"), "file holding the NATS nkey seed of this service")
	sessionGap := fs.Duration("session-gap", walletsvc.DefaultSessionGap, "a pause in a player's play longer than this ends his session (session loss and time limits)")
	coolingOff := fs.Duration("limits-cooling-off", walletsvc.DefaultLimitsCoolingOff, "how long a looser responsible-gaming limit waits before it takes effect")
	retention := fs.Duration("request-retention", store.DefaultRetention, "how long the answer to a request_id is kept (clients must not retry older requests); negative: for ever")
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

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Spans still batched go out before the exit (tracing is on only with
	// OTEL_EXPORTER_OTLP_ENDPOINT).
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = grpcx.ShutdownTracing(sctx)
	}()
	err := walletsvc.Run(ctx, walletsvc.Config{
		ListenAddr:       *listen,
		DBPath:           filepath.Join(*dataDir, "wallet.db"),
		NATSURL:          *natsURL,
		MetricsAddr:      *metricsAddr,
		Currency:         *currency,
		NATSNkeyFile:     *nkey,
		Trust:            *tc,
		Logger:           log,
		RequestRetention: *retention,
		SessionGap:       *sessionGap,
		LimitsCoolingOff: *coolingOff,
		Stream:           *stream,
	})
	if err != nil {
		log.Error("wallet-svc stopped", "err", err)
		return err
	}
	log.Info("wallet-svc stopped")
	return nil
}
