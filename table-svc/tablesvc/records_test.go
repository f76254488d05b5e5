package tablesvc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/encoding/protojson"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
)

// The stored records of testdata/records were written by table-svc as it
// stood before the game's state left the record's top level (chemin de
// fer's fields were stored there, the other games' under their own key),
// each beside the views that code made of it for every kind of viewer.
// A record stored today must read as it did: the same views, whatever
// the shape the record is written in now.

// recordViewers are the viewers whose views of a stored record are kept.
var recordViewers = map[string]viewer{
	"anonymous": {},
	"croupier":  {caller: auth.Caller{Subject: "croupier-1", Role: auth.RoleCroupier}, known: true},
	"auditor":   {caller: auth.Caller{Subject: "auditor-1", Role: auth.RoleAuditor}, known: true},
	"alice":     {caller: auth.Caller{Subject: "alice", Role: auth.RolePlayer}, known: true},
	"bob":       {caller: auth.Caller{Subject: "bob", Role: auth.RolePlayer}, known: true},
	"carol":     {caller: auth.Caller{Subject: "carol", Role: auth.RolePlayer}, known: true},
}

// storedRecord is one file of testdata/records.
type storedRecord struct {
	Record json.RawMessage            `json:"record"`
	Views  map[string]json.RawMessage `json:"views"`
}

// recordViews are t's views for every recordViewers, as JSON.
func recordViews(t *testing.T, tb *table) map[string]json.RawMessage {
	t.Helper()
	out := map[string]json.RawMessage{}
	for name, v := range recordViewers {
		b, err := protojson.MarshalOptions{Multiline: false}.Marshal(toProto(tb, v))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = b
	}
	return out
}

// withoutAdded is view, a table's view in JSON, less the fields added to
// views since the records were stored, each checked first: the currency's
// exponent, ISO 4217's for the record's ISO currency (EUR: 2); the
// operator, the default one's for a record stored before tables had one.
func withoutAdded(t *testing.T, view []byte, tb *table) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(view, &m); err != nil {
		t.Fatal(err)
	}
	if tb.Currency != "EUR" || m["currencyExponent"] != float64(2) {
		t.Errorf("a stored record in %q: view's currencyExponent %v, want EUR's 2", tb.Currency, m["currencyExponent"])
	}
	delete(m, "currencyExponent")
	if m["operatorId"] != DefaultOperator {
		t.Errorf("a stored record's view has operatorId %v, want the default operator's %q", m["operatorId"], DefaultOperator)
	}
	delete(m, "operatorId")
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	ax, _ := json.Marshal(x)
	by, _ := json.Marshal(y)
	return string(ax) == string(by)
}

// TestStoredRecordsStillRead reads each record stored by the earlier code
// and makes every viewer's view: each must be the one the earlier code
// made. Written again by today's code and read back, the record gives the
// same views too.
func TestStoredRecordsStillRead(t *testing.T) {
	files, err := filepath.Glob("testdata/records/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 8 {
		t.Fatalf("%d stored records in testdata/records, want 8 (two of each game)", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var sr storedRecord
			if err := json.Unmarshal(b, &sr); err != nil {
				t.Fatal(err)
			}
			tb := new(table)
			if err := json.Unmarshal(sr.Record, tb); err != nil {
				t.Fatalf("read the stored record: %v", err)
			}
			again, err := json.Marshal(tb)
			if err != nil {
				t.Fatal(err)
			}
			rt := new(table)
			if err := json.Unmarshal(again, rt); err != nil {
				t.Fatalf("read the record written again: %v", err)
			}
			for name, want := range sr.Views {
				for how, tb := range map[string]*table{"as stored": tb, "written again": rt} {
					got := withoutAdded(t, recordViews(t, tb)[name], tb)
					if !sameJSON(t, got, want) {
						t.Errorf("%s, %s's view:\n got %s\nwant %s", how, name, got, want)
					}
				}
			}
			if len(sr.Views) != len(recordViewers) {
				t.Errorf("%d views stored, want %d", len(sr.Views), len(recordViewers))
			}
		})
	}
}

// TestWriteStoredRecords writes testdata/records anew from the code as it
// stands, when CHEMMY_WRITE_RECORDS=1: only to add a record, since the
// files hold what earlier code stored.
func TestWriteStoredRecords(t *testing.T) {
	if os.Getenv("CHEMMY_WRITE_RECORDS") != "1" {
		t.Skip("CHEMMY_WRITE_RECORDS=1 writes testdata/records")
	}
	h := newHarness(t)
	h.fund(20000, "alice", "bob", "carol")
	h.fundHouse(100000)
	write := func(name, id string) {
		t.Helper()
		var raw []byte
		if err := h.table.db.View(func(tx *bolt.Tx) error {
			raw = append(raw, tx.Bucket(bucketTables).Get([]byte(id))...)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		tb := new(table)
		if err := json.Unmarshal(raw, tb); err != nil {
			t.Fatal(err)
		}
		b, err := json.MarshalIndent(storedRecord{Record: raw, Views: recordViews(t, tb)}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll("testdata/records", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata/records", name+".json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Chemin de fer: carol holds the player's 5 (her decision, the cards
	// face down to the others), then the coup settled.
	cf := h.tableWith(nil, 0, []string{"2C", "TH", "3D", "6S", "4H"}, "alice", "bob", "carol")
	h.acceptBank(cf, "alice", 1000)
	h.mustBet(cf, "bob", 300)
	h.mustBet(cf, "carol", 500)
	write("chemin_de_fer-decision", cf)
	if _, err := h.decide(cf, "carol", true); err != nil {
		t.Fatal(err)
	}
	write("chemin_de_fer-settled", cf)

	// Punto banco: bets in the window, then the coup dealt and settled.
	pb := h.pbTable(nil, 0, "2C", "TH", "3D", "6S", "4H")
	h.mustPBBet(pb, "alice", tablev1.BetSpot_BET_SPOT_BANK, 500)
	h.mustPBBet(pb, "bob", tablev1.BetSpot_BET_SPOT_PLAYER, 300)
	write("punto_banco-betting", pb)
	h.closeWindow(pb)
	write("punto_banco-settled", pb)

	// Baccarat banque: alice banks; carol bets on the left, bob on the
	// right: the three hands dealt, face down to the others.
	bq := h.banqueTable(3000, "2C", "3D", "7H", "KS", "4C", "5H")
	write("banque-betting", bq)
	if err := h.banqueBet(bq, "carol", tablev1.BanqueSide_BANQUE_SIDE_LEFT, 400); err != nil {
		t.Fatal(err)
	}
	if err := h.banqueBet(bq, "bob", tablev1.BanqueSide_BANQUE_SIDE_RIGHT, 500); err != nil {
		t.Fatal(err)
	}
	write("banque-dealt", bq)

	// The old game: alice banks; bob and carol stake, the banker's move
	// awaited.
	old := h.oldTable(10000, "QH", "QS", "2C", "7H", "4C", "KS", "3D", "5D")
	write("old_baccarat-betting", old)
	if err := h.stake(old, "bob", 1000); err != nil {
		t.Fatal(err)
	}
	if err := h.stake(old, "carol", 2000); err != nil {
		t.Fatal(err)
	}
	write("old_baccarat-staked", old)
}
