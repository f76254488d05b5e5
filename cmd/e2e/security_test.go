package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/chemmy/chemmy/cmd/stack"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/natsauth"
	"github.com/chemmy/chemmy/services/kit/trust"
)

// attack is one way of reaching a backend's own port, not through the
// gateway: its credentials and the metadata it sends.
type attack struct {
	name string
	md   func(audience string) metadata.MD
	// code and reason the backend must answer (reason "" for a connection
	// refused before any gRPC status: the TLS handshake).
	code   codes.Code
	reason string
}

func forged(kv ...string) func(string) metadata.MD {
	return func(string) metadata.MD { return metadata.Pairs(kv...) }
}

// TestBackendsTrustCryptographyNotTheNetwork starts the suite as in
// production (mutual TLS, signed caller assertions) and tries, against
// each backend's own port, to mint money, deal from a shoe and act for a
// player: plaintext, a certificate from another CA, forged identity
// headers with and without a valid certificate, expired, wrong-audience,
// tampered and foreign-signed assertions, and an assertion relayed by a
// service other than the gateway. Each fails with a clear status, and the
// ledger is unchanged.
func TestBackendsTrustCryptographyNotTheNetwork(t *testing.T) {
	st := startStack(t)
	c := dial(t, st.GatewayAddr)
	c.fund(t, 1000, "alice", "bob")
	tableID := playableTable(t, c)
	auditBefore := audit(t, c)

	load := func(cfg trust.Config) *trust.Material {
		m, err := trust.Load(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	gw := load(st.PKI.Config(trust.Gateway))
	tableSvc := load(st.PKI.Config(trust.Table))
	other, err := trust.NewDevPKI(t.TempDir(), trust.Gateway)
	if err != nil {
		t.Fatal(err)
	}
	foreign := load(other.Config(trust.Gateway))
	// A client that trusts the suite's CA (so it gets as far as the server
	// checking it) but presents a certificate of another CA.
	foreignCert := other.Config(trust.Gateway)
	foreignCert.CAFile = st.PKI.CAFile
	impostor := load(foreignCert)

	operator := auth.Caller{Subject: "mallory", Role: auth.RoleOperator}
	assertion := func(m *trust.Material, now func() time.Time, aud string) string {
		a, err := trust.NewSigner(m, now).Assert(operator, aud)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	signed := func(m *trust.Material, now func() time.Time, aud func(string) string) func(string) metadata.MD {
		return func(target string) metadata.MD {
			return metadata.Pairs(trust.MDAssertion, assertion(m, now, aud(target)))
		}
	}
	same := func(a string) string { return a }
	elsewhere := func(a string) string {
		if a == trust.Wallet {
			return trust.Shoe
		}
		return trust.Wallet
	}
	past := func() time.Time { return time.Now().Add(-time.Minute) }
	tampered := func(target string) metadata.MD {
		// A player's assertion with its role claim rewritten to operator:
		// the signature no longer matches.
		a, err := trust.NewSigner(gw, nil).Assert(auth.Caller{Subject: "alice", Role: auth.RolePlayer}, target)
		if err != nil {
			t.Fatal(err)
		}
		claims := jwtPart(t, a, 1)
		claims["chemmy_role"] = "operator"
		return metadata.Pairs(trust.MDAssertion, withJWTPart(t, a, 1, claims))
	}
	headers := forged(auth.MDSubject, "mallory", auth.MDRole, "operator")

	attacks := []attack{
		{"plaintext with forged headers", headers, codes.Unavailable, ""},
		{"certificate from another CA", headers, codes.Unavailable, ""},
		{"gateway certificate, forged headers, no assertion", headers, codes.PermissionDenied, auth.ReasonPeerNotAllowed},
		{"gateway certificate, expired assertion", signed(gw, past, same), codes.Unauthenticated, auth.ReasonAssertionExpired},
		{"gateway certificate, assertion for another service", signed(gw, nil, elsewhere), codes.Unauthenticated, auth.ReasonAssertionInvalid},
		{"gateway certificate, tampered assertion", tampered, codes.Unauthenticated, auth.ReasonAssertionInvalid},
		{"gateway certificate, assertion signed by another CA's gateway", signed(foreign, nil, same), codes.Unauthenticated, auth.ReasonAssertionInvalid},
		{"table-svc certificate relaying a valid assertion", signed(gw, nil, same), codes.PermissionDenied, auth.ReasonPeerNotAllowed},
	}
	backends := []struct {
		name, addr string
		call       func(ctx context.Context, cc *grpc.ClientConn) error
	}{
		{trust.Wallet, st.WalletAddr, func(ctx context.Context, cc *grpc.ClientConn) error {
			_, err := walletv1.NewWalletServiceClient(cc).Deposit(ctx, &walletv1.DepositRequest{
				RequestId: "mint", AccountId: "player:mallory", Amount: 1_000_000})
			return err
		}},
		{trust.Shoe, st.ShoeAddr, func(ctx context.Context, cc *grpc.ClientConn) error {
			tb, err := c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: tableID})
			if err != nil {
				return err
			}
			_, err = shoev1.NewShoeServiceClient(cc).DealCard(ctx, &shoev1.DealCardRequest{
				RequestId: "peek", ShoeId: tb.GetTable().GetShoeId()})
			return err
		}},
		{trust.Table, st.TableAddr, func(ctx context.Context, cc *grpc.ClientConn) error {
			_, err := tablev1.NewTableServiceClient(cc).DeclineBet(ctx, &tablev1.DeclineBetRequest{
				RequestId: "decline", TableId: tableID, PlayerId: "bob"})
			return err
		}},
	}
	for _, be := range backends {
		for i, a := range attacks {
			var creds grpc.DialOption
			switch {
			case i == 0:
				creds = (*trust.Material)(nil).DialOption(be.name)
			case i == 1:
				creds = impostor.DialOption(be.name)
			case strings.HasPrefix(a.name, "table-svc"):
				creds = tableSvc.DialOption(be.name)
			default:
				creds = gw.DialOption(be.name)
			}
			cc, err := grpc.NewClient(be.addr, creds)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err = be.call(metadata.NewOutgoingContext(ctx, a.md(be.name)), cc)
			cancel()
			_ = cc.Close()
			if status.Code(err) != a.code || errs.Reason(err) != a.reason {
				t.Errorf("%s, %s: %v (reason %q), want %v %q", be.name, a.name, err, errs.Reason(err), a.code, a.reason)
			}
		}
	}
	if got := audit(t, c); got != auditBefore {
		t.Errorf("ledger changed by refused attempts: %s, was %s", got, auditBefore)
	}
	servicesActingAsOthers(t, st, c, auditBefore)
	tb, err := c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: tableID})
	if err != nil || tb.GetTable().GetState() != tablev1.TableState_TABLE_STATE_BETTING {
		t.Errorf("table after the attempts: %v, %v", tb.GetTable().GetState(), err)
	}

	// The control: the same call with the gateway's certificate and a
	// valid assertion for an auditor is answered, so the refusals above
	// are the checks and not a broken connection.
	cc, err := grpc.NewClient(st.WalletAddr, gw.DialOption(trust.Wallet))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	a, err := trust.NewSigner(gw, nil).Assert(auth.Caller{Subject: "auditor-1", Role: auth.RoleAuditor}, trust.Wallet)
	if err != nil {
		t.Fatal(err)
	}
	ctx := metadata.AppendToOutgoingContext(context.Background(), trust.MDAssertion, a)
	if _, err := walletv1.NewWalletServiceClient(cc).AuditLedger(ctx, &walletv1.AuditLedgerRequest{}); err != nil {
		t.Errorf("a valid assertion was refused: %v", err)
	}
}

