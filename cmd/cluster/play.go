package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/shard"
)

// The staff tokens of WriteTokens.
const (
	CroupierToken = "croupier-token"
	OperatorToken = "operator-token"
	AuditorToken  = "auditor-token"
)

// Stake is what Play deposits for each player, minor units; Bank is the
// bank each banker puts up.
const (
	Stake = 100_000_000
	Bank  = 1000
)

// PlayerToken is the token of player p in WriteTokens's file.
func PlayerToken(p string) string { return p + "-token" }

// Players are the three players of table n of a run with prefix.
func Players(prefix string, n int) []string {
	id := prefix + "-" + strconv.Itoa(n)
	return []string{id + "-a", id + "-b", id + "-c"}
}

// WriteTokens writes a gateway token file at path: the staff tokens
// (CroupierToken, OperatorToken, AuditorToken) and a token
// (PlayerToken) for each player of tables tables of a run with prefix:
// each player plays with his own, as a player must.
func WriteTokens(path, prefix string, tables int) error {
	var b strings.Builder
	b.WriteString("# the local rehearsal's tokens (cmd/cluster): never anywhere else\ntokens:\n")
	entry := func(token, subject, role string) {
		fmt.Fprintf(&b, "  - token: %s\n    subject: %s\n    role: %s\n", token, subject, role)
	}
	entry(CroupierToken, "croupier-1", "croupier")
	entry(OperatorToken, "operator-1", "operator")
	entry(AuditorToken, "auditor-1", "auditor")
	for n := range tables {
		for _, p := range Players(prefix, n) {
			entry(PlayerToken(p), p, "player")
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

// PlayConfig configures Play.
type PlayConfig struct {
	// Gateways: table n plays through gateway n mod len, and a call that
	// fails UNAVAILABLE is tried again through the next one. Required.
	Gateways []string
	// Tables playing at once, one goroutine each; default 16.
	Tables int
	// Prefix of the players' and requests' ids (the token file must hold
	// the players': WriteTokens); required.
	Prefix string
	// CallTimeout bounds each call; default 5s.
	CallTimeout time.Duration
}

// Play is tables playing chemin de fer coups through the gateways as
// fast as they can: at each table three players, each with his own
// token, a bank of Bank, the punters covering it in turn, every decision
// "draw". A call that fails UNAVAILABLE or DEADLINE_EXCEEDED (a shard or
// a gateway down, a call cut) is sent again with the same request id (so
// it is applied once) after a backoff of 50 ms doubling up to 1 s, for as
// long as the run's context lasts: a table whose shard is down waits for
// it. Any other failure stops that table (Err).
type Play struct {
	cfg    PlayConfig
	conns  []*grpc.ClientConn
	tables []*tablePlay
	stop   atomic.Bool
	wg     sync.WaitGroup
	mu     sync.Mutex
	errs   []error // of the tables that stopped on one
}

// tablePlay is one table's client.
type tablePlay struct {
	n       int
	players []string
	id      atomic.Pointer[string]
	coups   atomic.Int64
	rpcs    atomic.Int64
	retries atomic.Int64
	seq     int
}

// StartPlay dials the gateways and starts the tables; they play until
// ctx ends or Stop.
func StartPlay(ctx context.Context, c PlayConfig) (*Play, error) {
	if len(c.Gateways) == 0 || c.Prefix == "" {
		return nil, errors.New("cluster: play: Gateways and Prefix are required")
	}
	if c.Tables == 0 {
		c.Tables = 16
	}
	if c.CallTimeout == 0 {
		c.CallTimeout = 5 * time.Second
	}
	p := &Play{cfg: c}
	for _, g := range c.Gateways {
		cc, err := grpc.NewClient(g, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			p.closeConns()
			return nil, err
		}
		p.conns = append(p.conns, cc)
	}
	for n := range c.Tables {
		t := &tablePlay{n: n, players: Players(c.Prefix, n)}
		p.tables = append(p.tables, t)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			if err := p.play(ctx, t); err != nil {
				p.mu.Lock()
				p.errs = append(p.errs, err)
				p.mu.Unlock()
			}
		}()
	}
	return p, nil
}

func (p *Play) closeConns() {
	for _, cc := range p.conns {
		cc.Close()
	}
}

// Stop asks every table to finish: each plays on until one more coup is
// settled (so none is left with bets in play), then stops. It waits for
// them and returns Err.
func (p *Play) Stop() error {
	p.stop.Store(true)
	p.wg.Wait()
	p.closeConns()
	return p.Err()
}

// Err joins the failures of the tables that have stopped on an error so
// far.
func (p *Play) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return errors.Join(p.errs...)
}

// TableStat is one table's figures so far.
type TableStat struct {
	// ID is the table's id, empty until it is created; Shard is the
	// shard in it.
	ID    string
	Shard int
	// Coups settled at the table, as the driver saw them.
	Coups int64
	// RPCs made (each attempt of a retried call), retries among them.
	RPCs, Retries int64
}

// Stats are every table's figures so far, table n at n.
func (p *Play) Stats() []TableStat {
	out := make([]TableStat, len(p.tables))
	for i, t := range p.tables {
		s := TableStat{Coups: t.coups.Load(), RPCs: t.rpcs.Load(), Retries: t.retries.Load(), Shard: -1}
		if id := t.id.Load(); id != nil {
			s.ID = *id
			s.Shard, _ = shard.Of(*id)
		}
		out[i] = s
	}
	return out
}

// TotalCoups is the coups settled at all the tables of stats.
func TotalCoups(stats []TableStat) int64 {
	var n int64
	for _, s := range stats {
		n += s.Coups
	}
	return n
}

// Accounts are the wallet accounts of the run's players.
func (p *Play) Accounts() []string {
	var out []string
	for _, t := range p.tables {
		for _, pl := range t.players {
			out = append(out, "player:"+pl)
		}
	}
	return out
}

// Deposits is what the run has deposited in all (Stake per player).
func (p *Play) Deposits() int64 { return int64(len(p.tables)) * 3 * Stake }

// call runs f through table t's gateway as the holder of token, with a
// request id (rid) for its request. It retries UNAVAILABLE and
// DEADLINE_EXCEEDED with the same request id (through the next gateway),
// and ABORTED (a request cut off by a crash and rolled back, which asks
// to be sent again) with a new one, until it succeeds, fails otherwise,
// or ctx ends.
func call[R any](ctx context.Context, p *Play, t *tablePlay, token string, f func(ctx context.Context, cc *grpc.ClientConn, rid string) (R, error)) (R, error) {
	backoff := 50 * time.Millisecond
	rid := t.rid(p.cfg.Prefix)
	for attempt := 0; ; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, p.cfg.CallTimeout)
		cctx = metadata.AppendToOutgoingContext(cctx, "authorization", "Bearer "+token)
		r, err := f(cctx, p.conns[(t.n+attempt)%len(p.conns)], rid)
		cancel()
		t.rpcs.Add(1)
		code := status.Code(err)
		if err == nil || (code != codes.Unavailable && code != codes.DeadlineExceeded && code != codes.Aborted) || ctx.Err() != nil {
			return r, err
		}
		if code == codes.Aborted {
			rid = t.rid(p.cfg.Prefix)
		}
		t.retries.Add(1)
		select {
		case <-ctx.Done():
			return r, err
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

func (t *tablePlay) rid(prefix string) string {
	t.seq++
	return prefix + "-" + strconv.Itoa(t.n) + "-r" + strconv.Itoa(t.seq)
}

// play runs table t until ctx ends or, after Stop, one more coup is
// settled.
func (p *Play) play(ctx context.Context, t *tablePlay) error {
	for _, pl := range t.players {
		if _, err := call(ctx, p, t, OperatorToken, func(ctx context.Context, cc *grpc.ClientConn, rid string) (*walletv1.DepositResponse, error) {
			return walletv1.NewWalletServiceClient(cc).Deposit(ctx, &walletv1.DepositRequest{RequestId: rid, AccountId: "player:" + pl, Amount: Stake})
		}); err != nil {
			return fmt.Errorf("table %d: deposit: %w", t.n, err)
		}
	}
	tc := func(cc *grpc.ClientConn) tablev1.TableServiceClient { return tablev1.NewTableServiceClient(cc) }
	created, err := call(ctx, p, t, CroupierToken, func(ctx context.Context, cc *grpc.ClientConn, rid string) (*tablev1.CreateTableResponse, error) {
		return tc(cc).CreateTable(ctx, &tablev1.CreateTableRequest{RequestId: rid})
	})
	if err != nil {
		return fmt.Errorf("table %d: create: %w", t.n, err)
	}
	tid := created.GetTable().GetTableId()
	t.id.Store(&tid)
	var tbl *tablev1.Table
	for _, pl := range t.players {
		r, err := call(ctx, p, t, PlayerToken(pl), func(ctx context.Context, cc *grpc.ClientConn, rid string) (*tablev1.JoinTableResponse, error) {
			return tc(cc).JoinTable(ctx, &tablev1.JoinTableRequest{RequestId: rid, TableId: tid, PlayerId: pl})
		})
		if err != nil {
			return fmt.Errorf("table %s: join: %w", tid, err)
		}
		tbl = r.GetTable()
	}
	played := tbl.GetCoupsPlayed()
	stopAt := int64(-1) // coups played at which to stop, once Stop is asked
	for ctx.Err() == nil {
		if stopAt < 0 && p.stop.Load() {
			stopAt = played + 1
		}
		if stopAt >= 0 && played >= stopAt {
			return nil
		}
		var err error
		switch tbl.GetState() {
		case tablev1.TableState_TABLE_STATE_OFFERING_BANK:
			pl := tbl.GetOfferedPlayerId()
			var r *tablev1.AcceptBankResponse
			r, err = call(ctx, p, t, PlayerToken(pl), func(ctx context.Context, cc *grpc.ClientConn, rid string) (*tablev1.AcceptBankResponse, error) {
				return tc(cc).AcceptBank(ctx, &tablev1.AcceptBankRequest{RequestId: rid, TableId: tid, PlayerId: pl, Amount: Bank})
			})
			tbl = r.GetTable()
		case tablev1.TableState_TABLE_STATE_BETTING:
			pl, amount := tbl.GetCoup().GetTurnPlayerId(), tbl.GetCoup().GetUncovered()
			var r *tablev1.PlaceBetResponse
			r, err = call(ctx, p, t, PlayerToken(pl), func(ctx context.Context, cc *grpc.ClientConn, rid string) (*tablev1.PlaceBetResponse, error) {
				return tc(cc).PlaceBet(ctx, &tablev1.PlaceBetRequest{RequestId: rid, TableId: tid, PlayerId: pl, Amount: amount})
			})
			tbl = r.GetTable()
		case tablev1.TableState_TABLE_STATE_DECISION:
			pl := tbl.GetCoup().GetDecisionPlayerId()
			var r *tablev1.DecideDrawResponse
			r, err = call(ctx, p, t, PlayerToken(pl), func(ctx context.Context, cc *grpc.ClientConn, rid string) (*tablev1.DecideDrawResponse, error) {
				return tc(cc).DecideDraw(ctx, &tablev1.DecideDrawRequest{RequestId: rid, TableId: tid, PlayerId: pl, Choice: tablev1.DrawChoice_DRAW_CHOICE_DRAW})
			})
			tbl = r.GetTable()
		default: // dealing, settling: automatic; look again shortly
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(10 * time.Millisecond):
			}
			var r *tablev1.GetTableResponse
			r, err = call(ctx, p, t, CroupierToken, func(ctx context.Context, cc *grpc.ClientConn, _ string) (*tablev1.GetTableResponse, error) {
				return tc(cc).GetTable(ctx, &tablev1.GetTableRequest{TableId: tid})
			})
			tbl = r.GetTable()
		}
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("table %s: %w", tid, err)
		}
		if tbl == nil {
			return fmt.Errorf("table %s: an empty answer", tid)
		}
		if now := tbl.GetCoupsPlayed(); now > played {
			t.coups.Add(now - played)
			played = now
		}
	}
	return nil
}
