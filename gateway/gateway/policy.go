package gateway

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	gatewayv1 "github.com/chemmy/chemmy/proto/gen/chemmy/gateway/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
)

// The public services. The gateway serves GatewayService itself and
// forwards the others.
var (
	gatewayService = gatewayv1.GatewayService_ServiceDesc.ServiceName
	tableService   = tablev1.TableService_ServiceDesc.ServiceName
	walletService  = walletv1.WalletService_ServiceDesc.ServiceName
	shoeService    = shoev1.ShoeService_ServiceDesc.ServiceName
)

// rule says who may call one method.
type rule struct {
	// Roles that may call the method.
	Roles []auth.Role
	// SelfField, when set, names a string field of the request that a
	// caller with the player role must fill with his own id: Prefix +
	// subject. Other roles act for anyone.
	SelfField string
	Prefix    string
}

// policy maps a full method name ("/pkg.Service/Method") to its rule.
// Methods of the public services absent from it are not public
// (PERMISSION_DENIED METHOD_NOT_PUBLIC); health and reflection are open
// to everyone without a token (see open).
type policy map[string]rule

var (
	allRoles = []auth.Role{auth.RolePlayer, auth.RoleCroupier, auth.RoleOperator, auth.RoleAuditor}
	staff    = []auth.Role{auth.RoleCroupier, auth.RoleOperator}
)

// defaultPolicy is the gateway's role/method matrix. Keep README.md in step.
func defaultPolicy() policy {
	m := func(svc, method string) string { return "/" + svc + "/" + method }
	// A player's own moves (his money, his seat, his hand) are his alone:
	// no member of staff makes them for him.
	playerOnly := rule{Roles: []auth.Role{auth.RolePlayer}, SelfField: "player_id"}
	p := policy{
		// GatewayService.
		m(gatewayService, "GetCaller"): {Roles: allRoles},

		// TableService.
		m(tableService, "CreateTable"): {Roles: staff},
		m(tableService, "GetTable"):    {Roles: allRoles},
		m(tableService, "ListTables"):  {Roles: allRoles},
		m(tableService, "VoidCoup"):    {Roles: staff},
		m(tableService, "CloseTable"):  {Roles: staff},
		m(tableService, "WatchTable"):  {Roles: allRoles},
		m(tableService, "GetOdds"):     {Roles: allRoles},
		m(tableService, "GetRoads"):    {Roles: allRoles},
		m(tableService, "GetAdvice"):   {Roles: allRoles, SelfField: "player_id"},
		// Round history: a player lists only his own rounds (player_id
		// must be his id: a player's ListRounds without it is refused,
		// NOT_YOURSELF); table-svc lets him read a round only when it
		// names him and is over (NOT_YOUR_ROUND, ROUND_IN_PLAY).
		m(tableService, "ListRounds"): {Roles: allRoles, SelfField: "player_id"},
		m(tableService, "GetRound"):   {Roles: allRoles},

		// WalletService. PlaceHold, VoidHold, CancelPlaceHold, PostHold,
		// ExpireHolds, the settlements (SettleCoup, SettlePuntoBanco,
		// SettleBanque, SettleOld) and ChargeFee are for table-svc only
		// and deliberately absent.
		m(walletService, "Deposit"):  {Roles: []auth.Role{auth.RoleOperator}},
		m(walletService, "Withdraw"): {Roles: []auth.Role{auth.RoleOperator}},
		m(walletService, "GetAccount"): {
			Roles:     allRoles,
			SelfField: "account_id",
			Prefix:    "player:",
		},
		m(walletService, "ListStatement"): {
			Roles:     allRoles,
			SelfField: "account_id",
			Prefix:    "player:",
		},
		m(walletService, "AuditLedger"): {Roles: []auth.Role{auth.RoleAuditor, auth.RoleOperator}},
		// The reconciliation report of seamless wallet mode.
		m(walletService, "GetOperatorReport"): {Roles: []auth.Role{auth.RoleAuditor, auth.RoleOperator}},
		// Its exception list (the operator's refusals for good): read by
		// auditors and operators, retried or settled outside chemmy by
		// operators only (money decisions).
		m(walletService, "ListOperatorExceptions"):  {Roles: []auth.Role{auth.RoleAuditor, auth.RoleOperator}},
		m(walletService, "RetryOperatorException"):  {Roles: []auth.Role{auth.RoleOperator}},
		m(walletService, "SettleOperatorException"): {Roles: []auth.Role{auth.RoleOperator}},
		// Responsible-gaming limits: set by the operator, read by the
		// player (his own) and staff.
		m(walletService, "SetPlayerLimits"): {Roles: []auth.Role{auth.RoleOperator}},
		m(walletService, "GetPlayerLimits"): {
			Roles:     allRoles,
			SelfField: "account_id",
			Prefix:    "player:",
		},

		// ShoeService. MoveTopCardsToBottom (the old game's banker's move,
		// OLD-CUT), ClaimShoe and SeedShoe (a table claims its shoe and
		// hands it its players' seeds) and DealCards (a coup's opening
		// cards in one call) are for table-svc only and deliberately
		// absent.
		m(shoeService, "CreateShoe"):          {Roles: staff},
		m(shoeService, "CreateShoeFromOrder"): {Roles: []auth.Role{auth.RoleOperator}},
		m(shoeService, "DealCard"):            {Roles: []auth.Role{auth.RoleOperator}},
		m(shoeService, "GetShoe"):             {Roles: allRoles},
		// The cut carries the cutter's seed (the player's entropy): his
		// alone; table-svc cuts at random when his time runs out.
		m(shoeService, "Cut"):       playerOnly,
		m(shoeService, "CloseShoe"): {Roles: staff},
		// The reveal exists only once a shoe is closed (shoe-svc refuses
		// it before); fates of an open shoe list burned and dealt cards only.
		m(shoeService, "GetShoeReveal"): {Roles: allRoles},
		m(shoeService, "ListCardFates"): {Roles: allRoles},
	}
	for _, name := range []string{"JoinTable", "AcceptBank", "DeclineBank", "PlaceBet",
		"DeclineBet", "CallBanco", "DecideDraw", "PassBank", "JoinGallery", "BidBank", "RaiseBank", "MoveTopCards",
		"CommitSeed", "RevealSeed"} {
		p[m(tableService, name)] = playerOnly
	}
	// Staff may stand a player up (between coups, as LeaveTable allows;
	// table-svc records it as a staff action).
	p[m(tableService, "LeaveTable")] = rule{Roles: []auth.Role{auth.RolePlayer, auth.RoleCroupier, auth.RoleOperator}, SelfField: "player_id"}
	return p
}

