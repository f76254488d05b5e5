package tablesvc

import (
	"context"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/trust"
	"github.com/chemmy/chemmy/shoe-svc/shoesvc"
	"github.com/chemmy/chemmy/wallet-svc/walletsvc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// devMode: the harness's services believe identity metadata, so tests
// can act as any caller (the mutual TLS path is tested end to end in
// cmd/e2e).
var devMode = trust.Config{Insecure: true}

// harness runs real shoe-svc, wallet-svc and table-svc in process on
// random ports with temporary bbolt files (no NATS: events stay in the
// outbox, which the tests read).
type harness struct {
	t       *testing.T
	dir     string
	shoeSvc *shoesvc.Service
	wallet  *walletsvc.Service
	table   *Service
	conns   []*grpc.ClientConn

	clock *fakeClock

	tables  tablev1.TableServiceClient
	wallets walletv1.WalletServiceClient
	shoes   shoev1.ShoeServiceClient
	seq     atomic.Int64
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessWith(t, nil)
}

// newHarnessWith is newHarness with wallet-svc's Config changed by
// wallet (e.g. seamless mode).
func newHarnessWith(t *testing.T, wallet func(*walletsvc.Config)) *harness {
	t.Helper()
	return newHarnessSeeds(t, wallet, nil)
}

// newHarnessSeeds is newHarnessWith whose shoe-svc takes each shoe's
// server seed from serverSeeds (nil: crypto/rand): the tests that play
// whoever runs shoe-svc know them.
func newHarnessSeeds(t *testing.T, wallet func(*walletsvc.Config), serverSeeds func() []byte) *harness {
	t.Helper()
	h := &harness{t: t, dir: t.TempDir(), clock: &fakeClock{now: time.Date(2026, 1, 1, 20, 0, 0, 0, time.UTC)}}
	var err error
	ctx := context.Background()
	sc := shoesvc.Config{ListenAddr: "127.0.0.1:0", DBPath: filepath.Join(h.dir, "shoe.db"), Trust: devMode}
	if serverSeeds == nil {
		h.shoeSvc, err = shoesvc.Start(ctx, sc)
	} else {
		h.shoeSvc, err = shoesvc.StartWithServerSeeds(ctx, sc, serverSeeds)
	}
	if err != nil {
		t.Fatal(err)
	}
	wc := walletsvc.Config{ListenAddr: "127.0.0.1:0", DBPath: filepath.Join(h.dir, "wallet.db"), Trust: devMode}
	if wallet != nil {
		wallet(&wc)
	}
	if h.wallet, err = walletsvc.Start(ctx, wc); err != nil {
		t.Fatal(err)
	}
	h.startTable()
	t.Cleanup(h.stop)
	h.wallets = walletv1.NewWalletServiceClient(h.dial(h.wallet.Addr()))
	h.shoes = shoev1.NewShoeServiceClient(h.dial(h.shoeSvc.Addr()))
	return h
}

func (h *harness) startTable(opts ...grpc.DialOption) {
	h.startTableRetry(20*time.Millisecond, opts...)
}

// startTableRetry starts table-svc with its retry loop every retry
// (negative: none; the test drives recovery itself).
func (h *harness) startTableRetry(retry time.Duration, opts ...grpc.DialOption) {
	h.t.Helper()
	s, err := Start(context.Background(), Config{
		Trust: devMode, DialOptions: opts,
		ListenAddr: "127.0.0.1:0", DBPath: filepath.Join(h.dir, "table.db"),
		ShoeAddr: h.shoeSvc.Addr(), WalletAddr: h.wallet.Addr(), RetryInterval: retry,
		Clock: h.clock.Now,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	h.table = s
	h.tables = tablev1.NewTableServiceClient(h.dial(s.Addr()))
}

// restartTable stops table-svc and starts it again on the same file.
func (h *harness) restartTable() { h.restartTableWith() }

// restartTableWith restarts table-svc with opts on its connections to
// shoe-svc and wallet-svc.
func (h *harness) restartTableWith(opts ...grpc.DialOption) {
	h.t.Helper()
	h.table.Stop()
	if err := h.table.Wait(); err != nil {
		h.t.Fatal(err)
	}
	h.startTable(opts...)
}

func (h *harness) stop() {
	for _, cc := range h.conns {
		_ = cc.Close()
	}
	for _, s := range []interface {
		Stop()
		Wait() error
	}{h.table, h.wallet, h.shoeSvc} {
		s.Stop()
		if err := s.Wait(); err != nil {
			h.t.Errorf("stop: %v", err)
		}
	}
}

func (h *harness) dial(addr string) *grpc.ClientConn {
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		h.t.Fatal(err)
	}
	h.conns = append(h.conns, cc)
	return cc
}

// as is a context acting as who: "op" (operator), "croupier", "auditor",
// or a player id.
func (h *harness) as(who string) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	h.t.Cleanup(cancel)
	switch who {
	case "op":
		return auth.Outgoing(ctx, auth.Caller{Subject: "operator-1", Role: auth.RoleOperator})
	case "croupier":
		return auth.Outgoing(ctx, auth.Caller{Subject: "croupier-1", Role: auth.RoleCroupier})
	case "auditor":
		return auth.Outgoing(ctx, auth.Caller{Subject: "auditor-1", Role: auth.RoleAuditor})
	}
	return auth.Outgoing(ctx, auth.Caller{Subject: who, Role: auth.RolePlayer})
}

// asRole is a context acting as subject with role.
func (h *harness) asRole(subject string, role auth.Role) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	h.t.Cleanup(cancel)
	return auth.Outgoing(ctx, auth.Caller{Subject: subject, Role: role})
}

