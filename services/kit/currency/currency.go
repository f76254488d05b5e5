// Package currency knows the currencies chemmy's money may be in and the
// exponent of each: how many digits of an amount in minor units come
// after the decimal point (EUR 2: 35950 is 359.50 EUR; JPY 0; KWD 3).
//
// A currency is either an active ISO 4217 code, with ISO's minor unit
// (the table is github.com/bojanz/currency's, generated from ISO 4217's
// list: its digits, not CLDR's display digits, so IQD is 3 and IRR 2), or
// a code the deployment configured with its exponent (chips or tokens,
// wallet-svc -currencies). Every other code is unknown and refused.
// Codes without a minor unit in ISO 4217 (precious metals XAU..., the
// testing and "no currency" codes XTS, XXX) are not in the table: a
// deployment that wants one configures it.
package currency

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	iso "github.com/bojanz/currency"
)

// MaxExponent is the largest exponent a configured currency may have.
const MaxExponent = 9

// ISO reports the minor-unit exponent of an active ISO 4217 code
// (upper-case letters only, e.g. "EUR"); ok is false for any other code.
func ISO(code string) (exponent int, ok bool) {
	if len(code) != 3 || strings.ToUpper(code) != code {
		return 0, false
	}
	d, ok := iso.GetDigits(code)
	return int(d), ok
}

// Set is the currencies a deployment accepts: ISO 4217's, and the
// configured ones with their exponent. The zero Set accepts ISO's only.
type Set struct {
	extra map[string]int
}

// NewSet accepts ISO 4217's codes and extra, whose codes must be 3..12
// characters [A-Z0-9], not ISO codes, with an exponent of 0..MaxExponent.
func NewSet(extra map[string]int) (Set, error) {
	s := Set{extra: map[string]int{}}
	for code, e := range extra {
		if err := validCode(code); err != nil {
			return Set{}, err
		}
		if _, ok := ISO(code); ok {
			return Set{}, fmt.Errorf("currency %s is an ISO 4217 code: its exponent is ISO's, not configured", code)
		}
		if e < 0 || e > MaxExponent {
			return Set{}, fmt.Errorf("currency %s: exponent %d, want 0..%d", code, e, MaxExponent)
		}
		s.extra[code] = e
	}
	return s, nil
}

// ParseSet reads a list of configured currencies, "CODE:EXPONENT" separated
// by commas (e.g. "CHIPS:0,GOLD:2"); empty: none.
func ParseSet(spec string) (Set, error) {
	extra := map[string]int{}
	for item := range strings.SplitSeq(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		code, exp, ok := strings.Cut(item, ":")
		e, err := strconv.Atoi(exp)
		if !ok || err != nil {
			return Set{}, fmt.Errorf("currency %q: want CODE:EXPONENT, e.g. CHIPS:0", item)
		}
		if _, dup := extra[code]; dup {
			return Set{}, fmt.Errorf("currency %s is listed twice", code)
		}
		extra[code] = e
	}
	return NewSet(extra)
}

// Exponent is code's exponent; ok is false for a code the set does not
// accept.
func (s Set) Exponent(code string) (exponent int, ok bool) {
	if e, ok := ISO(code); ok {
		return e, true
	}
	e, ok := s.extra[code]
	return e, ok
}

// Configured reports whether code is one of the set's configured
// (non-ISO) currencies.
func (s Set) Configured(code string) bool {
	_, ok := s.extra[code]
	return ok
}

// String lists the configured currencies as ParseSet reads them.
func (s Set) String() string {
	var out []string
	for _, c := range slices.Sorted(maps.Keys(s.extra)) {
		out = append(out, c+":"+strconv.Itoa(s.extra[c]))
	}
	return strings.Join(out, ",")
}

// validCode: 3..12 characters [A-Z0-9].
func validCode(c string) error {
	ok := len(c) >= 3 && len(c) <= 12
	for i := 0; ok && i < len(c); i++ {
		ok = 'A' <= c[i] && c[i] <= 'Z' || '0' <= c[i] && c[i] <= '9'
	}
	if !ok {
		return fmt.Errorf("currency %q: want 3..12 characters [A-Z0-9]", c)
	}
	return nil
}
