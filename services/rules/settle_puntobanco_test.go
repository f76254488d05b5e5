package rules

import (
	"errors"
	"math"
	"testing"
)

// TestTotalHouse: the house's totals of settled punto banco stakes, worked
// by hand. A bank bet of 100 won (commission 5), a player bet of 200 lost,
// a tie bet of 10 won at 8 to 1 (80), a pushed player bet of 50: the
// house's bank gains 200 - 100 - 80 = 20 and takes 5 of commission.
func TestTotalHouse(t *testing.T) {
	got, err := TotalHouse([]StakeResult{
		{Won: 100, Commission: 5},
		{Lost: 200},
		{Won: 80},
		{Returned: true},
	})
	if err != nil || got != (HouseTotals{Commission: 5, HouseNet: 20}) {
		t.Fatalf("TotalHouse = %+v, %v; want commission 5, house net 20", got, err)
	}
	if got, err := TotalHouse(nil); err != nil || got != (HouseTotals{}) {
		t.Fatalf("no stakes: %+v, %v", got, err)
	}
	// Only the house's losses: -(300 + 700) = -1000.
	if got, _ := TotalHouse([]StakeResult{{Won: 300}, {Won: 700}}); got.HouseNet != -1000 {
		t.Fatalf("house net %d, want -1000", got.HouseNet)
	}
	for _, rs := range [][]StakeResult{
		{{Lost: math.MaxInt64}, {Lost: 1}},
		{{Won: math.MaxInt64}, {Won: 2}},
		{{Won: math.MaxInt64, Commission: math.MaxInt64}, {Won: 1, Commission: 1}},
	} {
		if _, err := TotalHouse(rs); !errors.Is(err, ErrOverflow) {
			t.Errorf("%+v: %v, want ErrOverflow", rs, err)
		}
	}
}
