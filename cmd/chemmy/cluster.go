package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/chemmy/chemmy/cmd/cluster"
)

// runCluster is `chemmy cluster`: the local rehearsal of the Kubernetes
// topology (package cluster) in the foreground until Ctrl-C, or with
// -scaling the same load on 1, 2, 3... shards, one cluster after the
// other, and its figures.
func runCluster(args []string) int {
	fs := flag.NewFlagSet("chemmy cluster", flag.ContinueOnError)
	shards := fs.Int("shards", 2, "table-svc shards, each with its shoe-svc")
	gateways := fs.Int("gateways", 2, "gateways, each with every shard's address")
	dataDir := fs.String("data-dir", "", "every process's files and logs (kept); empty: a temporary directory, removed at the end")
	binDir := fs.String("bin-dir", "bin", "the binaries: nats-server, wallet-svc, shoe-svc, table-svc, gateway")
	build := fs.Bool("build", true, "build the binaries into -bin-dir first (go build; nats-server at the version of cmd/go.mod): run from the source tree")
	tokens := fs.String("tokens", "deploy/local/tokens.yaml", "the gateways' token file")
	rate := fs.Float64("rate-limit", 0, "the gateways' calls per second per caller; 0: their default (20), negative: no limit")
	level := fs.String("log-level", "info", "the services' log level: debug, info, warn, error")
	scaling := fs.String("scaling", "", "instead of running: play -tables tables for -duration on a fresh cluster of each of these shard counts (e.g. 1,2,3) and print coups/s and the CPU per coup of each process")
	tables := fs.Int("tables", 24, "-scaling: tables playing at once")
	duration := fs.Duration("duration", 20*time.Second, "-scaling: how long each run is measured")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "chemmy cluster: unexpected arguments", fs.Args())
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "chemmy cluster:", err)
		return 1
	}
	if *build {
		root, err := cluster.FindRoot(".")
		if err != nil {
			return fail(err)
		}
		fmt.Printf("building the binaries into %s...\n", *binDir)
		if err := cluster.Build(ctx, root, *binDir); err != nil {
			return fail(err)
		}
	}
	if *scaling != "" {
		var counts []int
		for _, f := range strings.Split(*scaling, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 || n > 16 {
				fmt.Fprintln(os.Stderr, "chemmy cluster: -scaling takes shard counts 1..16, comma-separated")
				return 2
			}
			counts = append(counts, n)
		}
		runs, err := cluster.Scaling(ctx, cluster.ScalingConfig{BinDir: *binDir, Shards: counts, Tables: *tables, Duration: *duration,
			Gateways: *gateways, Progress: os.Stdout})
		if err != nil {
			return fail(err)
		}
		cluster.PrintScaling(os.Stdout, runs)
		return 0
	}

	dir := *dataDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "chemmy-cluster-")
		if err != nil {
			return fail(err)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	fmt.Printf("starting NATS (3 nodes), wallet-svc, %d shard(s), %d gateway(s) in %s...\n", *shards, *gateways, dir)
	cl, err := cluster.Start(ctx, cluster.Config{Shards: *shards, Gateways: *gateways, DataDir: dir, BinDir: *binDir,
		TokensFile: *tokens, RateLimit: *rate, LogLevel: *level})
	if err != nil {
		return fail(err)
	}
	fmt.Println("chemmy cluster is running")
	for g, a := range cl.GatewayAddrs {
		fmt.Printf("  %-11s %s   http://%s/   (grpcurl -plaintext -H 'authorization: Bearer croupier-token' %s list)\n",
			cluster.GatewayName(g), a, cl.GatewayHTTPAddrs[g], a)
	}
	for k := range cl.TableAddrs {
		fmt.Printf("  shard %-5d %s %s, %s %s (ids s%d-...)\n", k, cluster.TableName(k), cl.TableAddrs[k], cluster.ShoeName(k), cl.ShoeAddrs[k], k)
	}
	fmt.Printf("  %-11s %s\n", cluster.Wallet, cl.WalletAddr)
	fmt.Printf("  nats        %s\n", cl.NATSURL)
	fmt.Printf("  events      chemmy events -all -nats-url %s -nkey %s\n", cl.NATSURL, cl.ReaderSeed())
	fmt.Printf("  load        chemmy load -gateway %s -player-token '%%s-token' -prefix p (the players' tokens in -tokens: chemmy load -write-tokens, deploy/README.md)\n", cl.GatewayAddrs[0])
	fmt.Printf("  logs        %s\n", cl.LogDir)
	fmt.Println("Ctrl-C stops it (gateways, table-svcs, shoe-svcs, wallet-svc, NATS, in that order).")
	<-ctx.Done()
	fmt.Println("stopping...")
	if err := cl.Stop(); err != nil {
		return fail(err)
	}
	fmt.Println("stopped")
	return 0
}
