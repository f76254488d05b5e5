package tablesvc

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// storedRecords are the records of testdata/records (JSON, written by the
// earlier code: two of each game), by file name.
func storedRecords(t *testing.T) map[string]storedRecord {
	t.Helper()
	files, err := filepath.Glob("testdata/records/*.json")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]storedRecord{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var sr storedRecord
		if err := json.Unmarshal(b, &sr); err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = sr
	}
	games := map[string]bool{}
	for _, sr := range out {
		tb := new(table)
		if err := decodeTable(sr.Record, tb); err != nil {
			t.Fatal(err)
		}
		games[tb.adapter().name()] = true
	}
	if len(games) != 4 {
		t.Fatalf("testdata/records holds records of %d games (%v), want the 4", len(games), games)
	}
	return out
}

// TestBinaryRecordRoundTrip writes each stored record of every game (the
// JSON ones of testdata/records, as read) in the binary encoding and
// reads it back: the record is the same (the same fields, and the same
// JSON written from it), every viewer's view is the one the earlier code
// made, and the encoding is the binary one, shorter than the JSON.
func TestBinaryRecordRoundTrip(t *testing.T) {
	for name, sr := range storedRecords(t) {
		t.Run(name, func(t *testing.T) {
			tb := new(table)
			if err := decodeTable(sr.Record, tb); err != nil {
				t.Fatalf("read the stored JSON record: %v", err)
			}
			enc, err := encodeTable(tb)
			if err != nil {
				t.Fatal(err)
			}
			bin := bytes.Clone(enc)
			releaseRecord(enc)
			if bin[0] != recordBinary || json.Valid(bin) {
				t.Fatalf("record written starts %#x, want the version byte %#x and no JSON", bin[0], recordBinary)
			}
			t.Logf("binary record %d bytes, JSON %d", len(bin), len(sr.Record))
			if len(bin) >= len(sr.Record) {
				t.Errorf("binary record %d bytes, JSON %d: want it shorter", len(bin), len(sr.Record))
			}
			rt := new(table)
			if err := decodeTable(bin, rt); err != nil {
				t.Fatalf("read the binary record: %v", err)
			}
			if !reflect.DeepEqual(rt, tb) {
				t.Errorf("binary round trip changed the record:\n got %+v\nwant %+v", rt, tb)
			}
			if !reflect.DeepEqual(rt.game, tb.game) {
				t.Errorf("binary round trip changed the game's state:\n got %+v\nwant %+v", rt.game, tb.game)
			}
			a, err := json.Marshal(tb)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(rt)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("JSON of the record read back:\n got %s\nwant %s", b, a)
			}
			for who, want := range sr.Views {
				if got := withoutAdded(t, recordViews(t, rt)[who], rt); !sameJSON(t, got, want) {
					t.Errorf("%s's view of the binary record:\n got %s\nwant %s", who, got, want)
				}
			}
			var shell struct {
				ID      string `json:"id"`
				Variant int32  `json:"variant"`
			}
			if err := decodeShell(bin, &shell); err != nil || shell.ID != tb.ID || shell.Variant != tb.Variant {
				t.Errorf("decodeShell of the binary record: %+v, %v; want id %q, variant %d", shell, err, tb.ID, tb.Variant)
			}
		})
	}
}

// TestJSONRecordRewrittenBinary stores a record as the earlier code wrote
// it (JSON, testdata/records), loads it through the service and saves
// it: the stored record is then in the binary encoding, and loads as the
// same table (the same views for every viewer).
func TestJSONRecordRewrittenBinary(t *testing.T) {
	h := newHarness(t)
	s := h.table
	for name, sr := range storedRecords(t) {
		t.Run(name, func(t *testing.T) {
			var id struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(sr.Record, &id); err != nil || id.ID == "" {
				t.Fatalf("record's id: %q, %v", id.ID, err)
			}
			stored := func() []byte {
				var v []byte
				if err := s.db.View(func(tx *bolt.Tx) error {
					v = bytes.Clone(tx.Bucket(bucketTables).Get([]byte(id.ID)))
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				return v
			}
			if err := s.db.Update(func(tx *bolt.Tx) error {
				return tx.Bucket(bucketTables).Put([]byte(id.ID), sr.Record)
			}); err != nil {
				t.Fatal(err)
			}
			tb, err := s.load(id.ID)
			if err != nil {
				t.Fatalf("load the JSON record: %v", err)
			}
			if err := s.save(&change{t: tb}, "", nil, nil); err != nil {
				t.Fatal(err)
			}
			if v := stored(); len(v) == 0 || v[0] != recordBinary {
				t.Fatalf("record after a save starts %q, want the binary encoding's version byte", v[:min(len(v), 8)])
			}
			again, err := s.load(id.ID)
			if err != nil {
				t.Fatalf("load the record written again: %v", err)
			}
			for who, want := range sr.Views {
				if got := withoutAdded(t, recordViews(t, again)[who], again); !sameJSON(t, got, want) {
					t.Errorf("%s's view after the rewrite:\n got %s\nwant %s", who, got, want)
				}
			}
		})
	}
}

// TestRoundRecordsStillRead reads the round records of testdata/rounds.json
// (written by the earlier code, JSON, as played in the four games: a
// settled coup of chemin de fer with its holders and transfers, one of
// punto banco, and in-play and staked rounds of banque and the old game):
// each reads, and written in the binary encoding (shorter) reads back the
// same, field for field and as JSON.
func TestRoundRecordsStillRead(t *testing.T) {
	b, err := os.ReadFile("testdata/rounds.json")
	if err != nil {
		t.Fatal(err)
	}
	var stored map[string]json.RawMessage
	if err := json.Unmarshal(b, &stored); err != nil {
		t.Fatal(err)
	}
	variants := map[int32]bool{}
	for id, v := range stored {
		t.Run(id, func(t *testing.T) {
			r := new(roundRecord)
			if err := decodeRound(v, r); err != nil {
				t.Fatalf("read the stored JSON round: %v", err)
			}
			if r.CoupID != id || r.TableID == "" || len(r.Players) == 0 {
				t.Fatalf("stored round read as %+v", r)
			}
			variants[r.Variant] = true
			if again, _ := json.Marshal(r); !sameJSON(t, again, v) {
				t.Errorf("round read from JSON:\n got %s\nwant %s", again, v)
			}
			bin, err := encodeRound(r)
			if err != nil {
				t.Fatal(err)
			}
			if bin[0] != recordBinary || json.Valid(bin) || len(bin) >= len(v) {
				t.Errorf("round written: %d bytes starting %#x, want the version byte and fewer than JSON's %d", len(bin), bin[0], len(v))
			}
			rt := new(roundRecord)
			if err := decodeRound(bin, rt); err != nil {
				t.Fatalf("read the binary round: %v", err)
			}
			if !reflect.DeepEqual(rt, r) {
				t.Errorf("binary round trip:\n got %+v\nwant %+v", rt, r)
			}
			if again, _ := json.Marshal(rt); !sameJSON(t, again, v) {
				t.Errorf("round read back from CBOR:\n got %s\nwant %s", again, v)
			}
		})
	}
	if len(variants) != 4 {
		t.Errorf("rounds of variants %v, want the four games'", variants)
	}
}
