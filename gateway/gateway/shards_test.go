package gateway

import "testing"

func TestPageTokens(t *testing.T) {
	for _, c := range []struct {
		k     int
		inner string
	}{{0, ""}, {1, "01JD0Q7Z8V9W5M3K2H1G0F9E8D"}, {2, "with\x00nul"}} {
		k, inner, err := parsePageToken(pageToken(c.k, c.inner), 3)
		if err != nil || k != c.k || inner != c.inner {
			t.Errorf("round trip of (%d, %q): (%d, %q, %v)", c.k, c.inner, k, inner, err)
		}
	}
	if k, inner, err := parsePageToken("", 3); err != nil || k != 0 || inner != "" {
		t.Errorf("empty token: (%d, %q, %v)", k, inner, err)
	}
	// Another gateway's or a client's token, or one for a shard that is
	// gone, is refused rather than guessed.
	for _, tok := range []string{"x", "g1.", "g1.!!", pageToken(3, ""), pageToken(-1, ""), "g1." + "MDE"} {
		if _, _, err := parsePageToken(tok, 3); err == nil {
			t.Errorf("token %q accepted", tok)
		}
	}
}

func TestSplitAddrs(t *testing.T) {
	got, err := splitAddrs(" a:1, b:2 ,c:3")
	if err != nil || len(got) != 3 || got[0] != "a:1" || got[1] != "b:2" || got[2] != "c:3" {
		t.Errorf("splitAddrs = %q, %v", got, err)
	}
	for _, bad := range []string{"", "a:1,", ",a:1", "a:1,,b:2"} {
		if _, err := splitAddrs(bad); err == nil {
			t.Errorf("splitAddrs(%q): no error", bad)
		}
	}
}
