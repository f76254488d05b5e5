package outbox

import "testing"

func TestHeaders(t *testing.T) {
	for _, c := range []struct{ subject, typ, kind string }{
		{"chemmy.table.T1.bet_placed", "chemmy.events.v1.TableEvent", "bet_placed"},
		{"chemmy.shoe.S1.shoe_opened", "chemmy.events.v1.ShoeEvent", "shoe_opened"},
		{"chemmy.wallet.X.transfer_recorded", "chemmy.events.v1.WalletEvent", "transfer_recorded"},
		{"chemmy.player.alice.reality_check", "chemmy.events.v1.TableEvent", "reality_check"},
		{"chemmy.table.T1.v2", "chemmy.events.v1.TableEventBatch", ""},
		{"chemmy.wallet.X.v2", "chemmy.events.v1.WalletEventBatch", ""},
		{"chemmy.other.X.y", "", "y"},
		{"foo.bar", "", ""},
	} {
		typ, kind := EventType(c.subject)
		if typ != c.typ || (typ != "" && kind != c.kind) {
			t.Errorf("EventType(%q) = %q %q", c.subject, typ, kind)
		}
		h := Headers(c.subject)
		if c.kind != "" && h.Get(TypeHeader) != c.typ {
			t.Errorf("Headers(%q) = %v", c.subject, h)
		}
	}
}

// TestMessageHeaders: a batch carries its kinds when it has any, and no
// type (its subject names it), kind nor content type; an event alone its
// type, kind and content type.
func TestMessageHeaders(t *testing.T) {
	h := Message{Subject: "chemmy.table.T1.v2", Kinds: "bet_placed,card_dealt", Events: 3}.Headers()
	if len(h) != 1 || h.Get(KindsHeader) != "bet_placed,card_dealt" {
		t.Errorf("batch headers %v", h)
	}
	h = Message{Subject: "chemmy.wallet.W1.v2", Events: 2}.Headers()
	if len(h) != 0 {
		t.Errorf("wallet batch headers %v", h)
	}
	h = Message{Subject: "chemmy.wallet.X.transfer_recorded", Events: 1}.Headers()
	if len(h) != 3 || h.Get(TypeHeader) != "chemmy.events.v1.WalletEvent" || h.Get(KindHeader) != "transfer_recorded" || h.Get(ContentTypeHeader) != "application/protobuf" {
		t.Errorf("event headers %v", h)
	}
}