// open reports whether method needs no token: the gRPC health and server
// reflection services.
func open(method string) bool {
	return strings.HasPrefix(method, "/grpc.health.v1.Health/") ||
		strings.HasPrefix(method, "/grpc.reflection.v1.ServerReflection/") ||
		strings.HasPrefix(method, "/grpc.reflection.v1alpha.ServerReflection/")
}

// splitMethod splits "/pkg.Service/Method" into its service and method.
func splitMethod(full string) (service, method string, ok bool) {
	s, ok := strings.CutPrefix(full, "/")
	if !ok {
		return "", "", false
	}
	service, method, ok = strings.Cut(s, "/")
	return service, method, ok && service != "" && method != "" && !strings.Contains(method, "/")
}

// compiledRule is a rule with the request descriptor and self field
// resolved from the registered contracts.
type compiledRule struct {
	rule
	input protoreflect.MessageDescriptor
	self  protoreflect.FieldDescriptor // nil: no self check
}

// compile resolves every method of p in files and checks that self fields
// exist and are singular strings, so a contract change that breaks the
// policy stops the gateway at start instead of opening a hole.
func (p policy) compile(files *protoregistry.Files) (map[string]compiledRule, error) {
	out := make(map[string]compiledRule, len(p))
	for full, r := range p {
		svc, method, ok := splitMethod(full)
		if !ok {
			return nil, fmt.Errorf("policy: malformed method %q", full)
		}
		d, err := files.FindDescriptorByName(protoreflect.FullName(svc + "." + method))
		if err != nil {
			return nil, fmt.Errorf("policy: %s: %w", full, err)
		}
		md, ok := d.(protoreflect.MethodDescriptor)
		if !ok {
			return nil, fmt.Errorf("policy: %s is not a method", full)
		}
		for _, role := range r.Roles {
			if !assignable(role) {
				return nil, fmt.Errorf("policy: %s: role %q cannot be assigned", full, role)
			}
		}
		c := compiledRule{rule: r, input: md.Input()}
		if r.SelfField != "" {
			fd := md.Input().Fields().ByName(protoreflect.Name(r.SelfField))
			if fd == nil || fd.Kind() != protoreflect.StringKind || fd.Cardinality() == protoreflect.Repeated {
				return nil, fmt.Errorf("policy: %s: self field %q is not a string field of %s", full, r.SelfField, md.Input().FullName())
			}
			c.self = fd
		}
		out[full] = c
	}
	return out, nil
}
