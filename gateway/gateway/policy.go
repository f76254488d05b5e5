package gateway

import (
	"fmt"
	"slices"
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
	// Read marks a method that only reads: it changes nothing, so it
	// carries no request_id (every mutating RPC does, AIP-155), which
	// compile checks both ways. ReadMethods lists these methods: the
	// calls that must show no caller anything he may not see (SHOE-FACE;
	// cmd/e2e TestNoSecretInAnyReadForAnyRole calls each of them as
	// every role).
	Read bool
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
		m(gatewayService, "GetCaller"): {Roles: allRoles, Read: true},

		// TableService.
		m(tableService, "CreateTable"): {Roles: staff},
		m(tableService, "GetTable"):    {Roles: allRoles, Read: true},
		m(tableService, "ListTables"):  {Roles: allRoles, Read: true},
		m(tableService, "VoidCoup"):    {Roles: staff},
		m(tableService, "CloseTable"):  {Roles: staff},
		m(tableService, "WatchTable"):  {Roles: allRoles, Read: true},
		m(tableService, "GetOdds"):     {Roles: allRoles, Read: true},
		m(tableService, "GetRoads"):    {Roles: allRoles, Read: true},
		m(tableService, "GetAdvice"):   {Roles: allRoles, SelfField: "player_id", Read: true},
		// Round history: a player lists only his own rounds (player_id
		// must be his id: a player's ListRounds without it is refused,
		// NOT_YOURSELF); table-svc lets him read a round only when it
		// names him and is over (NOT_YOUR_ROUND, ROUND_IN_PLAY).
		m(tableService, "ListRounds"): {Roles: allRoles, SelfField: "player_id", Read: true},
		m(tableService, "GetRound"):   {Roles: allRoles, Read: true},

		// WalletService. PlaceHold, VoidHold, CancelPlaceHold, PostHold,
		// ExpireHolds, the settlements (SettleCoup, SettlePuntoBanco,
		// SettleBanque, SettleOld), ChargeFee and GetCoupSettlement are for
		// table-svc only and deliberately absent.
		m(walletService, "Deposit"):  {Roles: []auth.Role{auth.RoleOperator}},
		m(walletService, "Withdraw"): {Roles: []auth.Role{auth.RoleOperator}},
		m(walletService, "GetAccount"): {
			Roles:     allRoles,
			SelfField: "account_id",
			Prefix:    "player:",
			Read:      true,
		},
		m(walletService, "ListStatement"): {
			Roles:     allRoles,
			SelfField: "account_id",
			Prefix:    "player:",
			Read:      true,
		},
		// Which currencies the wallet accepts, and their exponent: public
		// facts, for every role.
		m(walletService, "GetCurrency"): {Roles: allRoles, Read: true},
		m(walletService, "AuditLedger"): {Roles: []auth.Role{auth.RoleAuditor, auth.RoleOperator}, Read: true},
		// The reconciliation report of seamless wallet mode.
		m(walletService, "GetOperatorReport"): {Roles: []auth.Role{auth.RoleAuditor, auth.RoleOperator}, Read: true},
		// Its exception list (the operator's refusals for good): read by
		// auditors and operators, retried or settled outside chemmy by
		// operators only (money decisions).
		m(walletService, "ListLimitChanges"):        {Roles: []auth.Role{auth.RoleAuditor, auth.RoleOperator}, Read: true},
		m(walletService, "GetOperatorRound"):        {Roles: []auth.Role{auth.RoleAuditor, auth.RoleOperator}, Read: true},
		m(walletService, "ListOperatorExceptions"):  {Roles: []auth.Role{auth.RoleAuditor, auth.RoleOperator}, Read: true},
		m(walletService, "RetryOperatorException"):  {Roles: []auth.Role{auth.RoleOperator}},
		m(walletService, "SettleOperatorException"): {Roles: []auth.Role{auth.RoleOperator}},
		// Game-launch sessions: the operator's platform launches its
		// players (the token goes to the player's client) and revokes
		// them; auditors read them. AuthenticateLaunchSession is the
		// gateway's own, never public.
		m(walletService, "CreateLaunchSession"): {Roles: []auth.Role{auth.RoleOperator}},
		m(walletService, "RevokeLaunchSession"): {Roles: []auth.Role{auth.RoleOperator}},
		m(walletService, "GetLaunchSession"):    {Roles: []auth.Role{auth.RoleOperator, auth.RoleAuditor}, Read: true},
		// Responsible-gaming limits: set by the operator, read by the
		// player (his own) and staff.
		m(walletService, "SetPlayerLimits"): {Roles: []auth.Role{auth.RoleOperator}},
		m(walletService, "GetPlayerLimits"): {
			Roles:     allRoles,
			SelfField: "account_id",
			Prefix:    "player:",
			Read:      true,
		},

		// ShoeService. MoveTopCardsToBottom (the old game's banker's move,
		// OLD-CUT), ClaimShoe and SeedShoe (a table claims its shoe and
		// hands it its players' seeds) and DealCards (a coup's opening
		// cards in one call) are for table-svc only and deliberately
		// absent.
		m(shoeService, "CreateShoe"):          {Roles: staff},
		m(shoeService, "CreateShoeFromOrder"): {Roles: []auth.Role{auth.RoleOperator}},
		m(shoeService, "DealCard"):            {Roles: []auth.Role{auth.RoleOperator}},
		m(shoeService, "GetShoe"):             {Roles: allRoles, Read: true},
		// The cut carries the cutter's seed (the player's entropy): his
		// alone; table-svc cuts at random when his time runs out.
		m(shoeService, "Cut"):       playerOnly,
		m(shoeService, "CloseShoe"): {Roles: staff},
		// The reveal exists only once a shoe is closed (shoe-svc refuses
		// it before); fates of an open shoe list burned and dealt cards only.
		m(shoeService, "GetShoeReveal"): {Roles: allRoles, Read: true},
		m(shoeService, "ListCardFates"): {Roles: allRoles, Read: true},
	}
	for _, name := range []string{"JoinTable", "AcceptBank", "DeclineBank", "PlaceBet",
		"DeclineBet", "CallBanco", "DecideDraw", "PassBank", "JoinGallery", "BidBank", "RaiseBank", "MoveTopCards",
		"CommitSeed", "RevealSeed", "AnswerRealityCheck"} {
		p[m(tableService, name)] = playerOnly
	}
	// Staff may stand a player up (between coups, as LeaveTable allows;
	// table-svc records it as a staff action).
	p[m(tableService, "LeaveTable")] = rule{Roles: []auth.Role{auth.RolePlayer, auth.RoleCroupier, auth.RoleOperator}, SelfField: "player_id"}
	return p
}

