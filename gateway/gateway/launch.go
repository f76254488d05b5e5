package gateway

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/trust"
)

// LaunchTokenPrefix starts a game-launch session's bearer token (made by
// wallet-svc's CreateLaunchSession).
const LaunchTokenPrefix = "chls_"

// Reasons of the refusals of a launch token.
const (
	// ReasonSessionExpired: the launch session expired or was revoked
	// (UNAUTHENTICATED).
	ReasonSessionExpired = "SESSION_EXPIRED"
	// ReasonSessionOtherTable: a session for one table used on another
	// (PERMISSION_DENIED).
	ReasonSessionOtherTable = "SESSION_OTHER_TABLE"
)

// launchTimeout bounds the question to wallet-svc about a token.
const launchTimeout = 5 * time.Second

// launchRecheck is how often a stream opened with a game-launch session
// token (WatchTable) asks wallet-svc about the session again: revoked or
// expired, the stream ends within this (a time.Duration; a variable for
// the tests).
var launchRecheck = 10 * time.Second

// launchSessions authenticates game-launch session tokens by asking
// wallet-svc (AuthenticateLaunchSession) on every call, nothing cached:
// a session revoked is refused at its next call, and a stream opened
// with it ends within launchRecheck (follow).
type launchSessions struct {
	wallet walletv1.WalletServiceClient
	// insecure: the backends believe identity metadata (development); the
	// gateway then names itself in it. With mutual TLS its certificate
	// does.
	insecure bool
	// defaultOperator is the operator of a session that names none (one
	// created before sessions recorded their operator).
	defaultOperator string
}

// authenticate is the caller of a launch token: the session's player,
// with the session's id and operator (the default operator if it names
// none), and the table the session is bound to ("" for the lobby).
func (l *launchSessions) authenticate(ctx context.Context, token string) (auth.Caller, string, error) {
	out := metadata.MD{}
	if l.insecure {
		out.Set(auth.MDSubject, trust.Gateway)
		out.Set(auth.MDRole, string(auth.RoleService))
	}
	cctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(ctx, out), launchTimeout)
	defer cancel()
	resp, err := l.wallet.AuthenticateLaunchSession(cctx, &walletv1.AuthenticateLaunchSessionRequest{Token: token})
	if err != nil {
		switch errs.Reason(err) {
		case ReasonSessionExpired:
			return auth.Caller{}, "", errs.New(codes.Unauthenticated, Domain, ReasonSessionExpired, "%s", status.Convert(err).Message())
		case "LAUNCH_SESSION_NOT_FOUND":
			return auth.Caller{}, "", errs.New(codes.Unauthenticated, Domain, ReasonTokenUnknown, "unknown game-launch session token")
		}
		return auth.Caller{}, "", errs.New(codes.Unavailable, Domain, ReasonBackendUnavailable,
			"cannot check the game-launch session token: %s", status.Convert(err).Message())
	}
	s := resp.GetLaunchSession()
	op := s.GetOperatorId()
	if op == "" {
		op = l.defaultOperator
	}
	return auth.Caller{Subject: s.GetPlayerId(), Role: auth.RolePlayer, Session: s.GetLaunchSessionId(), Operator: op}, s.GetTableId(), nil
}

// follow asks wallet-svc about the session of token every launchRecheck while
// ctx lives; once the session is refused (SESSION_EXPIRED: revoked or
// expired; TOKEN_UNKNOWN: gone), it sends that error on ended and calls
// cancel, which ends the stream. wallet-svc unavailable: the stream goes
// on (the next call of the player is refused if the session is gone).
func (l *launchSessions) follow(ctx context.Context, token string, cancel context.CancelFunc, ended chan<- error) {
	t := time.NewTicker(launchRecheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		_, _, err := l.authenticate(ctx, token)
		if r := errs.Reason(err); r == ReasonSessionExpired || r == ReasonTokenUnknown {
			ended <- err
			cancel()
			return
		}
	}
}
