package shard

import "testing"

func TestParse(t *testing.T) {
	for in, want := range map[string]int{"0": 0, "2": 2, "table-svc-3": 3, "a-b-10": 10, "1023": 1023} {
		k, ok, err := Parse(in)
		if err != nil || !ok || k != want {
			t.Errorf("Parse(%q) = %d, %v, %v; want %d", in, k, ok, err, want)
		}
	}
	if _, ok, err := Parse(""); ok || err != nil {
		t.Errorf("Parse(\"\") = %v, %v; want not sharded, no error", ok, err)
	}
	for _, in := range []string{"x", "table-svc", "-1", "01", "1024", "pod-", "pod-+1"} {
		if _, _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q): no error", in)
		}
	}
}

func TestOfRoundTrip(t *testing.T) {
	for _, k := range []int{0, 1, 7, Max - 1} {
		got, ok := Of(Prefix(k) + "01JD0Q7Z8V9W5M3K2H1G0F9E8D")
		if !ok || got != k {
			t.Errorf("Of(Prefix(%d)+ulid) = %d, %v", k, got, ok)
		}
	}
	// Ids without a prefix are shard 0's (a deployment of one shard).
	for _, id := range []string{"01JD0Q7Z8V9W5M3K2H1G0F9E8D", "shoe", ""} {
		if k, ok := Of(id); !ok || k != 0 {
			t.Errorf("Of(%q) = %d, %v; want 0, true", id, k, ok)
		}
	}
	for _, id := range []string{"s-x", "s01-x", "sx-1", "s1024-x", "s-1-x"} {
		if _, ok := Of(id); ok {
			t.Errorf("Of(%q): ok, want a malformed shard", id)
		}
	}
}

func TestFlagPrefix(t *testing.T) {
	if p, err := FlagPrefix("table-svc-2"); err != nil || p != "s2-" {
		t.Errorf("FlagPrefix = %q, %v", p, err)
	}
	if p, err := FlagPrefix(""); err != nil || p != "" {
		t.Errorf("FlagPrefix(\"\") = %q, %v", p, err)
	}
	if _, err := FlagPrefix("nope"); err == nil {
		t.Error("FlagPrefix(nope): no error")
	}
}