// servicesActingAsOthers: a chemmy service's own certificate gives it the
// role "service" on the backends that serve it, and nothing more. table-svc
// with forged operator headers is still table-svc, whose role may not
// Deposit; shoe-svc may not call wallet-svc at all, with or without forged
// headers. Each attempt moves nothing: the ledger's audit and alice's
// account (balance and holds) are as before.
func servicesActingAsOthers(t *testing.T, st *stack.Stack, c *client, auditBefore string) {
	t.Helper()
	headers := metadata.Pairs(auth.MDSubject, "mallory", auth.MDRole, string(auth.RoleOperator))
	deposit := func(ctx context.Context, wc walletv1.WalletServiceClient) error {
		_, err := wc.Deposit(ctx, &walletv1.DepositRequest{RequestId: "mint-" + t.Name(), AccountId: "player:mallory", Amount: 1_000_000})
		return err
	}
	hold := func(ctx context.Context, wc walletv1.WalletServiceClient) error {
		_, err := wc.PlaceHold(ctx, &walletv1.PlaceHoldRequest{RequestId: "hold-" + t.Name(), AccountId: "player:alice", Amount: 900, Reference: "no-coup"})
		return err
	}
	account := func() string {
		resp, err := c.wallet.GetAccount(as(t, "operator"), &walletv1.GetAccountRequest{AccountId: "player:alice"})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetAccount().String()
	}
	accountBefore := account()
	for _, a := range []struct {
		name, cert string
		md         metadata.MD
		call       func(context.Context, walletv1.WalletServiceClient) error
		reason     string
	}{
		{"table-svc certificate, forged operator headers, Deposit", trust.Table, headers, deposit, "ROLE_NOT_ALLOWED"},
		{"shoe-svc certificate on its own behalf, PlaceHold", trust.Shoe, nil, hold, auth.ReasonPeerNotAllowed},
		{"shoe-svc certificate on its own behalf, Deposit", trust.Shoe, nil, deposit, auth.ReasonPeerNotAllowed},
		{"shoe-svc certificate, forged operator headers, Deposit", trust.Shoe, headers, deposit, auth.ReasonPeerNotAllowed},
	} {
		m, err := trust.Load(st.PKI.Config(a.cert))
		if err != nil {
			t.Fatal(err)
		}
		cc, err := grpc.NewClient(st.WalletAddr, m.DialOption(trust.Wallet))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(context.Background(), a.md), 10*time.Second)
		err = a.call(ctx, walletv1.NewWalletServiceClient(cc))
		cancel()
		_ = cc.Close()
		if status.Code(err) != codes.PermissionDenied || errs.Reason(err) != a.reason {
			t.Errorf("%s: %v (reason %q), want PERMISSION_DENIED %s", a.name, err, errs.Reason(err), a.reason)
		}
		if got := audit(t, c); got != auditBefore {
			t.Errorf("%s: the ledger changed: %s, was %s", a.name, got, auditBefore)
		}
		if got := account(); got != accountBefore {
			t.Errorf("%s: alice's account changed: %s, was %s", a.name, got, accountBefore)
		}
	}
}

