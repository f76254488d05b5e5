package auth

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/chemmy/chemmy/services/kit/errs"
)

func incoming(c Caller) context.Context {
	out := Outgoing(context.Background(), c)
	md, _ := metadata.FromOutgoingContext(out)
	return metadata.NewIncomingContext(context.Background(), md)
}

func TestPolicy(t *testing.T) {
	p := Policy{"/s.S/M": {RoleOperator}}
	h := func(ctx context.Context, _ any) (any, error) {
		c, _ := FromContext(ctx)
		return c, nil
	}
	call := func(ctx context.Context, method string) (any, error) {
		return Checker{Policy: p, Auth: Metadata{}, Domain: "test.chemmy"}.UnaryServerInterceptor()(ctx, nil, &grpc.UnaryServerInfo{FullMethod: method}, h)
	}
	cases := []struct {
		ctx    context.Context
		method string
		code   codes.Code
		reason string
	}{
		{incoming(Caller{Subject: "op", Role: RoleOperator}), "/s.S/M", codes.OK, ""},
		{incoming(Caller{Subject: "alice", Role: RolePlayer}), "/s.S/M", codes.PermissionDenied, "ROLE_NOT_ALLOWED"},
		{incoming(Caller{Subject: "op", Role: RoleOperator}), "/s.S/Other", codes.PermissionDenied, "ROLE_NOT_ALLOWED"},
		{context.Background(), "/s.S/M", codes.Unauthenticated, "UNAUTHENTICATED"},
		{incoming(Caller{Subject: "x", Role: Role("king")}), "/s.S/M", codes.Unauthenticated, "UNAUTHENTICATED"},
		{context.Background(), "/grpc.health.v1.Health/Check", codes.OK, ""},
	}
	for _, tc := range cases {
		got, err := call(tc.ctx, tc.method)
		if status.Code(err) != tc.code || errs.Reason(err) != tc.reason {
			t.Errorf("%s: %v (reason %q), want %v %q", tc.method, err, errs.Reason(err), tc.code, tc.reason)
		}
		if err == nil && tc.method == "/s.S/M" && got.(Caller).Subject != "op" {
			t.Errorf("handler saw caller %v", got)
		}
	}
}

func TestRequireSelf(t *testing.T) {
	alice := WithCaller(context.Background(), Caller{Subject: "alice", Role: RolePlayer})
	if err := RequireSelf(alice, "d", "alice"); err != nil {
		t.Error(err)
	}
	if err := RequireSelf(alice, "d", "bob"); errs.Reason(err) != "NOT_YOURSELF" {
		t.Errorf("alice for bob: %v", err)
	}
	croupier := WithCaller(context.Background(), Caller{Subject: "c", Role: RoleCroupier})
	if err := RequireSelf(croupier, "d", "bob"); err != nil {
		t.Errorf("croupier for bob: %v", err)
	}
	if err := RequireSelf(context.Background(), "d", "bob"); errs.Reason(err) != "UNAUTHENTICATED" {
		t.Errorf("nobody: %v", err)
	}
}

// TestMetadataCarriesTheOperator: in insecure mode the operator travels
// as x-chemmy-operator, replaced by Outgoing, and "*" (every operator)
// is believed of an auditor only.
func TestMetadataCarriesTheOperator(t *testing.T) {
	olga := Caller{Subject: "olga", Role: RoleOperator, Operator: "casino-a"}
	if c, err := (Metadata{}).Authenticate(incoming(olga)); err != nil || c != olga {
		t.Fatalf("Authenticate = %v, %v", c, err)
	}
	// Outgoing replaces the operator, and drops it for a caller without one.
	ctx := Outgoing(Outgoing(context.Background(), olga), Caller{Subject: "table-svc", Role: RoleService})
	md, _ := metadata.FromOutgoingContext(ctx)
	if got := md.Get(MDOperator); len(got) != 0 {
		t.Fatalf("%s = %v after a caller without one", MDOperator, got)
	}
	audrey := Caller{Subject: "audrey", Role: RoleAuditor, Operator: AllOperators}
	if c, ok := FromIncoming(incoming(audrey)); !ok || c != audrey {
		t.Fatalf("auditor of every operator = %v, %v", c, ok)
	}
	if c, ok := FromIncoming(incoming(Caller{Subject: "olga", Role: RoleOperator, Operator: AllOperators})); !ok || c.Operator != "" {
		t.Fatalf("operator of every operator = %v, %v", c, ok)
	}
}
