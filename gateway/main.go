// Command gateway runs chemmy's public gRPC endpoint: authentication,
// roles, and forwarding to table-svc, wallet-svc and shoe-svc.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/chemmy/chemmy/gateway/gateway"
)

func main() {
	var (
		c        gateway.Config
		logLevel slog.Level
	)
	flag.StringVar(&c.ListenAddr, "listen", ":7000", "public gRPC listen address")
	flag.StringVar(&c.TokensFile, "tokens", "", "YAML token file (required)")
	flag.StringVar(&c.TableAddr, "table-addr", "localhost:7001", "table-svc gRPC address")
	flag.StringVar(&c.WalletAddr, "wallet-addr", "localhost:7002", "wallet-svc gRPC address")
	flag.StringVar(&c.ShoeAddr, "shoe-addr", "localhost:7003", "shoe-svc gRPC address")
	flag.StringVar(&c.MetricsAddr, "metrics-addr", "", "Prometheus /metrics address; empty serves none")
	flag.TextVar(&logLevel, "log-level", slog.LevelInfo, "log level: debug, info, warn, error")
	flag.Parse()
	if c.TokensFile == "" {
		fmt.Fprintln(os.Stderr, "gateway: -tokens is required")
		flag.Usage()
		os.Exit(2)
	}
	c.Logger = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel}))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := gateway.Run(ctx, c); err != nil {
		c.Logger.Error("gateway failed", "err", err)
		stop()
		os.Exit(1)
	}
}