// rid is a fresh request id.
func (h *harness) rid() string { return "r" + strconv.FormatInt(h.seq.Add(1), 10) }

func (h *harness) fund(amount int64, players ...string) {
	h.t.Helper()
	for _, p := range players {
		if _, err := h.wallets.Deposit(h.as("op"), &walletv1.DepositRequest{RequestId: h.rid(), AccountId: "player:" + p, Amount: amount}); err != nil {
			h.t.Fatal(err)
		}
	}
}

// account returns balance and held of a player (or "house:commission").
func (h *harness) account(id string) (balance, held int64) {
	h.t.Helper()
	resp, err := h.wallets.GetAccount(h.as("op"), &walletv1.GetAccountRequest{AccountId: id})
	if err != nil {
		return 0, 0
	}
	return resp.GetAccount().GetBalance(), resp.GetAccount().GetHeld()
}

// tableWith opens a table whose shoe deals exactly cards (then kings),
// with the cut card cutFromEnd cards from the end, and seats players.
func (h *harness) tableWith(hr *tablev1.HouseRules, cutFromEnd int32, cards []string, players ...string) string {
	h.t.Helper()
	order := append([]string(nil), cards...)
	for len(order) < 40 {
		order = append(order, "KD")
	}
	sh, err := h.shoes.CreateShoeFromOrder(h.as("op"), &shoev1.CreateShoeFromOrderRequest{RequestId: h.rid(), Cards: order, CutCardFromEnd: cutFromEnd, TestShoe: true})
	if err != nil {
		h.t.Fatal(err)
	}
	resp, err := h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: h.rid(), HouseRules: certMoney(hr), ShoeId: sh.GetShoe().GetShoeId()})
	if err != nil {
		h.t.Fatal(err)
	}
	id := resp.GetTable().GetTableId()
	for _, p := range players {
		h.join(id, p)
	}
	return id
}

