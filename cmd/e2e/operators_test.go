package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	gatewayv1 "github.com/chemmy/chemmy/proto/gen/chemmy/gateway/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// TestOperatorJWTsShareNothing: a stack whose gateway has an operators
// file (no token file, no -jwks) of casino-a and casino-b, each with its
// identity provider (issuer and JWKS file), two table-svc shards. Each
// operator's JWTs are its callers (GetCaller); each operator's croupier
// opens a table and sees only his own in the lobby, the other's is
// NOT_FOUND TABLE_NOT_FOUND; a JWT of casino-a's issuer claiming
// casino-b, and one of an issuer no operator lists, are refused
// UNAUTHENTICATED TOKEN_INVALID; casino-c, added to the file while the
// stack runs, is served from the gateway's next reload on.
func TestOperatorJWTsShareNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	idps := map[string]*idp{"casino-a": newIDP(t, "a1"), "casino-b": newIDP(t, "b1"), "casino-c": newIDP(t, "c1")}
	kid := map[string]string{"casino-a": "a1", "casino-b": "b1", "casino-c": "c1"}
	issuer := func(op string) string { return "https://idp." + op + ".test" }
	entries := func(ops ...string) []byte {
		s := "operators:\n"
		for _, op := range ops {
			s += fmt.Sprintf("  - id: %s\n    jwt: {issuer: %q, jwks_file: %q}\n", op, issuer(op), idps[op].path)
		}
		return []byte(s)
	}
	file := filepath.Join(t.TempDir(), "operators.yaml")
	if err := os.WriteFile(file, entries("casino-a", "casino-b"), 0o600); err != nil {
		t.Fatal(err)
	}
	st := startStackWith(t, stack.Config{OperatorsFile: file, JWTAudience: "chemmy", ReloadInterval: 100 * time.Millisecond,
		Limits: gateway.LimitConfig{Rate: -1}, Shards: 2})
	c := dial(t, st.GatewayAddr)
	gc := gatewayv1.NewGatewayServiceClient(c.conn)
	// jwtOf is a JWT of op's identity provider for sub with role; extra
	// claims (name, value pairs) are added or replace the defaults.
	jwtOf := func(op, sub, role string, extra ...any) string {
		cl := claims(sub, role, time.Now().Add(time.Hour), append([]any{"iss", issuer(op)}, extra...)...)
		return idps[op].token(kid[op], cl)
	}
	croupier := map[string]string{"casino-a": jwtOf("casino-a", "croupier-a", "croupier"), "casino-b": jwtOf("casino-b", "croupier-b", "croupier")}

	for op, tok := range croupier {
		resp, err := gc.GetCaller(withToken(t, tok), &gatewayv1.GetCallerRequest{})
		if err != nil || resp.GetOperatorId() != op {
			t.Fatalf("GetCaller of %s's croupier: %v %v", op, resp, err)
		}
	}
	zero := int32(0)
	tables := map[string]string{}
	for op, tok := range croupier {
		resp, err := c.table.CreateTable(withToken(t, tok), &tablev1.CreateTableRequest{RequestId: t.Name() + "/" + op,
			Variant: tablev1.Variant_VARIANT_PUNTO_BANCO, PuntoBancoRules: &tablev1.PuntoBancoRules{BettingWindowMs: 1000, ResultPauseMs: &zero}})
		if err != nil || resp.GetTable().GetOperatorId() != op {
			t.Fatalf("%s's croupier opens a table: %v %v", op, resp, err)
		}
		tables[op] = resp.GetTable().GetTableId()
	}
	for op, tok := range croupier {
		resp, err := c.table.ListTables(withToken(t, tok), &tablev1.ListTablesRequest{})
		if err != nil || len(resp.GetUnreachable()) != 0 {
			t.Fatalf("%s's lobby: %v %v", op, resp, err)
		}
		got := map[string]string{}
		for _, tb := range resp.GetTables() {
			got[tb.GetTableId()] = tb.GetOperatorId()
		}
		if want := tables[op]; len(got) != 1 || got[want] != op {
			t.Errorf("%s's lobby: %v, want only %s", op, got, want)
		}
	}
	other := map[string]string{"casino-a": "casino-b", "casino-b": "casino-a"}
	for op, tok := range croupier {
		id := tables[other[op]]
		_, err := c.table.GetTable(withToken(t, tok), &tablev1.GetTableRequest{TableId: id})
		if status.Code(err) != codes.NotFound || errs.Reason(err) != "TABLE_NOT_FOUND" || status.Convert(err).Message() != `no table "`+id+`"` {
			t.Errorf("%s's croupier gets %s's table: %v, want NOT_FOUND TABLE_NOT_FOUND", op, other[op], err)
		}
	}

	for name, tok := range map[string]string{
		"casino-a's JWT claiming casino-b": jwtOf("casino-a", "croupier-a", "croupier", gateway.ClaimOperator, "casino-b"),
		"an issuer no operator lists":      jwtOf("casino-a", "croupier-a", "croupier", "iss", "https://idp.elsewhere.test"),
		"casino-c before it is listed":     jwtOf("casino-c", "croupier-c", "croupier"),
	} {
		_, err := gc.GetCaller(withToken(t, tok), &gatewayv1.GetCallerRequest{})
		if status.Code(err) != codes.Unauthenticated || errs.Reason(err) != gateway.ReasonTokenInvalid {
			t.Errorf("%s: %v, want UNAUTHENTICATED %s", name, err, gateway.ReasonTokenInvalid)
		}
	}

	replaceFile(t, file, entries("casino-a", "casino-b", "casino-c"))
	ofC := jwtOf("casino-c", "croupier-c", "croupier")
	eventually(t, "casino-c served after the reload", func() error {
		resp, err := gc.GetCaller(withToken(t, ofC), &gatewayv1.GetCallerRequest{})
		if err == nil && resp.GetOperatorId() != "casino-c" {
			return fmt.Errorf("operator %q", resp.GetOperatorId())
		}
		return err
	})
	resp, err := c.table.ListTables(withToken(t, ofC), &tablev1.ListTablesRequest{})
	if err != nil || len(resp.GetTables()) != 0 {
		t.Errorf("casino-c's lobby: %v %v, want no table", resp, err)
	}
}
