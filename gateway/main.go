// Command gateway runs chemmy's public gRPC endpoint: authentication,
// roles, abuse limits, and forwarding to table-svc, wallet-svc and
// shoe-svc over mutual TLS with a signed caller assertion. Every flag
// falls back to the environment variable named in its help; see
// gateway/README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"google.golang.org/grpc/resolver/dns"

	"github.com/chemmy/chemmy/gateway/gateway"
	"github.com/chemmy/chemmy/services/kit/app"
	"github.com/chemmy/chemmy/services/kit/grpcx"
	"github.com/chemmy/chemmy/services/kit/trust"
)

func env(key, def string) string {
	if v, ok := os.LookupEnv(key); ok {
		return v
	}
	return def
}

// envNum parses the environment variable key as a T, or returns def.
func envNum[T int | float64](key string, def T) T {
	v, ok := os.LookupEnv(key)
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gateway: %s=%q is not a number\n", key, v)
		os.Exit(2)
	}
	return T(f)
}

// envDuration parses the environment variable key as a Go duration
// ("24h", "90s"), or returns def.
func envDuration(key string, def time.Duration) time.Duration {
	v, ok := os.LookupEnv(key)
	if !ok {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gateway: %s=%q is not a duration (e.g. 24h, 30s)\n", key, v)
		os.Exit(2)
	}
	return d
}

