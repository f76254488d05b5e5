// Command table-svc runs chemmy's table service: chemin de fer tables as
// crash-safe state machines. See package tablesvc.
//
// Flags (each also read from the environment variable in brackets):
//
//	-listen        gRPC address (CHEMMY_TABLE_LISTEN, default "127.0.0.1:7001")
//	-data-dir      directory of table.db (CHEMMY_DATA_DIR, default "./data")
//	-shoe-addr     shoe-svc address (CHEMMY_SHOE_ADDR, default "localhost:7003")
//	-wallet-addr   wallet-svc address (CHEMMY_WALLET_ADDR, default "localhost:7002")
//	-nats-url      JetStream URL; empty keeps events in the outbox (CHEMMY_NATS_URL)
//	-metrics-addr  Prometheus /metrics address; empty serves none (CHEMMY_TABLE_METRICS)
//	-log-level     debug, info, warn or error (CHEMMY_LOG_LEVEL, default info)
//	-nats-nkey     nkey seed file for NATS (CHEMMY_NATS_NKEY)
//	-tls-cert, -tls-key, -tls-ca  mutual TLS (CHEMMY_TLS_CERT, CHEMMY_TLS_KEY, CHEMMY_TLS_CA)
//	-insecure      development only: plaintext, identity from metadata (CHEMMY_INSECURE)
//	-stream-max-age, -stream-max-bytes, -stream-replicas  limits of the CHEMMY stream if this service creates it
//	-request-retention  how long a request_id's answer is kept (default 168h)
//	-round-retention    how long the round history keeps a round (default 8760h, 12 months;
//	                    every player's last 10 rounds are kept whatever their age)
//	-interrupt-after    how long a coup may be unable to go on before its result (shoe-svc or wallet-svc
//	                    unreachable or refusing) before it is voided and every bet returned
//	                    (CHEMMY_TABLE_INTERRUPT_AFTER, default 2m)
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

	"github.com/chemmy/chemmy/services/kit/app"
	"github.com/chemmy/chemmy/services/kit/grpcx"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/services/kit/shard"
	"github.com/chemmy/chemmy/services/kit/store"
	"github.com/chemmy/chemmy/services/kit/trust"
	"github.com/chemmy/chemmy/table-svc/tablesvc"
)

func env(key, def string) string {
	if v, ok := os.LookupEnv(key); ok {
		return v
	}
	return def
}

func main() {
	app.TuneGC()
	listen := flag.String("listen", env("CHEMMY_TABLE_LISTEN", "127.0.0.1:7001"), "gRPC listen address")
	dataDir := flag.String("data-dir", env("CHEMMY_DATA_DIR", "./data"), "directory of the bbolt file table.db")
	shoeAddr := flag.String("shoe-addr", env("CHEMMY_SHOE_ADDR", "localhost:7003"), "shoe-svc address")
	walletAddr := flag.String("wallet-addr", env("CHEMMY_WALLET_ADDR", "localhost:7002"), "wallet-svc address")
	natsURL := flag.String("nats-url", env("CHEMMY_NATS_URL", ""), "NATS JetStream URL; empty keeps events in the outbox")
	metrics := flag.String("metrics-addr", env("CHEMMY_TABLE_METRICS", ""), "Prometheus /metrics address; empty serves none")
	level := flag.String("log-level", env("CHEMMY_LOG_LEVEL", "info"), "log level: debug, info, warn, error")
	nkey := flag.String("nats-nkey", env("CHEMMY_NATS_NKEY", ""), "file holding the NATS nkey seed of this service")
	tc := trust.RegisterFlags(flag.CommandLine)
	stream := outbox.RegisterStreamFlags(flag.CommandLine)
	roundRetention := flag.Duration("round-retention", tablesvc.DefaultRoundRetention, "how long the round history keeps a round (every player's last 10 are kept whatever their age); negative: for ever")
	retention := flag.Duration("request-retention", store.DefaultRetention, "how long the answer to a request_id is kept (clients must not retry older requests); negative: for ever")
	shardFlag := flag.String("shard", env("CHEMMY_SHARD", ""), "this table-svc's shard: a number or a name ending in -<number> (a StatefulSet pod's name); put into every table id, so the gateway routes the table here; empty: not sharded (CHEMMY_SHARD)")
	interruptAfter := flag.Duration("interrupt-after", tablesvc.DefaultInterruptAfter,
		"how long a coup may be unable to go on before its result (shoe-svc or wallet-svc unreachable or refusing) before it is voided and every bet returned (CHEMMY_TABLE_INTERRUPT_AFTER)")
	seedWindow := flag.Duration("seed-window", tablesvc.DefaultSeedWindow,
		"how long players have to reveal their seeds once a shoe's seed commitments are fixed (and to commit to a shoe opened while a coup waits); a seed not revealed by then abandons the shoe")
	if v, ok := os.LookupEnv("CHEMMY_TABLE_INTERRUPT_AFTER"); ok {
		if err := flag.Set("interrupt-after", v); err != nil {
			fmt.Fprintln(os.Stderr, "table-svc: bad CHEMMY_TABLE_INTERRUPT_AFTER:", err)
			os.Exit(2)
		}
	}
	flag.Parse()
	if *seedWindow <= 0 {
		fmt.Fprintln(os.Stderr, "table-svc: -seed-window must be positive")
		os.Exit(2)
	}
	if *interruptAfter <= 0 {
		fmt.Fprintln(os.Stderr, "table-svc: -interrupt-after must be positive")
		os.Exit(2)
	}
	idPrefix, err := shard.FlagPrefix(*shardFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, "table-svc: bad -shard:", err)
		os.Exit(2)
	}

	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		fmt.Fprintln(os.Stderr, "table-svc: bad -log-level:", err)
		os.Exit(2)
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Tracing, when the OTEL_* environment asks for it (grpcx.SetupTracing);
	// spans still batched go out before the exit.
	if _, err := grpcx.SetupTracing(ctx, trust.Table); err != nil {
		fmt.Fprintln(os.Stderr, "tracing:", err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = grpcx.ShutdownTracing(sctx)
	}()
	svc, err := tablesvc.Start(ctx, tablesvc.Config{
		IDPrefix: idPrefix, ListenAddr: *listen, DBPath: filepath.Join(*dataDir, "table.db"),
		ShoeAddr: *shoeAddr, WalletAddr: *walletAddr, NATSURL: *natsURL, MetricsAddr: *metrics, Logger: log,
		NATSNkeyFile: *nkey, Trust: *tc, Stream: *stream, RequestRetention: *retention, RoundRetention: *roundRetention,
		InterruptAfter: *interruptAfter, SeedWindow: *seedWindow,
	})
	if err == nil {
		// chemmy_tables_open, chemmy_players_seated, chemmy_table_watchers.
		if err = svc.RegisterGauges(); err != nil {
			svc.Stop()
			_ = svc.Wait()
		} else {
			err = svc.Wait()
		}
	}
	if err != nil {
		log.Error("table-svc stopped", "err", err)
		os.Exit(1)
	}
}
