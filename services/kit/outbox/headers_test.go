package outbox

import "testing"

func TestHeaders(t *testing.T) {
	for _, c := range []struct{ subject, typ, kind string }{
		{"chemmy.table.T1.bet_placed", "chemmy.events.v1.TableEvent", "bet_placed"},
		{"chemmy.shoe.S1.shoe_opened", "chemmy.events.v1.ShoeEvent", "shoe_opened"},
		{"chemmy.wallet.X.transfer_recorded", "chemmy.events.v1.WalletEvent", "transfer_recorded"},
		{"chemmy.player.alice.reality_check", "chemmy.events.v1.TableEvent", "reality_check"},
		{"chemmy.other.X.y", "", "y"},
		{"foo.bar", "", ""},
	} {
		typ, kind := EventType(c.subject)
		if typ != c.typ || (typ != "" && kind != c.kind) {
			t.Errorf("EventType(%q) = %q %q", c.subject, typ, kind)
		}
		h := Headers(c.subject)
		if h.Get(TypeHeader) != c.typ {
			t.Errorf("Headers(%q) = %v", c.subject, h)
		}
	}
}