func main() {
	app.TuneGC()
	// A shard's pod that comes back (a StatefulSet pod deleted, evicted,
	// rescheduled) has a new address under the same name: look the name
	// up again at most a second after its connection failed, not gRPC's
	// default 30 s, through which the shard's tables would wait (and
	// their clients give up). Set before any connection is made.
	dns.SetMinResolutionInterval(time.Second)
	var (
		c        gateway.Config
		logLevel slog.Level
	)
	flag.StringVar(&c.ListenAddr, "listen", env("CHEMMY_GATEWAY_LISTEN", "127.0.0.1:7000"), "public gRPC listen address (CHEMMY_GATEWAY_LISTEN)")
	flag.StringVar(&c.TokensFile, "tokens", env("CHEMMY_GATEWAY_TOKENS", ""), "YAML token file (CHEMMY_GATEWAY_TOKENS); at least one of -tokens, -jwks, -operators")
	flag.StringVar(&c.DefaultOperator, "default-operator", env("CHEMMY_GATEWAY_DEFAULT_OPERATOR", gateway.DefaultOperatorID), "the operator (tenant) of token-file entries that name none and of the JWT issuer: 1 to 64 of a-z, 0-9, '.', '_', '-' (CHEMMY_GATEWAY_DEFAULT_OPERATOR)")
	flag.StringVar(&c.OperatorsFile, "operators", env("CHEMMY_GATEWAY_OPERATORS", ""), "YAML operators file: each operator's JWT issuer and JWKS, a JWT's iss names its operator (docs/operators.md); not with -jwks/-jwt-issuer (CHEMMY_GATEWAY_OPERATORS)")
	flag.StringVar(&c.JWKS, "jwks", env("CHEMMY_GATEWAY_JWKS", ""), "the operator's JWKS: a file or an https URL; http only to a loopback host or with -insecure (CHEMMY_GATEWAY_JWKS)")
	flag.StringVar(&c.JWTIssuer, "jwt-issuer", env("CHEMMY_GATEWAY_JWT_ISSUER", ""), "required iss of operator JWTs (CHEMMY_GATEWAY_JWT_ISSUER)")
	flag.StringVar(&c.JWTAudience, "jwt-audience", env("CHEMMY_GATEWAY_JWT_AUDIENCE", ""), "required aud of operator JWTs; with -operators, of those whose entry names none (CHEMMY_GATEWAY_JWT_AUDIENCE)")
	flag.DurationVar(&c.JWTMaxLifetime, "jwt-max-lifetime", envDuration("CHEMMY_GATEWAY_JWT_MAX_LIFETIME", 0), "longest an operator JWT may live, exp - iat (exp - now without iat); longer ones are refused TOKEN_LIFETIME_TOO_LONG; 0: default 24h, negative: no bound (CHEMMY_GATEWAY_JWT_MAX_LIFETIME)")
	flag.DurationVar(&c.ReloadInterval, "reload-interval", time.Duration(envNum("CHEMMY_GATEWAY_RELOAD_SECONDS", 10.0)*float64(time.Second)), "how often the token file, the operators file and the JWKS are read again (CHEMMY_GATEWAY_RELOAD_SECONDS)")
	flag.StringVar(&c.TableAddr, "table-addr", env("CHEMMY_TABLE_ADDR", "localhost:7001"), "table-svc gRPC address, or the shards' addresses comma-separated, shard i at position i (docs/sharding.md) (CHEMMY_TABLE_ADDR)")
	flag.StringVar(&c.WalletAddr, "wallet-addr", env("CHEMMY_WALLET_ADDR", "localhost:7002"), "wallet-svc gRPC address (CHEMMY_WALLET_ADDR)")
	flag.StringVar(&c.ShoeAddr, "shoe-addr", env("CHEMMY_SHOE_ADDR", "localhost:7003"), "shoe-svc gRPC address, or each shard's shoe-svc comma-separated, in the order of -table-addr (CHEMMY_SHOE_ADDR)")
	flag.StringVar(&c.HTTPAddr, "http-addr", env("CHEMMY_GATEWAY_HTTP", ""), "HTTP/JSON address: every public RPC (Connect, gRPC-Web, NDJSON streams) and the table console; empty serves none (CHEMMY_GATEWAY_HTTP)")
	flag.StringVar(&c.MetricsAddr, "metrics-addr", env("CHEMMY_GATEWAY_METRICS", ""), "Prometheus /metrics, /healthz, /readyz address; empty serves none (CHEMMY_GATEWAY_METRICS)")
	flag.Float64Var(&c.Limits.Rate, "rate-limit", envNum("CHEMMY_GATEWAY_RATE_LIMIT", 0.0), "calls per second per caller (token bucket refill); 0: default 20, negative: no limit (CHEMMY_GATEWAY_RATE_LIMIT)")
	flag.IntVar(&c.Limits.Burst, "rate-burst", envNum("CHEMMY_GATEWAY_RATE_BURST", 0), "calls a caller may make at once (bucket size); 0: default 40 (CHEMMY_GATEWAY_RATE_BURST)")
	flag.IntVar(&c.Limits.MaxStreamsPerCaller, "max-streams-per-caller", envNum("CHEMMY_GATEWAY_MAX_STREAMS_PER_CALLER", 0), "open WatchTable streams per caller; 0: default 8 (CHEMMY_GATEWAY_MAX_STREAMS_PER_CALLER)")
	flag.IntVar(&c.Limits.MaxStreams, "max-streams", envNum("CHEMMY_GATEWAY_MAX_STREAMS", 0), "open WatchTable streams in all; 0: default 1000 (CHEMMY_GATEWAY_MAX_STREAMS)")
	flag.IntVar(&c.MaxMessageBytes, "max-message-bytes", envNum("CHEMMY_GATEWAY_MAX_MESSAGE_BYTES", 0), "largest request message in bytes; 0: default 1 MiB (CHEMMY_GATEWAY_MAX_MESSAGE_BYTES)")
	flag.IntVar(&c.Conn.MaxConns, "max-conns", envNum("CHEMMY_GATEWAY_MAX_CONNS", 0), "connections open at once on the public listeners, gRPC and HTTP together; more are closed as accepted (HTTP: 503); 0: default 10000, or fewer to leave a quarter of the process's open-file limit (at least 1024) to the rest; negative: no cap (CHEMMY_GATEWAY_MAX_CONNS)")
	flag.IntVar(&c.Conn.MaxConnsPerAddr, "max-conns-per-addr", envNum("CHEMMY_GATEWAY_MAX_CONNS_PER_ADDR", 0), "of those, per client IP address (a -trusted-proxies address counts in -max-conns only); 0: default 256, negative: no cap (CHEMMY_GATEWAY_MAX_CONNS_PER_ADDR)")
	flag.DurationVar(&c.Conn.Handshake, "handshake-timeout", envDuration("CHEMMY_GATEWAY_HANDSHAKE_TIMEOUT", 0), "how long a new gRPC connection has to send its HTTP/2 preface and settings; 0: default 10s (CHEMMY_GATEWAY_HANDSHAKE_TIMEOUT)")
	flag.DurationVar(&c.Conn.HeaderTimeout, "http-header-timeout", envDuration("CHEMMY_GATEWAY_HTTP_HEADER_TIMEOUT", 0), "how long an HTTP request's headers may take to arrive; 0: default 10s (CHEMMY_GATEWAY_HTTP_HEADER_TIMEOUT)")
	flag.DurationVar(&c.Conn.BodyTimeout, "http-body-timeout", envDuration("CHEMMY_GATEWAY_HTTP_BODY_TIMEOUT", 0), "how long an HTTP request's body may take to arrive after its headers (then 408); 0: default 30s (CHEMMY_GATEWAY_HTTP_BODY_TIMEOUT)")
	flag.DurationVar(&c.Conn.IdleTimeout, "idle-timeout", envDuration("CHEMMY_GATEWAY_IDLE_TIMEOUT", 0), "an HTTP connection idle between requests, or a gRPC one with no call open, is closed after it; 0: default 2m (CHEMMY_GATEWAY_IDLE_TIMEOUT)")
	proxies := flag.String("trusted-proxies", env("CHEMMY_GATEWAY_TRUSTED_PROXIES", ""), "CIDRs (or IPs), comma-separated, of the load balancers in front of the gateway whose X-Forwarded-For / x-forwarded-for names the client for the failed-authentication limit; empty: none (CHEMMY_GATEWAY_TRUSTED_PROXIES)")
	tc := trust.RegisterFlags(flag.CommandLine)
	flag.TextVar(&logLevel, "log-level", slog.LevelInfo, "log level: debug, info, warn, error")
	flag.Parse()
	c.Trust = *tc
	var err error
	if c.TrustedProxies, err = gateway.ParseTrustedProxies(*proxies); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if c.TokensFile == "" && c.JWKS == "" && c.OperatorsFile == "" {
		fmt.Fprintln(os.Stderr, "gateway: -tokens, -jwks or -operators is required")
		flag.Usage()
		os.Exit(2)
	}
	c.Logger = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel}))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if on, err := grpcx.SetupTracing(ctx, trust.Gateway); err != nil {
		c.Logger.Error("tracing", "err", err)
	} else if on {
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = grpcx.ShutdownTracing(sctx)
		}()
	}
	if err := gateway.Run(ctx, c); err != nil {
		c.Logger.Error("gateway failed", "err", err)
		stop()
		os.Exit(1)
	}
}
