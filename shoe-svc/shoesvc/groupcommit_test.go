package shoesvc

import (
	"fmt"
	"sync"
	"testing"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
)

// Deals from many tables at once share commits (group commit) and stay
// exactly once: every request gets its own position, in each shoe the
// positions are 0..n-1, and a request sent again is answered the same.
func TestConcurrentDealsGroupCommitted(t *testing.T) {
	c, _, _ := newEnv(t, fixedSeed(7))
	const shoes, perShoe, dealers = 4, 12, 3
	ids := make([]string, shoes)
	for i := range ids {
		ids[i] = create(t, c, &shoev1.CreateShoeRequest{}).ShoeId
	}
	var mu sync.Mutex
	got := map[string]*shoev1.DealCardResponse{}
	var wg sync.WaitGroup
	for s := range shoes {
		for d := range dealers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range perShoe / dealers {
					rid := fmt.Sprintf("coup-%d-%d/card/%d", s, d, n)
					r := deal(t, c, ids[s], rid)
					mu.Lock()
					got[ids[s]+" "+rid] = r
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	for s, id := range ids {
		seen := map[int32]bool{}
		for d := range dealers {
			for n := range perShoe / dealers {
				rid := fmt.Sprintf("coup-%d-%d/card/%d", s, d, n)
				r := got[id+" "+rid]
				if seen[r.Position] {
					t.Fatalf("shoe %d: position %d dealt twice", s, r.Position)
				}
				seen[r.Position] = true
				if again := deal(t, c, id, rid); again.Position != r.Position || again.Card.Code != r.Card.Code {
					t.Fatalf("%s sent again: %v, first %v", rid, again, r)
				}
			}
		}
		for p := range int32(perShoe) {
			if !seen[p] {
				t.Fatalf("shoe %d: position %d never dealt", s, p)
			}
		}
		if sh := getShoe(t, c, id); sh.CardsDealt != perShoe {
			t.Fatalf("shoe %d: %d cards dealt, want %d", s, sh.CardsDealt, perShoe)
		}
	}
}