// ReadMethods returns the full names ("/pkg.Service/Method") of the
// public methods that only read (rule.Read), sorted: the calls a test of
// what each role may see calls (cmd/e2e TestNoSecretInAnyReadForAnyRole).
// A public method without a request_id is one of them, or the gateway
// does not start (compile).
func ReadMethods() []string {
	var out []string
	for full, r := range defaultPolicy() {
		if r.Read {
			out = append(out, full)
		}
	}
	slices.Sort(out)
	return out
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
		// Every mutating RPC carries a request_id (DESIGN.md, AIP-155):
		// a method without one reads, and must say so, so that the
		// tests of every read find it.
		if mutating := md.Input().Fields().ByName("request_id") != nil; r.Read == mutating {
			return nil, fmt.Errorf("policy: %s: Read is %v but its request %s has request_id %v", full, r.Read, md.Input().FullName(), mutating)
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

// PublicMethod is one public method of the gateway's policy, as the
// OpenAPI document (gateway/protoc-gen-openapi) describes it.
type PublicMethod struct {
	// Full is "/pkg.Service/Method", the HTTP path it is served at.
	Full string
	// Roles that may call it.
	Roles []string
	// SelfField, when set, is the request field a player must fill with
	// his own id (Prefix + his subject).
	SelfField, Prefix string
	// Read: it changes nothing and carries no request_id.
	Read bool
}

// PublicMethods returns the methods of defaultPolicy, sorted by name.
func PublicMethods() []PublicMethod {
	var out []PublicMethod
	for full, r := range defaultPolicy() {
		pm := PublicMethod{Full: full, SelfField: r.SelfField, Prefix: r.Prefix, Read: r.Read}
		for _, role := range r.Roles {
			pm.Roles = append(pm.Roles, string(role))
		}
		out = append(out, pm)
	}
	slices.SortFunc(out, func(a, b PublicMethod) int { return strings.Compare(a.Full, b.Full) })
	return out
}
