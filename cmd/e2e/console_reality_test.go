package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// TestConsoleRealityCheck: alice (reality checks every second) banks
// against bob; after the first coup she plays once a second is over (the
// check numbered by the seconds since she sat down),
// her console asks her to continue or stop (bob's does not); she
// presses "stop", the answer goes to table-svc (AnswerRealityCheck) and,
// between coups, she is stood up at once: her seat is gone, her bank
// passed (CF-PASS), and her money is the two coups' (her natural 9 beats
// the player's 5 twice: bob's 500 each time, less 5% commission).
func TestConsoleRealityCheck(t *testing.T) {
	b, st, c := consoleRig(t, 5000, "alice", "bob")
	if _, err := c.wallet.SetPlayerLimits(as(t, "operator"), &walletv1.SetPlayerLimitsRequest{RequestId: t.Name() + "/limits",
		AccountId: "player:alice", Limits: &walletv1.PlayerLimits{RealityCheckInterval: durationpb.New(time.Second)}}); err != nil {
		t.Fatal(err)
	}
	cards := []string{"2C", "9H", "3D", "TC", "2D", "9S", "3H", "TD"}
	id := aliceBanks(t, c, cards...)
	bet := func(n string) {
		t.Helper()
		if _, err := c.table.PlaceBet(as(t, "bob"), &tablev1.PlaceBetRequest{RequestId: t.Name() + "/bet/" + n, TableId: id, PlayerId: "bob", Amount: 500}); err != nil {
			t.Fatal(err)
		}
	}
	bet("1")
	q := "?table=" + id
	alice, bob := b.open(st.GatewayHTTPAddr, "alice", q), b.open(st.GatewayHTTPAddr, "bob", q)
	time.Sleep(1100 * time.Millisecond)
	bet("2") // her first reality check, after its settlement

	alice.do("is asked to continue or stop", waitFor(`!document.getElementById('reality').hidden`))
	if txt := alice.text("reality-text"); !strings.HasPrefix(txt, "Reality check ") || !strings.Contains(txt, "played 2 coups") {
		t.Errorf("alice is shown %q", txt)
	}
	alice.shot("reality-check-alice.png")
	if bob.eval(`String(document.getElementById('reality').hidden)`) != "true" {
		t.Error("bob is shown alice's reality check")
	}
	alice.do("stops", press("reality-stop"), waitFor(`document.getElementById('reality').hidden`),
		waitFor(`document.querySelector('#seats li.me') === null`))
	got, err := c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: id})
	if err != nil {
		t.Fatal(err)
	}
	var seated []string
	for _, s := range got.GetTable().GetSeats() {
		seated = append(seated, s.GetPlayerId())
	}
	if slices.Contains(seated, "alice") || got.GetTable().GetBankerPlayerId() == "alice" {
		t.Fatalf("alice still at the table after stopping: seats %v, banker %q", seated, got.GetTable().GetBankerPlayerId())
	}
	if a, b := c.balance(t, "player:alice"), c.balance(t, "player:bob"); a != 5000+2*(500-25) || b != 5000-2*500 {
		t.Errorf("balances alice %d bob %d, want %d and %d", a, b, 5000+2*(500-25), 5000-2*500)
	}
}
