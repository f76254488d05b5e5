package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	gatewayv1 "github.com/chemmy/chemmy/proto/gen/chemmy/gateway/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// runLoad is `chemmy load`: many tables playing coups at once through the
// gateway, each table one client goroutine playing as fast as it can.
// It reports settled coups per second and the latency of PlaceBet
// (p50/p90/p99/max, which includes the deal and the settlement when the
// bet closes the betting, and any retries).
//
// A call that fails UNAVAILABLE or DEADLINE_EXCEEDED (each call has
// -call-timeout) may or may not have been applied: it is sent again with
// the same request id (so it is applied at most once), after a backoff of
// 50 ms doubling up to 2 s, at most -max-attempts times in all; then the
// table gives up. The report counts the retries.
//
// With -player-token each player plays with his own token (the gateway
// lets no member of staff make a player's moves); -write-tokens writes a
// token file holding them for the stack (make load does both).
//
// Before playing it measures the transport: the gateway's GetCaller (a
// no-op behind the same authentication) called by as many clients as
// there are tables for -noop. The transport bound is that rate divided
// by the client RPCs one coup takes, and the coups/s are given as a
// ratio of it. Then it sets the tables up, at most setupConcurrency at
// once, outside the measured window. With -metrics (the /metrics URLs of
// `chemmy run -metrics` or of the services, comma-separated) it also
// reports per coup, from the differences over the playing time: the
// fsyncs (durable writes) and commits of each service's bbolt file, the
// CPU of each process, the RPCs each service behind the gateway answered
// (internal hops), the events published, the bytes the stream stored
// and the bytes allocated; and it measures, with the same mTLS and
// assertions, the stack's CPU of a no-op client hop (GetCaller) and of a
// no-op internal hop (the wallet's GetCurrency through the gateway, less
// GetCaller). The report's last line is then the coup's CPU against the
// transport floor: the hops the coup made (client RPCs and internal
// RPCs per coup) each at the CPU of a no-op hop of its kind.
func runLoad(args []string) int { return loadMain(args, os.Stdout, os.Stderr) }

func loadMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chemmy load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	gw := fs.String("gateway", "127.0.0.1:7000", "the gateway's address")
	tables := fs.Int("tables", 16, "tables playing at once (one client each)")
	duration := fs.Duration("duration", 20*time.Second, "how long to play (bounded run)")
	croupier := fs.String("croupier-token", "croupier-token", "token of a croupier: creates the tables (and acts for the players without -player-token)")
	playerToken := fs.String("player-token", "", "the players' tokens, %s standing for the player's id (e.g. \"%s-token\"; the gateway's token file must hold them: see -write-tokens); empty: the croupier acts for them")
	writeTokens := fs.String("write-tokens", "", "write to this file the token file of -write-tokens-from with a player token (-player-token) for each player of the run (-prefix, -tables), and exit")
	tokensFrom := fs.String("write-tokens-from", "deploy/local/tokens.yaml", "the token file -write-tokens starts from")
	operator := fs.String("operator-token", "operator-token", "token of an operator: funds the players")
	prefix := fs.String("prefix", "load-"+strconv.FormatInt(time.Now().Unix(), 36), "prefix of the players' and requests' ids")
	attempts := fs.Int("max-attempts", defaultAttempts, "attempts of a call that fails UNAVAILABLE or DEADLINE_EXCEEDED, the first included, all with the same request id (1..20)")
	callTimeout := fs.Duration("call-timeout", defaultCallTimeout, "deadline of each call (a call past it is retried)")
	noop := fs.Duration("noop", 3*time.Second, "how long to measure the no-op RPC (GetCaller) before playing; 0: not measured")
	metricsURLs := fs.String("metrics", "", "comma-separated /metrics URLs (chemmy run -metrics, or each service's): fsyncs and CPU per coup")
	idle := fs.Bool("idle", false, "seat two players at each of -tables tables and play nothing: their bank offers time out every -idle-offer; report the fsyncs and CPU per second (with -metrics) for -duration")
	pace := fs.Duration("pace", 0, "human pace: each table starts a coup every `pace` (±10%, open loop; e.g. 60s) instead of playing as fast as it can; the report gives every action's p50/p99 and the CPU per live table")
	watchers := fs.Int("watchers", 0, "WatchTable streams to hold open as the croupier while playing (on the run's tables in turn), each watching again when it ends; the report says how they ended (a rolling update of the gateways: ended GATEWAY_DRAINING, none broken)")
	idleOffer := fs.Duration("idle-offer", 30*time.Second, "with -idle: the tables' bank offer time limit (bank_offer_time_limit_ms); N tables at offer d cost as N*30s/d tables at the default 30 s")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *tables < 1 || *tables > 100000 || (!*idle && *tables > 1000) || *idleOffer < time.Second || *idleOffer > 10*time.Minute || *duration <= 0 || *duration > time.Hour || *attempts < 1 || *attempts > 20 || *callTimeout <= 0 ||
		*noop < 0 || *noop > time.Minute || *pace < 0 || *watchers < 0 || *watchers > 10000 || (*pace > 0 && *pace < 100*time.Millisecond) || *pace > time.Hour {
		fmt.Fprintln(stderr, "chemmy load: -tables must be 1..1000 (1..100000 with -idle), -idle-offer 1s..10m, -duration at most 1h, -max-attempts 1..20, -call-timeout positive, -noop 0..1m, -watchers 0..10000 and -pace 0 or 100ms..1h")
		return 2
	}
	if *playerToken != "" && strings.Count(*playerToken, "%s") != 1 {
		fmt.Fprintf(stderr, "chemmy load: -player-token must hold %%s once\n")
		return 2
	}
	if *writeTokens != "" {
		if *playerToken == "" {
			fmt.Fprintln(stderr, "chemmy load: -write-tokens needs -player-token")
			return 2
		}
		if err := writePlayerTokens(*writeTokens, *tokensFrom, *prefix, *tables, *playerToken); err != nil {
			fmt.Fprintln(stderr, "chemmy load:", err)
			return 1
		}
		return 0
	}
	cc, err := grpc.NewClient(*gw, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintln(stderr, "chemmy load:", err)
		return 1
	}
	defer cc.Close()
	l := &loader{
		table: tablev1.NewTableServiceClient(cc), wallet: walletv1.NewWalletServiceClient(cc),
		croupier: *croupier, operator: *operator, prefix: *prefix, playerTokenFormat: *playerToken,
		retry: retryPolicy{attempts: *attempts, timeout: *callTimeout, base: 50 * time.Millisecond, max: 2 * time.Second},
		pace:  *pace,
	}
	var urls []string
	for _, u := range strings.Split(*metricsURLs, ",") {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	// The no-op hops: the gateway's GetCaller (a client hop, answered by
	// the gateway), and the wallet's GetCurrency through it (a client hop
	// and an internal one, with the same mTLS and assertion).
	var bound, forwarded noopResult
	if *noop > 0 && !*idle {
		gwc := gatewayv1.NewGatewayServiceClient(cc)
		bound = l.measureNoop(*tables, *noop, urls, func(ctx context.Context) error {
			_, err := gwc.GetCaller(l.as(ctx, l.croupier), &gatewayv1.GetCallerRequest{})
			return err
		})
		if bound.err == nil && len(urls) > 0 {
			forwarded = l.measureNoop(*tables, *noop, urls, func(ctx context.Context) error {
				_, err := l.wallet.GetCurrency(l.as(ctx, l.croupier), &walletv1.GetCurrencyRequest{})
				return err
			})
			bound.err = forwarded.err
		}
		if bound.err != nil {
			fmt.Fprintln(stderr, "chemmy load: no-op:", bound.err)
			return 1
		}
	}
	if *idle {
		return l.idle(*tables, *idleOffer, *duration, urls, stdout, stderr)
	}
	// The tables are set up first, at most setupConcurrency at once (a
	// table's setup creates its shoe), outside the measured window.
	setupStart := time.Now()
	runs := make([]*tableRun, *tables)
	var wg sync.WaitGroup
	sem := make(chan struct{}, setupConcurrency)
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			runs[i] = l.setUp(i)
		}()
	}
	wg.Wait()
	fmt.Fprintf(stdout, "set up %d tables in %s (%d at once; not in the figures below)\n", *tables,
		time.Since(setupStart).Round(time.Millisecond), setupConcurrency)
	before, err := scrapeAll(urls)
	if err != nil {
		fmt.Fprintln(stderr, "chemmy load: metrics:", err)
		return 1
	}
	cpu0 := selfCPU()
	ctx, cancel := context.WithTimeout(context.Background(), *duration)
	defer cancel()
	start := time.Now()
	var watched watchStats
	var watching sync.WaitGroup
	if *watchers > 0 {
		var ids []string
		for _, r := range runs {
			if r.res.err == nil {
				ids = append(ids, r.tid)
			}
		}
		for w := range *watchers {
			if len(ids) == 0 {
				break
			}
			watching.Add(1)
			go func() {
				defer watching.Done()
				l.watch(ctx, ids[w%len(ids)], &watched)
			}()
		}
	}
	results := make([]tableResult, *tables)
	for i := range results {
		if runs[i].res.err != nil {
			results[i] = runs[i].res
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = l.playOn(ctx, runs[i])
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cancel()
	watching.Wait()
	clientCPU := selfCPU() - cpu0
	after, err := scrapeAll(urls)
	if err != nil {
		fmt.Fprintln(stderr, "chemmy load: metrics:", err)
		return 1
	}
	var coups, gaveUp, rpcs int
	var bets []time.Duration
	var firstErr error
	var retries retryCount
	aborted := 0
	for _, r := range results {
		coups += r.coups
		aborted += r.aborted
		rpcs += r.rpcs
		bets = append(bets, r.actions["PlaceBet"]...)
		retries.add(r.retries)
		if r.err != nil {
			gaveUp++
		}
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
	fmt.Fprintf(stdout, "retries: %d (UNAVAILABLE %d, DEADLINE_EXCEEDED %d), same request ids; moves made again after ABORTED: %d; tables given up: %d\n",
		retries.total(), retries.unavailable, retries.deadline, aborted, gaveUp)
	if *watchers > 0 {
		fmt.Fprintln(stdout, watched.report(*watchers))
	}
	if *pace > 0 {
		reportPace(stdout, *pace, *tables, elapsed, results)
	}
	perCoup := func(v float64) float64 {
		if coups == 0 {
			return 0
		}
		return v / float64(coups)
	}
	rpcsPerCoup := perCoup(float64(rpcs))
	fmt.Fprintf(stdout, "client RPCs per coup: %.2f\n", rpcsPerCoup)
	var d delta
	if len(urls) > 0 {
		reportMetrics(stdout, urls, before, after, perCoup)
		d = deltaOf(before, after)
		fmt.Fprintf(stdout, "internal RPCs per coup: %.2f (%s)\n", perCoup(d.internal()), d.internalParts(perCoup))
		fmt.Fprintf(stdout, "events per coup: %.2f (%s)\n", perCoup(d.sum(d.published)), d.parts(d.published, perCoup))
		fmt.Fprintf(stdout, "stored event bytes per coup: %.0f\n", perCoup(d.streamBytes))
		fmt.Fprintf(stdout, "durable writes per coup: %.2f (%s; store writer calls)\n", perCoup(d.sum(d.writes)), d.parts(d.writes, perCoup))
		fmt.Fprintf(stdout, "allocated bytes per coup: %.0f\n", perCoup(d.alloc))
		if *pace > 0 {
			perTable := d.cpu / float64(*tables) / elapsed.Seconds()
			fmt.Fprintf(stdout, "CPU per live table: %.3f ms per second (%.1f%% of a core per 100 tables; %.0f tables per core)\n",
				1000*perTable, 100*100*perTable, 1/max(perTable, 1e-9))
		}
	}
	fmt.Fprintf(stdout, "CPU per coup: load client %.2f ms\n", 1000*perCoup(clientCPU.Seconds()))
	if *noop > 0 {
		fmt.Fprintf(stdout, "no-op (gateway GetCaller, %d in flight, %s): %.0f RPC/s, p50 %s, p99 %s\n", *tables, *noop,
			bound.rate, bound.p50.Round(10*time.Microsecond), bound.p99.Round(10*time.Microsecond))
		b := 0.0
		if rpcsPerCoup > 0 {
			b = bound.rate / rpcsPerCoup
		}
		if bound.p99 > 0 {
			fmt.Fprintf(stdout, "PlaceBet p99 / no-op p99: %.1f\n", float64(pct(0.99))/float64(bound.p99))
		}
		fmt.Fprintf(stdout, "transport bound: %.1f coups/s (no-op rate / client RPCs per coup)\n", b)
		ratio := 0.0
		if b > 0 {
			ratio = float64(coups) / elapsed.Seconds() / b
		}
		fmt.Fprintf(stdout, "ratio to the bound: %.0f%%\n", 100*ratio)
		if len(urls) > 0 && coups > 0 {
			// The floor: the hops the coup made, each at the CPU of a
			// no-op hop of its kind measured above.
			clientHop := bound.cpuPerCall
			internalHop := max(0, forwarded.cpuPerCall-bound.cpuPerCall)
			floor := rpcsPerCoup*clientHop + perCoup(d.internal())*internalHop
			cpu := perCoup(d.cpu)
			fmt.Fprintf(stdout, "no-op hop CPU: client %.3f ms, internal %.3f ms (GetCaller %.3f, GetCurrency through the gateway %.3f)\n",
				1000*clientHop, 1000*internalHop, 1000*bound.cpuPerCall, 1000*forwarded.cpuPerCall)
			r := 0.0
			if floor > 0 {
				r = cpu / floor
			}
			fmt.Fprintf(stdout, "cpu per coup / transport floor: %.1f (cpu %.2f ms, floor %.2f ms)\n", r, 1000*cpu, 1000*floor)
		}
	}
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
	// playerTokenFormat gives a player's token (%s: his id); empty: the
	// croupier's acts for him.
	playerTokenFormat string
	retry             retryPolicy
	// pace, when not zero, is how often each table starts a coup (-pace).
	pace time.Duration
	// stopAt, when not zero, stops every table once played (shared by
	// them) reaches it (the benchmark).
	played *atomic.Int64
	stopAt int64
}

type tableResult struct {
	coups int
	rpcs  int // calls made while playing (each attempt of a retried call)
	// actions: every move's latency by its RPC ("PlaceBet", "GetTable"...),
	// retries included.
	actions map[string][]time.Duration
	retries retryCount
	// aborted counts the moves made again with a new request id after an
	// ABORTED answer (at most maxAborted per table).
	aborted int
	err     error
}

// maxAborted bounds the ABORTED answers a table takes before it gives up.
const maxAborted = 8

// Defaults of the retry flags.
const (
	defaultAttempts    = 8
	defaultCallTimeout = 10 * time.Second
)

// retryPolicy bounds the retries of one call: attempts in all (the first
// included), each with timeout; between two a backoff of base doubling
// up to max, with up to 50% jitter.
type retryPolicy struct {
	attempts  int
	timeout   time.Duration
	base, max time.Duration
	sleep     func(time.Duration)               // time.Sleep when nil (tests)
	jitter    func(time.Duration) time.Duration // d/2 + up to d/2 at random when nil
}

// retryCount counts retries by the code that caused them.
type retryCount struct{ unavailable, deadline int }

func (c *retryCount) add(o retryCount) { c.unavailable += o.unavailable; c.deadline += o.deadline }
func (c retryCount) total() int        { return c.unavailable + c.deadline }

// backoff is the pause before retry n (1 for the first retry).
func (p retryPolicy) backoff(n int) time.Duration {
	d := p.base
	for i := 1; i < n && d < p.max; i++ {
		d *= 2
	}
	d = min(d, p.max)
	if p.jitter != nil {
		return p.jitter(d)
	}
	return d/2 + rand.N(d/2+1)
}

// retryCall runs call (which must send the same request, request id
// included, each time) until it succeeds, fails with a code that is not
// UNAVAILABLE or DEADLINE_EXCEEDED, or has been tried p.attempts times;
// each retry is counted in c.
func retryCall[R any](p retryPolicy, c *retryCount, call func(ctx context.Context) (R, error)) (R, error) {
	sleep := p.sleep
	if sleep == nil {
		sleep = time.Sleep
	}
	for n := 1; ; n++ {
		ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
		r, err := call(ctx)
		cancel()
		code := status.Code(err)
		if err == nil || n >= max(p.attempts, 1) || (code != codes.Unavailable && code != codes.DeadlineExceeded) {
			if err != nil && n > 1 {
				err = fmt.Errorf("after %d attempts: %w", n, err)
			}
			return r, err
		}
		if code == codes.Unavailable {
			c.unavailable++
		} else {
			c.deadline++
		}
		sleep(p.backoff(n))
	}
}

func (l *loader) as(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
}

// play runs one table until ctx ends: three players, a bank of 1000, the
// punters covering it, decisions answered "draw".
func (l *loader) play(ctx context.Context, n int) tableResult {
	r := l.setUp(n)
	if r.res.err != nil {
		return r.res
	}
	return l.playOn(ctx, r)
}

// tableRun is one table of a run: its ids, the table as last answered,
// and what its setup did.
type tableRun struct {
	id, tid string
	seq     int
	tbl     *tablev1.Table
	res     tableResult
}

// rid is the run's next request id.
func (r *tableRun) rid() string { r.seq++; return r.id + "-r" + strconv.Itoa(r.seq) }

// setUp funds table n's players, creates the table and seats them; a
// failure is in the run's res.err. Each call finishes even when the
// run's time is up; a call is retried with its request as built once
// (same request id).
func (l *loader) setUp(n int) *tableRun {
	run := &tableRun{id: l.prefix + "-" + strconv.Itoa(n)}
	res, rid := &run.res, run.rid
	players := tablePlayers(l.prefix, n)
	for _, p := range players {
		req := &walletv1.DepositRequest{RequestId: rid(), AccountId: "player:" + p, Amount: 1 << 40}
		if _, err := retryCall(l.retry, &res.retries, func(ctx context.Context) (*walletv1.DepositResponse, error) {
			return l.wallet.Deposit(l.as(ctx, l.operator), req)
		}); err != nil {
			res.err = err
			return run
		}
	}
	createReq := &tablev1.CreateTableRequest{RequestId: rid()}
	created, err := retryCall(l.retry, &res.retries, func(ctx context.Context) (*tablev1.CreateTableResponse, error) {
		return l.table.CreateTable(l.as(ctx, l.croupier), createReq)
	})
	if err != nil {
		res.err = err
		return run
	}
	run.tid = created.GetTable().GetTableId()
	for _, p := range players {
		req := &tablev1.JoinTableRequest{RequestId: rid(), TableId: run.tid, PlayerId: p}
		resp, err := retryCall(l.retry, &res.retries, func(ctx context.Context) (*tablev1.JoinTableResponse, error) {
			return l.table.JoinTable(l.as(ctx, l.playerToken(p)), req)
		})
		if err != nil {
			res.err = err
			return run
		}
		run.tbl = resp.GetTable()
	}
	return run
}

// playOn plays the table set up in run until ctx is done (or the
// benchmark's stopAt). Its result counts the setup's retries too.
func (l *loader) playOn(ctx context.Context, run *tableRun) (res tableResult) {
	res.retries = run.res.retries
	res.actions = map[string][]time.Duration{}
	rid, tid, tbl := run.rid, run.tid, run.tbl
	played := tbl.GetCoupsPlayed()
	// With a pace, the table starts a coup every pace (±10%), its first
	// at a random time within the first pace, and plays it through; it
	// waits for the next start once the coup is over (open loop).
	slot, slotCoups := time.Now(), played
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	if l.pace > 0 {
		slot = slot.Add(time.Duration(rng.Int64N(int64(l.pace))))
		if !sleepUntil(ctx, slot) {
			return
		}
	}
	for ctx.Err() == nil {
		if l.pace > 0 && tbl.GetCoupsPlayed() > slotCoups {
			slot = slot.Add(l.pace - l.pace/10 + time.Duration(rng.Int64N(int64(l.pace/5)+1)))
			slotCoups = tbl.GetCoupsPlayed()
			if !sleepUntil(ctx, slot) {
				return
			}
		}
		var err error
		calls := res.retries.total()
		t0, action := time.Now(), ""
		switch tbl.GetState() {
		case tablev1.TableState_TABLE_STATE_OFFERING_BANK:
			req := &tablev1.AcceptBankRequest{RequestId: rid(), TableId: tid, PlayerId: tbl.GetOfferedPlayerId(), Amount: 1000}
			var r *tablev1.AcceptBankResponse
			action = "AcceptBank"
			r, err = retryCall(l.retry, &res.retries, func(ctx context.Context) (*tablev1.AcceptBankResponse, error) {
				return l.table.AcceptBank(l.as(ctx, l.playerToken(req.PlayerId)), req)
			})
			tbl = r.GetTable()
		case tablev1.TableState_TABLE_STATE_BETTING:
			cp := tbl.GetCoup()
			req := &tablev1.PlaceBetRequest{RequestId: rid(), TableId: tid, PlayerId: cp.GetTurnPlayerId(), Amount: cp.GetUncovered()}
			var r *tablev1.PlaceBetResponse
			action = "PlaceBet"
			r, err = retryCall(l.retry, &res.retries, func(ctx context.Context) (*tablev1.PlaceBetResponse, error) {
				return l.table.PlaceBet(l.as(ctx, l.playerToken(req.PlayerId)), req)
			})
			tbl = r.GetTable()
		case tablev1.TableState_TABLE_STATE_DECISION:
			req := &tablev1.DecideDrawRequest{RequestId: rid(), TableId: tid, PlayerId: tbl.GetCoup().GetDecisionPlayerId(), Choice: tablev1.DrawChoice_DRAW_CHOICE_DRAW}
			var r *tablev1.DecideDrawResponse
			action = "DecideDraw"
			r, err = retryCall(l.retry, &res.retries, func(ctx context.Context) (*tablev1.DecideDrawResponse, error) {
				return l.table.DecideDraw(l.as(ctx, l.playerToken(req.PlayerId)), req)
			})
			tbl = r.GetTable()
		default:
			var r *tablev1.GetTableResponse
			time.Sleep(10 * time.Millisecond)
			t0, action = time.Now(), "GetTable"
			r, err = retryCall(l.retry, &res.retries, func(ctx context.Context) (*tablev1.GetTableResponse, error) {
				return l.table.GetTable(l.as(ctx, l.croupier), &tablev1.GetTableRequest{TableId: tid})
			})
			tbl = r.GetTable()
		}
		res.actions[action] = append(res.actions[action], time.Since(t0))
		res.rpcs += 1 + res.retries.total() - calls
		if status.Code(err) == codes.Aborted && res.aborted < maxAborted {
			// The request was cut off and rolled back (table-svc stopped
			// in the middle of it): its request id is spent; the move is
			// made again, with a new one, on the table as it now stands.
			res.aborted++
			var r *tablev1.GetTableResponse
			r, err = retryCall(l.retry, &res.retries, func(ctx context.Context) (*tablev1.GetTableResponse, error) {
				return l.table.GetTable(l.as(ctx, l.croupier), &tablev1.GetTableRequest{TableId: tid})
			})
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
		if l.stopAt > 0 && l.played.Add(tbl.GetCoupsPlayed()-played) >= l.stopAt {
			return
		}
		played = tbl.GetCoupsPlayed()
	}
	return
}

// paceLimit is the latency every action of a human-pace run should stay
// under at p99 (issue 27: the largest number of tables served so).
const paceLimit = 100 * time.Millisecond

// reportPace prints, for a run at a human pace, each action's count,
// p50 and p99, and whether every action's p99 is under paceLimit.
func reportPace(w io.Writer, pace time.Duration, tables int, elapsed time.Duration, results []tableResult) {
	all := map[string][]time.Duration{}
	for _, r := range results {
		for a, lat := range r.actions {
			all[a] = append(all[a], lat...)
		}
	}
	fmt.Fprintf(w, "pace %s (±10%%, open loop): %d tables, %.2f coups/s expected\n", pace, tables, float64(tables)/pace.Seconds())
	var worst time.Duration
	worstName := ""
	for _, a := range slices.Sorted(maps.Keys(all)) {
		lat := all[a]
		slices.Sort(lat)
		at := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
		fmt.Fprintf(w, "  %s: %d calls, p50 %s, p99 %s\n", a, len(lat), at(0.5).Round(10*time.Microsecond), at(0.99).Round(10*time.Microsecond))
		if at(0.99) > worst {
			worst, worstName = at(0.99), a
		}
	}
	verdict := "yes"
	if worst >= paceLimit {
		verdict = "no"
	}
	fmt.Fprintf(w, "every action's p99 under %s: %s (worst %s p99 %s)\n", paceLimit, verdict, worstName, worst.Round(10*time.Microsecond))
}

// sleepUntil waits until t; false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}

// noopResult is the no-op RPC's rate and latency.
type noopResult struct {
	rate     float64
	p50, p99 time.Duration
	// cpuPerCall is the stack's CPU per call, seconds (with -metrics).
	cpuPerCall float64
	err        error
}

// setupConcurrency is how many tables chemmy load sets up at once.
const setupConcurrency = 8

// measureNoop makes call from n clients at once for d; with urls, it
// gives the stack's CPU per call from their scrapes before and after.
func (l *loader) measureNoop(n int, d time.Duration, urls []string, call func(context.Context) error) noopResult {
	before, err := scrapeAll(urls)
	if err != nil {
		return noopResult{err: err}
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	lat := make([][]time.Duration, n)
	var failed atomic.Pointer[error]
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				cctx, ccancel := context.WithTimeout(context.Background(), l.retry.timeout)
				t0 := time.Now()
				err := call(cctx)
				ccancel()
				if err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
				lat[i] = append(lat[i], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if e := failed.Load(); e != nil {
		return noopResult{err: *e}
	}
	all := slices.Concat(lat...)
	if len(all) == 0 {
		return noopResult{err: errors.New("no call completed")}
	}
	slices.Sort(all)
	at := func(p float64) time.Duration { return all[min(len(all)-1, int(p*float64(len(all))))] }
	res := noopResult{rate: float64(len(all)) / elapsed.Seconds(), p50: at(0.5), p99: at(0.99)}
	if len(urls) > 0 {
		after, err := scrapeAll(urls)
		if err != nil {
			return noopResult{err: err}
		}
		res.cpuPerCall = deltaOf(before, after).cpu / float64(len(all))
	}
	return res
}

// selfCPU is the CPU time (user and system) this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func scrapeAll(urls []string) ([]sample, error) {
	out := make([]sample, len(urls))
	for i, u := range urls {
		var err error
		if out[i], err = scrape(context.Background(), u); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// reportMetrics prints the fsyncs (and commits) per coup of each store
// and the CPU per coup of each process, from two scrapes of urls.
func reportMetrics(w io.Writer, urls []string, before, after []sample, perCoup func(float64) float64) {
	reportMetricsPer(w, urls, before, after, perCoup, "coup")
}

// reportMetricsPer is reportMetrics per unit ("coup", "second").
func reportMetricsPer(w io.Writer, urls []string, before, after []sample, perCoup func(float64) float64, unit string) {
	fsyncs, commits := map[string]float64{}, map[string]float64{}
	for i := range urls {
		for db, v := range after[i].fsyncs {
			fsyncs[db] += v - before[i].fsyncs[db]
		}
		for db, v := range after[i].commits {
			commits[db] += v - before[i].commits[db]
		}
	}
	dbs := make([]string, 0, len(fsyncs))
	total := 0.0
	for db, v := range fsyncs {
		dbs = append(dbs, db)
		total += v
	}
	slices.Sort(dbs)
	var parts []string
	for _, db := range dbs {
		parts = append(parts, fmt.Sprintf("%s %.2f (%.2f commits)", db, perCoup(fsyncs[db]), perCoup(commits[db])))
	}
	fmt.Fprintf(w, "fsyncs per %s: %.2f in all; %s\n", unit, perCoup(total), strings.Join(parts, ", "))
	parts = parts[:0]
	for i, u := range urls {
		parts = append(parts, fmt.Sprintf("%s %.2f ms", u, 1000*perCoup(after[i].cpu-before[i].cpu)))
	}
	fmt.Fprintf(w, "CPU per %s (process of each metrics URL): %s\n", unit, strings.Join(parts, ", "))
}

// idle is chemmy load -idle: n tables, each with two of its players
// seated and nobody taking the bank, so that the only work is their bank
// offers timing out every offer (abandon_after_offers at its maximum, so
// they stay open); after setting them up it reports, over d, the fsyncs
// per second of each store and the CPU of each process (with urls).
func (l *loader) idle(n int, offer, d time.Duration, urls []string, stdout, stderr io.Writer) int {
	rules := &tablev1.HouseRules{BankOfferTimeLimitMs: int32(offer / time.Millisecond), AbandonAfterOffers: 1000}
	var next atomic.Int64
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	setupStart := time.Now()
	for range min(n, 32) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n && failed.Load() == nil; i = int(next.Add(1)) - 1 {
				if err := l.seatIdle(i, rules); err != nil {
					failed.CompareAndSwap(nil, &err)
				}
			}
		}()
	}
	wg.Wait()
	if e := failed.Load(); e != nil {
		fmt.Fprintln(stderr, "chemmy load -idle:", *e)
		return 1
	}
	fmt.Fprintf(stdout, "%d idle tables seated in %s; bank offers time out every %s (%.1f timeouts/s: as %.0f tables at the default 30 s)\n",
		n, time.Since(setupStart).Round(time.Millisecond), offer, float64(n)/offer.Seconds(), float64(n)*30/offer.Seconds())
	// The first timeouts of the tables seated first come before the
	// others': measured from one offer time on.
	time.Sleep(offer)
	before, err := scrapeAll(urls)
	if err != nil {
		fmt.Fprintln(stderr, "chemmy load: metrics:", err)
		return 1
	}
	start := time.Now()
	time.Sleep(d)
	after, err := scrapeAll(urls)
	if err != nil {
		fmt.Fprintln(stderr, "chemmy load: metrics:", err)
		return 1
	}
	secs := time.Since(start).Seconds()
	perSecond := func(v float64) float64 { return v / secs }
	fmt.Fprintf(stdout, "idle for %s:\n", time.Duration(secs*float64(time.Second)).Round(time.Millisecond))
	if len(urls) > 0 {
		reportMetricsPer(stdout, urls, before, after, perSecond, "second")
		for i, u := range urls {
			fmt.Fprintf(stdout, "CPU: %s %.1f%% of a core; table events published: %.1f/s\n", u,
				100*perSecond(after[i].cpu-before[i].cpu), perSecond(after[i].published["table"]-before[i].published["table"]))
		}
	}
	return 0
}

// seatIdle opens idle table i: created with rules, two of its players
// seated (the bank is offered to them in turn).
func (l *loader) seatIdle(i int, rules *tablev1.HouseRules) error {
	var rc retryCount
	id := l.prefix + "-" + strconv.Itoa(i)
	created, err := retryCall(l.retry, &rc, func(ctx context.Context) (*tablev1.CreateTableResponse, error) {
		return l.table.CreateTable(l.as(ctx, l.croupier), &tablev1.CreateTableRequest{RequestId: id + "-create", HouseRules: rules})
	})
	if err != nil {
		return err
	}
	for _, p := range tablePlayers(l.prefix, i)[:2] {
		req := &tablev1.JoinTableRequest{RequestId: id + "-join-" + p, TableId: created.GetTable().GetTableId(), PlayerId: p}
		if _, err := retryCall(l.retry, &rc, func(ctx context.Context) (*tablev1.JoinTableResponse, error) {
			return l.table.JoinTable(l.as(ctx, l.playerToken(p)), req)
		}); err != nil {
			return err
		}
	}
	return nil
}

// tablePlayers are the three players of table n of a run.
func tablePlayers(prefix string, n int) []string {
	id := prefix + "-" + strconv.Itoa(n)
	return []string{id + "-a", id + "-b", id + "-c"}
}

// playerToken is the token player p plays with.
func (l *loader) playerToken(p string) string {
	if l.playerTokenFormat == "" {
		return l.croupier
	}
	return fmt.Sprintf(l.playerTokenFormat, p)
}

// writePlayerTokens writes to path the token file from with a player
// token for each player of a run of tables tables (prefix).
func writePlayerTokens(path, from, prefix string, tables int, format string) error {
	base, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.Write(base)
	if len(base) > 0 && base[len(base)-1] != '\n' {
		b.WriteByte('\n')
	}
	for n := range tables {
		for _, p := range tablePlayers(prefix, n) {
			fmt.Fprintf(&b, "  - token: %s\n    subject: %s\n    role: player\n", fmt.Sprintf(format, p), p)
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}
