package gateway

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/chemmy/chemmy/services/kit/auth"
)

// notPublic are the methods of the public services the gateway refuses on
// purpose.
var notPublic = map[string]bool{
	"/chemmy.wallet.v1.WalletService/PlaceHold":  true,
	"/chemmy.wallet.v1.WalletService/VoidHold":   true,
	"/chemmy.wallet.v1.WalletService/SettleCoup": true,
	// Also for table-svc only.
	"/chemmy.wallet.v1.WalletService/PostHold":         true,
	"/chemmy.wallet.v1.WalletService/ExpireHolds":      true,
	"/chemmy.wallet.v1.WalletService/SettlePuntoBanco": true,
	"/chemmy.wallet.v1.WalletService/SettleBanque":     true,
	"/chemmy.wallet.v1.WalletService/ChargeFee":        true,
	"/chemmy.wallet.v1.WalletService/ResizeHold":       true,
	// The old game's banker's move of top cards (OLD-CUT) goes through
	// his table: table-svc only.
	"/chemmy.shoe.v1.ShoeService/MoveTopCardsToBottom": true,
	// A table claims the shoe it opens on (CreateTable) and hands it its
	// players' seeds: table-svc only.
	"/chemmy.shoe.v1.ShoeService/ClaimShoe": true,
	"/chemmy.shoe.v1.ShoeService/SeedShoe":  true,
	// A coup's opening cards in one call: table-svc only.
	"/chemmy.shoe.v1.ShoeService/DealCards": true,
	// The old game's settlement: table-svc only, like the others.
	"/chemmy.wallet.v1.WalletService/SettleOld": true,
	// Whether a banker's limits still allow his bank: table-svc only.
	"/chemmy.wallet.v1.WalletService/CheckStake": true,
	// Taking back the hold of an action the table could not store:
	// table-svc only.
	"/chemmy.wallet.v1.WalletService/CancelPlaceHold": true,
	// Whether a coup is settled, asked before a void: table-svc only.
	"/chemmy.wallet.v1.WalletService/GetCoupSettlement": true,
	// The gateway's own question about a launch token (its certificate,
	// role service): never public.
	"/chemmy.wallet.v1.WalletService/AuthenticateLaunchSession": true,
}

// TestPolicyCoversContracts fails when a contract gains a method that the
// policy neither allows nor refuses on purpose: decide, then update
// defaultPolicy (or notPublic) and README.md.
func TestPolicyCoversContracts(t *testing.T) {
	pol := defaultPolicy()
	if _, err := pol.compile(protoregistry.GlobalFiles); err != nil {
		t.Fatal(err)
	}
	for _, svc := range []string{gatewayService, tableService, walletService, shoeService} {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc))
		if err != nil {
			t.Fatal(err)
		}
		methods := d.(protoreflect.ServiceDescriptor).Methods()
		for i := range methods.Len() {
			full := "/" + svc + "/" + string(methods.Get(i).Name())
			_, inPolicy := pol[full]
			if inPolicy == notPublic[full] {
				t.Errorf("%s: in policy %v, listed not public %v; decide who may call it", full, inPolicy, notPublic[full])
			}
		}
	}
}

func TestPolicyCompileRejectsDrift(t *testing.T) {
	for name, p := range map[string]policy{
		"no such method":  {"/chemmy.table.v1.TableService/Nope": {Roles: allRoles}},
		"no such field":   {"/chemmy.table.v1.TableService/PlaceBet": {Roles: allRoles, SelfField: "player"}},
		"not a string":    {"/chemmy.table.v1.TableService/PlaceBet": {Roles: allRoles, SelfField: "amount"}},
		"service role":    {"/chemmy.table.v1.TableService/GetTable": {Roles: []auth.Role{auth.RoleService}}},
		"malformed":       {"chemmy.table.v1.TableService.GetTable": {Roles: allRoles}},
		"a read unmarked": {"/chemmy.table.v1.TableService/GetTable": {Roles: allRoles}},
		"a write as read": {"/chemmy.table.v1.TableService/PlaceBet": {Roles: allRoles, Read: true}},
	} {
		if _, err := p.compile(protoregistry.GlobalFiles); err == nil {
			t.Errorf("%s: compiled", name)
		}
	}
}

// TestReadMethods: the reads the policy marks are the public methods
// without a request_id, the ones that show cards and accounts among
// them.
func TestReadMethods(t *testing.T) {
	reads := ReadMethods()
	for _, m := range []string{"/chemmy.table.v1.TableService/GetTable", "/chemmy.table.v1.TableService/WatchTable",
		"/chemmy.table.v1.TableService/GetRound", "/chemmy.shoe.v1.ShoeService/ListCardFates", "/chemmy.wallet.v1.WalletService/ListStatement",
		"/chemmy.gateway.v1.GatewayService/GetCaller"} {
		if !slices.Contains(reads, m) {
			t.Errorf("%s is not among the reads %q", m, reads)
		}
	}
	for full, r := range defaultPolicy() {
		svc, method, _ := splitMethod(full)
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc + "." + method))
		if err != nil {
			t.Fatal(err)
		}
		noID := d.(protoreflect.MethodDescriptor).Input().Fields().ByName("request_id") == nil
		if noID != slices.Contains(reads, full) || noID != r.Read {
			t.Errorf("%s: without request_id %v, read %v, listed %v", full, noID, r.Read, slices.Contains(reads, full))
		}
	}
}