// playableTable opens a table where alice banks 100 and it is bob's turn
// to bet.
func playableTable(t *testing.T, c *client) string {
	t.Helper()
	resp, err := c.table.CreateTable(as(t, "croupier"), &tablev1.CreateTableRequest{RequestId: t.Name() + "/create"})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetTable().GetTableId()
	for _, p := range []string{"alice", "bob"} {
		if _, err := c.table.JoinTable(as(t, p), &tablev1.JoinTableRequest{RequestId: t.Name() + "/join/" + p, TableId: id, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.table.AcceptBank(as(t, "alice"), &tablev1.AcceptBankRequest{RequestId: t.Name() + "/bank", TableId: id, PlayerId: "alice", Amount: 100}); err != nil {
		t.Fatal(err)
	}
	return id
}

// audit is the wallet's AuditLedger answer (balanced, totals, last
// transfer) as text, without its time.
func audit(t *testing.T, c *client) string {
	t.Helper()
	resp, err := c.wallet.AuditLedger(as(t, "auditor"), &walletv1.AuditLedgerRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.GetBalanced() {
		t.Fatalf("ledger out of balance: %v", resp)
	}
	resp.AuditTime = nil
	return resp.String()
}

// TestNATSPermissions: on the stack's NATS a connection without
// credentials is refused, each service may publish only its own
// subjects, and the reader may publish nothing.
func TestNATSPermissions(t *testing.T) {
	st := startStack(t)
	if nc, err := nats.Connect(st.NATSURL, nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Fatal("NATS accepted a connection without credentials")
	}
	cases := []struct {
		user, subject string
		allowed       bool
	}{
		{natsauth.Wallet, "chemmy.wallet.x.deposited", true},
		{natsauth.Wallet, "chemmy.table.t1.coup_settled", false},
		{natsauth.Shoe, "chemmy.wallet.x.deposited", false},
		{natsauth.Table, "chemmy.shoe.s1.card_dealt", false},
		{natsauth.Reader, "chemmy.table.t1.coup_settled", false},
		// The reader ends nobody's WatchTable.
		{natsauth.Reader, "$JS.API.CONSUMER.DELETE.CHEMMY.watch_01ANY", false},
	}
	for _, tc := range cases {
		key, err := nats.NkeyOptionFromSeed(st.NATSKeys.SeedFile(tc.user))
		if err != nil {
			t.Fatal(err)
		}
		errc := make(chan error, 1)
		nc, err := nats.Connect(st.NATSURL, key, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case errc <- err:
			default:
			}
		}))
		if err != nil {
			t.Fatalf("%s: %v", tc.user, err)
		}
		if err := nc.Publish(tc.subject, []byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		var perr error
		select {
		case perr = <-errc:
		case <-time.After(time.Second):
		}
		nc.Close()
		denied := perr != nil && strings.Contains(strings.ToLower(perr.Error()), "permissions violation")
		if denied == tc.allowed {
			t.Errorf("%s publishing %s: error %v, allowed %v", tc.user, tc.subject, perr, tc.allowed)
		}
	}
}

// TestNATSReaderReadsNoReplies: the reader may not subscribe to the
// services' inboxes (their JetStream replies name, e.g., the consumers of
// players' watches).
func TestNATSReaderReadsNoReplies(t *testing.T) {
	st := startStack(t)
	key, err := nats.NkeyOptionFromSeed(st.NATSKeys.SeedFile(natsauth.Reader))
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 4)
	nc, err := nats.Connect(st.NATSURL, key, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case errc <- err:
		default:
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	for _, subj := range []string{"_INBOX.>", natsauth.InboxPrefix(natsauth.Table) + ".>"} {
		if _, err := nc.SubscribeSync(subj); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-errc:
			if !strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
				t.Errorf("subscribe %s: %v", subj, err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("the reader subscribed to %s", subj)
		}
	}
}