// shuffledTable opens a chemin de fer table with the default house rules
// on a shuffled shoe (a croupier's CreateTable) and seats players.
func (h *harness) shuffledTable(players ...string) string {
	h.t.Helper()
	resp, err := h.tables.CreateTable(h.as("croupier"), &tablev1.CreateTableRequest{RequestId: h.rid()})
	if err != nil {
		h.t.Fatal(err)
	}
	id := resp.GetTable().GetTableId()
	for _, p := range players {
		h.join(id, p)
	}
	return id
}

// certMoney is hr (nil: the defaults) with certification_real_money on:
// the tests play for money on prepared shoes.
func certMoney(hr *tablev1.HouseRules) *tablev1.HouseRules {
	if hr == nil {
		hr = &tablev1.HouseRules{}
	}
	hr = proto.Clone(hr).(*tablev1.HouseRules)
	hr.CertificationRealMoney = true
	return hr
}

func (h *harness) join(id, p string) {
	h.t.Helper()
	if _, err := h.tables.JoinTable(h.as(p), &tablev1.JoinTableRequest{RequestId: h.rid(), TableId: id, PlayerId: p}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) get(id string) *tablev1.Table {
	h.t.Helper()
	return h.getAs(id, "croupier")
}

// getAs is the table as who sees it ("croupier", "op" or a player).
func (h *harness) getAs(id, who string) *tablev1.Table {
	h.t.Helper()
	resp, err := h.tables.GetTable(h.as(who), &tablev1.GetTableRequest{TableId: id})
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.GetTable()
}

func (h *harness) acceptBank(id, p string, amount int64) *tablev1.Table {
	h.t.Helper()
	resp, err := h.tables.AcceptBank(h.as(p), &tablev1.AcceptBankRequest{RequestId: h.rid(), TableId: id, PlayerId: p, Amount: amount})
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.GetTable()
}

func (h *harness) bet(id, p string, amount int64) (*tablev1.Table, error) {
	resp, err := h.tables.PlaceBet(h.as(p), &tablev1.PlaceBetRequest{RequestId: h.rid(), TableId: id, PlayerId: p, Amount: amount})
	return resp.GetTable(), err
}

func (h *harness) mustBet(id, p string, amount int64) *tablev1.Table {
	h.t.Helper()
	t, err := h.bet(id, p, amount)
	if err != nil {
		h.t.Fatalf("%s bets %d: %v", p, amount, err)
	}
	return t
}

func (h *harness) decide(id, p string, draw bool) (*tablev1.Table, error) {
	ch := tablev1.DrawChoice_DRAW_CHOICE_STAND
	if draw {
		ch = tablev1.DrawChoice_DRAW_CHOICE_DRAW
	}
	resp, err := h.tables.DecideDraw(h.as(p), &tablev1.DecideDrawRequest{RequestId: h.rid(), TableId: id, PlayerId: p, Choice: ch})
	return resp.GetTable(), err
}

func cardCodes(cards []*shoev1.Card) string {
	s := ""
	for i, c := range cards {
		if i > 0 {
			s += " "
		}
		s += c.GetCode()
	}
	return s
}

// conserved checks that the players and the house hold exactly what was
// deposited.
func (h *harness) conserved(deposits int64, accounts ...string) {
	h.t.Helper()
	var total int64
	for _, a := range append(accounts, "house:commission") {
		b, _ := h.account(a)
		total += b
	}
	if total != deposits {
		h.t.Errorf("money not conserved: %d held by players and house, %d deposited", total, deposits)
	}
}

// shoeFromOrder builds a CreateShoeFromOrderRequest of exactly cards.
type shoeFromOrder struct {
	cards []string
	cut   int32
}

func (s shoeFromOrder) req(h *harness) *shoev1.CreateShoeFromOrderRequest {
	return &shoev1.CreateShoeFromOrderRequest{RequestId: h.rid(), Cards: s.cards, CutCardFromEnd: s.cut, TestShoe: true}
}

// fakeClock is the injectable clock of the tests: time moves only when a
// test says so.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// expire runs the table service's timeout pass now, as its loop would.
func (h *harness) expire() { h.table.expireDue(context.Background()) }
