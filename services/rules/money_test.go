package rules

import (
	"math"
	"testing"
)

// TestMulDiv: the one rounding primitive, on examples worked by hand.
func TestMulDiv(t *testing.T) {
	const top = math.MaxInt64
	for _, tt := range []struct {
		a, b, d          int64
		down, half, up   int64
		downOK, roundsOK bool // whether each fits an int64
	}{
		{1000, 500, 10000, 50, 50, 50, true, true},   // 5% of 1000 = 50
		{1001, 500, 10000, 50, 50, 51, true, true},   // 50.05
		{1010, 500, 10000, 50, 51, 51, true, true},   // 50.5: half rounds up
		{999, 250, 10000, 24, 25, 25, true, true},    // 2.5% of 999 = 24.975
		{120, 5400, 3600, 180, 180, 180, true, true}, // 120 an hour for 90 minutes
		{100, 1, 3600, 0, 0, 1, true, true},          // 100 an hour for 1 s = 0.0277...
		{100, 18, 3600, 0, 1, 1, true, true},         // 100 an hour for 18 s = 0.5
		{0, 500, 10000, 0, 0, 0, true, true},
		{top, 10000, 10000, top, top, top, true, true}, // exact at the top
		// (2^32+1)(2^32-1) = 2^64-1 = 2*top + 1: top and a half, which
		// fits rounded down only.
		{1<<32 + 1, 1<<32 - 1, 2, top, 0, 0, true, false},
		{top, 2, 1, 0, 0, 0, false, false}, // 2*top
		{top, 3, 2, 0, 0, 0, false, false}, // 1.5*top
	} {
		for _, m := range []struct {
			r    Rounding
			want int64
			ok   bool
		}{{RoundDown, tt.down, tt.downOK}, {0, tt.down, tt.downOK}, {RoundHalfUp, tt.half, tt.roundsOK}, {RoundUp, tt.up, tt.roundsOK}} {
			got, ok := mulDiv(tt.a, tt.b, tt.d, m.r)
			if ok != m.ok || (ok && got != m.want) {
				t.Errorf("mulDiv(%d, %d, %d, %v) = %d, %t; want %d, %t", tt.a, tt.b, tt.d, m.r, got, ok, m.want, m.ok)
			}
		}
	}
	for _, a := range [][3]int64{{-1, 1, 1}, {1, -1, 1}, {1, 1, 0}, {1, 1, -3}} {
		if _, ok := mulDiv(a[0], a[1], a[2], RoundDown); ok {
			t.Errorf("mulDiv(%d, %d, %d) accepted", a[0], a[1], a[2])
		}
	}
}

// TestBanqueAuctionFee: BQ-BANK, 2.5% of the winning bid, by hand.
func TestBanqueAuctionFee(t *testing.T) {
	for _, tt := range []struct {
		bid            int64
		down, half, up int64
	}{
		{1000, 25, 25, 25},         // 25
		{999, 24, 25, 25},          // 24.975
		{39, 0, 1, 1},              // 0.975
		{20, 0, 1, 1},              // 0.5: half rounds up
		{19, 0, 0, 1},              // 0.475
		{40, 1, 1, 1},              // 1
		{123456, 3086, 3086, 3087}, // 3086.4
		{0, 0, 0, 0},
		{-100, 0, 0, 0},
	} {
		for r, want := range map[Rounding]int64{RoundDown: tt.down, 0: tt.down, RoundHalfUp: tt.half, RoundUp: tt.up} {
			if got := BanqueAuctionFee(tt.bid, r); got != want {
				t.Errorf("BanqueAuctionFee(%d, %v) = %d, want %d", tt.bid, r, got, want)
			}
		}
	}
}

// TestHourlyFeeDue: CF-BANK-WINS hourly_fee, pro rata by the second, by
// hand.
func TestHourlyFeeDue(t *testing.T) {
	for _, tt := range []struct {
		perHour, secs  int64
		down, half, up int64
	}{
		{120, 5400, 180, 180, 180}, // an hour and a half
		{120, 3600, 120, 120, 120},
		{100, 1, 0, 0, 1},                 // 0.0277...
		{100, 18, 0, 1, 1},                // 0.5
		{1, 1800, 0, 1, 1},                // half a unit
		{1, 1799, 0, 0, 1},                // 0.4997...
		{7, 1000, 1, 2, 2},                // 1.944...
		{1000, 0, 0, 0, 0},                // no time
		{0, 3600, 0, 0, 0},                // no fee
		{600, 86400, 14400, 14400, 14400}, // a day
	} {
		for r, want := range map[Rounding]int64{RoundDown: tt.down, RoundHalfUp: tt.half, RoundUp: tt.up} {
			got, err := HourlyFeeDue(HouseRules{HourlyFee: tt.perHour, CommissionRounding: r}, tt.secs)
			if err != nil || got != want {
				t.Errorf("HourlyFeeDue(%d an hour, %d s, %v) = %d, %v; want %d", tt.perHour, tt.secs, r, got, err, want)
			}
		}
	}
}

// A negative factor is refused whichever it is, even where its two's
// complement would give a quotient that fits.
func TestMulDivNegative(t *testing.T) {
	for _, tt := range [][3]int64{{-1, 1, 2}, {1, -1, 2}, {-2, 3, 4}, {3, -2, 4}, {1, 1, 0}, {1, 1, -1}} {
		if q, ok := mulDiv(tt[0], tt[1], tt[2], RoundDown); ok {
			t.Errorf("mulDiv(%d, %d, %d) = %d, true; want false", tt[0], tt[1], tt[2], q)
		}
	}
}

// The commission's range is 0..10000 basis points, both ends included.
func TestHouseRulesCommissionRange(t *testing.T) {
	for bp, valid := range map[int64]bool{-1: false, 0: true, 500: true, 10000: true, 10001: false} {
		err := HouseRules{CommissionBP: bp}.Validate()
		if (err == nil) != valid {
			t.Errorf("CommissionBP %d: %v, want valid %v", bp, err, valid)
		}
	}
}

// Zero factors are fine (0 × b / d = 0); a product of exactly d × 2^64
// needs 65 bits of quotient and is refused.
func TestMulDivEdges(t *testing.T) {
	for _, tt := range [][3]int64{{0, 5, 3}, {5, 0, 3}, {0, 0, 1}} {
		for _, r := range []Rounding{RoundDown, RoundHalfUp, RoundUp} {
			if q, ok := mulDiv(tt[0], tt[1], tt[2], r); !ok || q != 0 {
				t.Errorf("mulDiv(%d, %d, %d, %v) = %d, %v; want 0, true", tt[0], tt[1], tt[2], r, q, ok)
			}
		}
	}
	if q, ok := mulDiv(1<<62, 4, 1, RoundDown); ok { // 2^64 / 1
		t.Errorf("mulDiv(2^62, 4, 1) = %d, true; want false", q)
	}
	if q, ok := mulDiv(1<<62, 8, 2, RoundDown); ok { // 2^65 / 2
		t.Errorf("mulDiv(2^62, 8, 2) = %d, true; want false", q)
	}
}
