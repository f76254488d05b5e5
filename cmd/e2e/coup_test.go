package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chemmy/chemmy/cmd/stack"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/natsauth"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/table-svc/tableevents"
)

// TestExampleScript runs examples/coup.sh with the real grpcurl against
// the real stack and checks the money: conserved, and moved as the coup's
// result says (RULES.md CF-STANDOFF, CF-BANK-WINS, CF-BANK-LOSES).
func TestExampleScript(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	st := startStack(t)
	c := dial(t, st.GatewayAddr)

	cmd := exec.Command("bash", filepath.Join(repoRoot(t), "examples", "coup.sh"))
	cmd.Env = append(os.Environ(), "CHEMMY_GATEWAY="+st.GatewayAddr, "GRPCURL="+grpcurlPath(t), "RUN_ID=e2e")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("coup.sh: %v\n%s", err, out.String())
	}
	t.Logf("coup.sh:\n%s", out.String())
	m := regexp.MustCompile(`(?m)^TABLE=(\S+)$`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("coup.sh printed no TABLE= line")
	}
	tableID := m[1]

	tbl, err := c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: tableID})
	if err != nil {
		t.Fatal(err)
	}
	last := tbl.GetTable().GetLastCoup()
	if !last.GetSettled() || tbl.GetTable().GetCoupsPlayed() != 1 {
		t.Fatalf("the coup is not settled: %v", tbl.GetTable())
	}
	bal := c.balances(t)
	if got := sum(bal); got != 15000 {
		t.Errorf("money not conserved: players + house = %d, deposits were 15000 (%v)", got, bal)
	}
	want := map[string]int64{}
	switch last.GetOutcome() {
	case tablev1.Outcome_OUTCOME_BANK_WINS:
		// 5% of the 1000 won, rounded down (CF-BANK-WINS).
		want = map[string]int64{"player:alice": 5950, "player:bob": 4400, "player:carol": 4600, "house:commission": 50}
	case tablev1.Outcome_OUTCOME_BANK_LOSES:
		want = map[string]int64{"player:alice": 4000, "player:bob": 5600, "player:carol": 5400, "house:commission": 0}
	case tablev1.Outcome_OUTCOME_STAND_OFF:
		want = map[string]int64{"player:alice": 5000, "player:bob": 5000, "player:carol": 5000, "house:commission": 0}
	default:
		t.Fatalf("outcome %v", last.GetOutcome())
	}
	for a, w := range want {
		if bal[a] != w {
			t.Errorf("%s = %d, want %d after %v", a, bal[a], w, last.GetOutcome())
		}
	}
	if last.GetCommission() != want["house:commission"] {
		t.Errorf("coup commission %d, house got %d", last.GetCommission(), want["house:commission"])
	}
	checkEvents(t, st, tableID)
}

// checkEvents reads the table's events from JetStream: gapless sequence,
// and every step of the coup present.
func checkEvents(t *testing.T, st *stack.Stack, tableID string) {
	t.Helper()
	reader, err := nats.NkeyOptionFromSeed(st.NATSKeys.SeedFile(natsauth.Reader))
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(st.NATSURL, reader, nats.CustomInboxPrefix(natsauth.InboxPrefix(natsauth.Reader)))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	// An ephemeral consumer the server removes when idle: the read-only
	// reader may not delete one (an ordered consumer would try).
	cons, err := js.CreateConsumer(ctx, outbox.StreamName, jetstream.ConsumerConfig{
		FilterSubjects: []string{"chemmy.table." + tableID + ".>"},
		AckPolicy:      jetstream.AckNonePolicy, InactiveThreshold: 30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	var seq uint64
	for kinds["coup_settled"] == 0 {
		msg, err := cons.Next(jetstream.FetchMaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("events so far %v: %v", kinds, err)
		}
		// One message per save, a batch of its events (docs/events.md),
		// its type told by its subject alone (no Chemmy-Event-Type).
		if typ, _ := outbox.EventType(msg.Subject()); msg.Subject() != "chemmy.table."+tableID+".v2" || typ != tableevents.BatchType || msg.Headers().Get(outbox.TypeHeader) != "" {
			t.Fatalf("message on %s of type %q", msg.Subject(), msg.Headers().Get(outbox.TypeHeader))
		}
		evs, err := tableevents.Decode(msg.Headers().Get(outbox.TypeHeader), msg.Subject(), msg.Data())
		if err != nil {
			t.Fatal(err)
		}
		if len(msg.Headers()) != 2 || msg.Headers().Get(outbox.KindsHeader) != tableevents.Kinds(evs) || msg.Headers().Get(jetstream.MsgIDHeader) != evs[0].GetEventId() {
			t.Errorf("batch headers %v for events %v", msg.Headers(), evs)
		}
		for _, ev := range evs {
			if ev.GetSequence() != seq+1 || ev.GetTableId() != tableID {
				t.Fatalf("event sequence %d after %d, table %s", ev.GetSequence(), seq, ev.GetTableId())
			}
			seq = ev.GetSequence()
			kinds[tableevents.Kind(ev)]++
		}
	}
	for _, k := range []string{"table_created", "player_seated", "bank_offered", "bank_changed", "bet_placed", "card_dealt", "coup_resulted", "coup_settled"} {
		if kinds[k] == 0 {
			t.Errorf("no %s event; got %v", k, kinds)
		}
	}
	if kinds["card_dealt"] < 4 || kinds["player_seated"] != 3 || kinds["bet_placed"] != 2 {
		t.Errorf("event counts %v", kinds)
	}
}
