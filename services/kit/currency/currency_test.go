package currency

import "testing"

// The exponents are ISO 4217's minor units (its list, not CLDR's display
// digits), written out here by hand.
func TestISOExponents(t *testing.T) {
	for code, want := range map[string]int{"EUR": 2, "USD": 2, "GBP": 2, "JPY": 0, "KRW": 0, "CLP": 0,
		"KWD": 3, "BHD": 3, "TND": 3, "IQD": 3, "IRR": 2, "IDR": 2, "CLF": 4, "UYW": 4, "ISK": 0} {
		if got, ok := ISO(code); !ok || got != want {
			t.Errorf("ISO(%s) = %d, %v; want %d", code, got, ok, want)
		}
	}
	for _, code := range []string{"", "eur", "Eur", "978", "EURO", "ABC", "XAU", "XXX", "XTS", "CHIPS"} {
		if e, ok := ISO(code); ok {
			t.Errorf("ISO(%q) = %d, true; want unknown", code, e)
		}
	}
}

func TestConfiguredCurrencies(t *testing.T) {
	s, err := ParseSet(" CHIPS:0, GOLD2:3 ,")
	if err != nil {
		t.Fatal(err)
	}
	for code, want := range map[string]int{"CHIPS": 0, "GOLD2": 3, "EUR": 2, "KWD": 3} {
		if got, ok := s.Exponent(code); !ok || got != want {
			t.Errorf("Exponent(%s) = %d, %v; want %d", code, got, ok, want)
		}
	}
	if _, ok := s.Exponent("TOKENS"); ok {
		t.Error("an unconfigured code is accepted")
	}
	if !s.Configured("CHIPS") || s.Configured("EUR") || s.String() != "CHIPS:0,GOLD2:3" {
		t.Errorf("Configured, String: %v %v %q", s.Configured("CHIPS"), s.Configured("EUR"), s)
	}
	for _, bad := range []string{"CHIPS", "CHIPS:x", "CHIPS:-1", "CHIPS:10", "EUR:2", "chips:0", "AB:0", "CHIPS:0,CHIPS:1"} {
		if _, err := ParseSet(bad); err == nil {
			t.Errorf("ParseSet(%q) accepted", bad)
		}
	}
	var zero Set
	if _, ok := zero.Exponent("CHIPS"); ok {
		t.Error("the zero Set accepts a chip code")
	}
}
