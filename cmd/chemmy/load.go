package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// runLoad is `chemmy load`: many tables playing coups at once through the
// gateway, each table one client goroutine playing as fast as it can.
// It reports settled coups per second and the latency of PlaceBet
// (p50/p90/p99/max, which includes the deal and the settlement when the
// bet closes the betting).
func runLoad(args []string) int { return loadMain(args, os.Stdout, os.Stderr) }

func loadMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chemmy load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	gw := fs.String("gateway", "127.0.0.1:7000", "the gateway's address")
	tables := fs.Int("tables", 16, "tables playing at once (one client each)")
	duration := fs.Duration("duration", 20*time.Second, "how long to play (bounded run)")
	croupier := fs.String("croupier-token", "croupier-token", "token of a croupier: creates the tables and acts for the players")
	operator := fs.String("operator-token", "operator-token", "token of an operator: funds the players")
	prefix := fs.String("prefix", "load-"+strconv.FormatInt(time.Now().Unix(), 36), "prefix of the players' and requests' ids")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *tables < 1 || *tables > 1000 || *duration <= 0 || *duration > time.Hour {
		fmt.Fprintln(stderr, "chemmy load: -tables must be 1..1000 and -duration at most 1h")
		return 2
	}
	cc, err := grpc.NewClient(*gw, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintln(stderr, "chemmy load:", err)
		return 1
	}
	defer cc.Close()
	l := &loader{
		table: tablev1.NewTableServiceClient(cc), wallet: walletv1.NewWalletServiceClient(cc),
		croupier: *croupier, operator: *operator, prefix: *prefix,
	}
	ctx, cancel := context.WithTimeout(context.Background(), *duration)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	results := make([]tableResult, *tables)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = l.play(ctx, i)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	var coups int
	var bets []time.Duration
	var firstErr error
	for _, r := range results {
		coups += r.coups
		bets = append(bets, r.bets...)
		if firstErr == nil && r.err != nil {
			firstErr = r.err
		}
	}
	if firstErr != nil {
		fmt.Fprintln(stderr, "chemmy load: a table stopped:", firstErr)
	}
	slices.Sort(bets)
	pct := func(p float64) time.Duration {
		if len(bets) == 0 {
			return 0
		}
		return bets[min(len(bets)-1, int(p*float64(len(bets))))]
	}
	fmt.Fprintf(stdout, "%d tables, %s: %d coups settled, %.1f coups/s\n", *tables, elapsed.Round(time.Millisecond), coups, float64(coups)/elapsed.Seconds())
	fmt.Fprintf(stdout, "PlaceBet: %d calls, p50 %s, p90 %s, p99 %s, max %s\n", len(bets),
		pct(0.50).Round(10*time.Microsecond), pct(0.90).Round(10*time.Microsecond), pct(0.99).Round(10*time.Microsecond), pct(1).Round(10*time.Microsecond))
	if firstErr != nil || coups == 0 {
		return 1
	}
	return 0
}

type loader struct {
	table              tablev1.TableServiceClient
	wallet             walletv1.WalletServiceClient
	croupier, operator string
	prefix             string
}

type tableResult struct {
	coups int
	bets  []time.Duration
	err   error
}

func (l *loader) as(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
}

// play runs one table until ctx ends: three players, a bank of 1000, the
// punters covering it, decisions answered "draw".
func (l *loader) play(ctx context.Context, n int) (res tableResult) {
	id := l.prefix + "-" + strconv.Itoa(n)
	players := []string{id + "-a", id + "-b", id + "-c"}
	seq := 0
	rid := func() string { seq++; return id + "-r" + strconv.Itoa(seq) }
	call := context.Background() // setup and each call finish even when the run's time is up
	for _, p := range players {
		if _, err := l.wallet.Deposit(l.as(call, l.operator), &walletv1.DepositRequest{RequestId: rid(), AccountId: "player:" + p, Amount: 1 << 40}); err != nil {
			res.err = err
			return
		}
	}
	created, err := l.table.CreateTable(l.as(call, l.croupier), &tablev1.CreateTableRequest{RequestId: rid()})
	if err != nil {
		res.err = err
		return
	}
	tid := created.GetTable().GetTableId()
	var tbl *tablev1.Table
	for _, p := range players {
		resp, err := l.table.JoinTable(l.as(call, l.croupier), &tablev1.JoinTableRequest{RequestId: rid(), TableId: tid, PlayerId: p})
		if err != nil {
			res.err = err
			return
		}
		tbl = resp.GetTable()
	}
	played := tbl.GetCoupsPlayed()
	for ctx.Err() == nil {
		var err error
		switch tbl.GetState() {
		case tablev1.TableState_TABLE_STATE_OFFERING_BANK:
			var r *tablev1.AcceptBankResponse
			r, err = l.table.AcceptBank(l.as(call, l.croupier), &tablev1.AcceptBankRequest{RequestId: rid(), TableId: tid, PlayerId: tbl.GetOfferedPlayerId(), Amount: 1000})
			tbl = r.GetTable()
		case tablev1.TableState_TABLE_STATE_BETTING:
			cp := tbl.GetCoup()
			t0 := time.Now()
			var r *tablev1.PlaceBetResponse
			r, err = l.table.PlaceBet(l.as(call, l.croupier), &tablev1.PlaceBetRequest{RequestId: rid(), TableId: tid, PlayerId: cp.GetTurnPlayerId(), Amount: cp.GetUncovered()})
			res.bets = append(res.bets, time.Since(t0))
			tbl = r.GetTable()
		case tablev1.TableState_TABLE_STATE_DECISION:
			var r *tablev1.DecideDrawResponse
			r, err = l.table.DecideDraw(l.as(call, l.croupier), &tablev1.DecideDrawRequest{RequestId: rid(), TableId: tid, PlayerId: tbl.GetCoup().GetDecisionPlayerId(), Choice: tablev1.DrawChoice_DRAW_CHOICE_DRAW})
			tbl = r.GetTable()
		default:
			var r *tablev1.GetTableResponse
			time.Sleep(10 * time.Millisecond)
			r, err = l.table.GetTable(l.as(call, l.croupier), &tablev1.GetTableRequest{TableId: tid})
			tbl = r.GetTable()
		}
		if err != nil {
			res.err = fmt.Errorf("table %s: %w", tid, err)
			return
		}
		if tbl == nil {
			res.err = errors.New("empty response")
			return
		}
		res.coups += int(tbl.GetCoupsPlayed() - played)
		played = tbl.GetCoupsPlayed()
	}
	return
}
