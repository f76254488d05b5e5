package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
)

// englishWords are words of the English event log that no French line
// has (whole words, any case): a French line with one of them was left
// in English, whole or in part.
var englishWords = regexp.MustCompile(`(?i)\b(the|is|by|with|his|their|and|for|from|at|of|to|sits|leaves|joins|bets|passes|draws|stands|holds|bids|pays|moves|answers|commits|reveals|seat|hand|card|cards|result|settled|shoe|seed|seeds|player|banker|round|check|time|new|opened|closed|offered|open|none|house|voided|window|bet|face down|withheld|abandoned)\b`)

// sampleOf is a payload message of type md with every field set, as the
// console reads it (protojson, JSON names): strings "bob" (a spot, a turn,
// an action and a seed's source take one of their server words), numbers
// 1250, enums their first value after _UNSPECIFIED, two elements in a
// list, nested messages filled in the same way (an Any left out).
func sampleOf(t *testing.T, md protoreflect.MessageDescriptor, depth int) protoreflect.Message {
	t.Helper()
	m := dynamicpb.NewMessage(md)
	words := map[protoreflect.Name]string{"spot": "bank_natural", "turn": "bank_offer", "action": "bank_offered_on", "source": "cutter"}
	value := func(f protoreflect.FieldDescriptor) (protoreflect.Value, bool) {
		switch f.Kind() {
		case protoreflect.StringKind:
			if w, ok := words[f.Name()]; ok {
				return protoreflect.ValueOfString(w), true
			}
			return protoreflect.ValueOfString("bob"), true
		case protoreflect.BoolKind:
			return protoreflect.ValueOfBool(true), true
		case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
			return protoreflect.ValueOfInt32(1250), true
		case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
			return protoreflect.ValueOfInt64(1250), true
		case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
			return protoreflect.ValueOfUint32(1250), true
		case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
			return protoreflect.ValueOfUint64(1250), true
		case protoreflect.BytesKind:
			return protoreflect.ValueOfBytes([]byte{0xab, 0xcd}), true
		case protoreflect.EnumKind:
			return protoreflect.ValueOfEnum(f.Enum().Values().Get(1).Number()), true
		case protoreflect.MessageKind:
			if depth > 3 || f.Message().FullName() == "google.protobuf.Any" {
				return protoreflect.Value{}, false
			}
			return protoreflect.ValueOfMessage(sampleOf(t, f.Message(), depth+1)), true
		}
		return protoreflect.Value{}, false
	}
	for i := range md.Fields().Len() {
		f := md.Fields().Get(i)
		if md.FullName() == "google.protobuf.Timestamp" {
			m.Set(md.Fields().ByName("seconds"), protoreflect.ValueOfInt64(1767297600))
			break
		}
		v, ok := value(f)
		if !ok {
			continue
		}
		if f.IsList() {
			l := m.Mutable(f).List()
			for range 2 {
				v, _ := value(f)
				l.Append(v)
			}
			continue
		}
		if !f.IsMap() {
			m.Set(f, v)
		}
	}
	return m
}

// TestConsoleDescribesEveryEvent: the console's event log has its own
// words, in English and in French, for every payload of a table's event
// (EVENT_WORDS in app.js, by the payload's JSON name). In a browser, each
// payload, every field set (sampleOf), is described in both languages:
// neither line is the raw JSON the log falls back to, nor says
// undefined, NaN or [object ...]; the two lines differ; the French one
// has none of the English log's words (englishWords) and writes an amount
// of 1250 minor units as 12,50 where the English writes 12.50.
func TestConsoleDescribesEveryEvent(t *testing.T) {
	payload := (&eventsv1.TableEvent{}).ProtoReflect().Descriptor().Oneofs().ByName("payload")
	if payload == nil || payload.Fields().Len() < 30 {
		t.Fatalf("TableEvent's payload oneof: %v", payload)
	}
	// Without a browser: every payload has its entry (both languages
	// are checked in the browser below).
	app, err := os.ReadFile(filepath.Join(repoRoot(t), "gateway", "gateway", "console", "app.js"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range payload.Fields().Len() {
		if f := payload.Fields().Get(i); !strings.Contains(string(app), "\n  "+f.JSONName()+": [") {
			t.Errorf("app.js's EVENT_WORDS has no words for %s", f.JSONName())
		}
	}

	b, st, _ := consoleRig(t, 0)
	p := b.open(st.GatewayHTTPAddr, "croupier", "")
	for i := range payload.Fields().Len() {
		f := payload.Fields().Get(i)
		sample, err := protojson.Marshal(sampleOf(t, f.Message(), 0).Interface())
		if err != nil {
			t.Fatal(err)
		}
		kind := f.JSONName()
		got := p.eval(fmt.Sprintf(`JSON.stringify(typeof EVENT_WORDS[%[1]q] === "object" && EVENT_WORDS[%[1]q].length === 2 ?
			[describe(%[1]q, %[2]s, 2, "en"), describe(%[1]q, %[2]s, 2, "fr")] : [])`, kind, sample))
		var lines []string
		if err := json.Unmarshal([]byte(got), &lines); err != nil {
			t.Fatal(err)
		}
		if len(lines) != 2 {
			t.Errorf("%s: no words in English and French (EVENT_WORDS)", kind)
			continue
		}
		en, fr := lines[0], lines[1]
		for _, l := range lines {
			for _, bad := range []string{"undefined", "NaN", "[object", "{\""} {
				if strings.Contains(l, bad) {
					t.Errorf("%s of %s says %q: %q", kind, sample, bad, l)
				}
			}
		}
		if en == fr {
			t.Errorf("%s: the French line is the English one: %q", kind, en)
		}
		if w := englishWords.FindAllString(fr, -1); len(w) > 0 {
			t.Errorf("%s: the French line %q has English words %v", kind, fr, w)
		}
		if strings.Contains(en, "12.50") != strings.Contains(fr, "12,50") {
			t.Errorf("%s: amounts: English %q, French %q", kind, en, fr)
		}
		t.Logf("%s\n  en: %s\n  fr: %s", kind, en, fr)
	}
}
