// Command shoe-svc runs chemmy's shoe service (package shoesvc).
//
// Flags (each falls back to an environment variable when not given):
//
//	-listen        gRPC address (CHEMMY_SHOE_LISTEN, default "127.0.0.1:7003")
//	-data-dir      directory of the bbolt file shoe.db (CHEMMY_SHOE_DATA_DIR, default "./data")
//	-nats-url      NATS JetStream URL; "" keeps events in the outbox (CHEMMY_SHOE_NATS_URL)
//	-metrics-addr  Prometheus /metrics address; "" serves none (CHEMMY_SHOE_METRICS_ADDR)
//	-log-level     debug, info, warn or error (CHEMMY_SHOE_LOG_LEVEL, default info)
//	-nats-nkey     nkey seed file for NATS (CHEMMY_NATS_NKEY)
//	-tls-cert, -tls-key, -tls-ca  mutual TLS (CHEMMY_TLS_CERT, CHEMMY_TLS_KEY, CHEMMY_TLS_CA)
//	-insecure      development only: plaintext, identity from metadata (CHEMMY_INSECURE)
//	-stream-max-age, -stream-max-bytes, -stream-replicas  limits of the CHEMMY stream if this service creates it
//	-request-retention  how long a request_id's answer is kept, those of a shoe still open as long as it is (default 168h)
//
// Logs are JSON on stderr. SIGINT or SIGTERM stops the service gracefully.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
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
	"github.com/chemmy/chemmy/shoe-svc/shoesvc"
)

func main() {
	app.TuneGC()
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "shoe-svc:", err)
		os.Exit(1)
	}
}

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("shoe-svc", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", env("CHEMMY_SHOE_LISTEN", shoesvc.DefaultListenAddr), "gRPC listen address")
	dataDir := fs.String("data-dir", env("CHEMMY_SHOE_DATA_DIR", "./data"), "directory of the bbolt file shoe.db")
	natsURL := fs.String("nats-url", env("CHEMMY_SHOE_NATS_URL", ""), `NATS JetStream URL; "" keeps events in the outbox`)
	metrics := fs.String("metrics-addr", env("CHEMMY_SHOE_METRICS_ADDR", ""), `Prometheus /metrics address; "" serves none`)
	logLevel := fs.String("log-level", env("CHEMMY_SHOE_LOG_LEVEL", "info"), "log level: debug, info, warn, error")
	nkey := fs.String("nats-nkey", env("CHEMMY_NATS_NKEY", ""), "file holding the NATS nkey seed of this service")
	tc := trust.RegisterFlags(fs)
	stream := outbox.RegisterStreamFlags(fs)
	shardFlag := fs.String("shard", env("CHEMMY_SHARD", ""), "this shoe-svc's table-svc shard: a number or a name ending in -<number> (a StatefulSet pod's name); put into every shoe id; empty: not sharded (CHEMMY_SHARD)")
	retention := fs.Duration("request-retention", store.DefaultRetention, "how long the answer to a request_id is kept (those of a shoe still open: as long as it is; clients must not retry older requests); negative: for ever")
	if err := fs.Parse(args); err != nil {
		return err
	}
	idPrefix, err := shard.FlagPrefix(*shardFlag)
	if err != nil {
		return fmt.Errorf("-shard: %w", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Tracing, when the OTEL_* environment asks for it (grpcx.SetupTracing);
	// spans still batched go out before the exit.
	if _, err := grpcx.SetupTracing(ctx, trust.Shoe); err != nil {
		fmt.Fprintln(os.Stderr, "tracing:", err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = grpcx.ShutdownTracing(sctx)
	}()
	err = shoesvc.Run(ctx, shoesvc.Config{
		IDPrefix:     idPrefix,
		ListenAddr:   *listen,
		DBPath:       filepath.Join(*dataDir, "shoe.db"),
		NATSURL:      *natsURL,
		MetricsAddr:  *metrics,
		NATSNkeyFile: *nkey,
		Trust:        *tc,
		Stream:       *stream,
		Logger:       log,

		RequestRetention: *retention,
	})
	if err != nil {
		log.Error("stopped", "err", err)
		return err
	}
	log.Info("stopped")
	return nil
}
