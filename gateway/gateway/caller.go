package gateway

import (
	"context"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	gatewayv1 "github.com/chemmy/chemmy/proto/gen/chemmy/gateway/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
)

// callerServer implements chemmy.gateway.v1.GatewayService.
type callerServer struct {
	gatewayv1.UnimplementedGatewayServiceServer
}

// GetCaller returns the caller the interceptor authenticated.
func (callerServer) GetCaller(ctx context.Context, _ *gatewayv1.GetCallerRequest) (*gatewayv1.GetCallerResponse, error) {
	c, ok := auth.FromContext(ctx)
	if !ok {
		return nil, status.Error(codes.Internal, "no caller identity")
	}
	return &gatewayv1.GetCallerResponse{Subject: c.Subject, Role: roleProto(c.Role), LaunchSessionId: c.Session, OperatorId: c.Operator}, nil
}

// roleProto maps a role to chemmy.gateway.v1.Role ("player" →
// ROLE_PLAYER).
func roleProto(r auth.Role) gatewayv1.Role {
	return gatewayv1.Role(gatewayv1.Role_value["ROLE_"+strings.ToUpper(string(r))])
}
