package tablesvc

import (
	"math/rand/v2"
	"testing"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// TestScenarioShoe plays a whole shuffled shoe and more: four seated
// players and a gallery, bets in turn with partial cover, passes, bancos
// and banco suivi, decisions at every option, banks held, passed and lost,
// the cut card and the next shoe. After every coup it checks the money
// against the coup's result: each punter won or lost exactly his bet, the
// banker the rest less commission, the house the commission, nothing held
// but the bank, and the total conserved (RULES.md CF-*).
func TestScenarioShoe(t *testing.T) {
	if testing.Short() {
		t.Skip("plays about a hundred coups")
	}
	h := newHarness(t)
	players := []string{"alice", "bob", "carol", "dave", "erin"}
	const fund = 1_000_000_000
	h.fund(fund, players...)
	accounts := []string{"player:alice", "player:bob", "player:carol", "player:dave", "player:erin"}
	created, err := h.tables.CreateTable(h.as("croupier"), &tablev1.CreateTableRequest{RequestId: h.rid(), HouseRules: &tablev1.HouseRules{MinimumBank: 200}})
	if err != nil {
		t.Fatal(err)
	}
	id := created.GetTable().GetTableId()
	for _, p := range players[:4] {
		h.join(id, p)
	}
	if _, err := h.tables.JoinGallery(h.as("erin"), &tablev1.JoinGalleryRequest{RequestId: h.rid(), TableId: id, PlayerId: "erin"}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	firstShoe := created.GetTable().GetShoeId()
	seen := map[string]int{}
	balances := func() map[string]int64 {
		m := map[string]int64{}
		for _, a := range append(accounts, "house:commission") {
			m[a], _ = h.account(a)
		}
		return m
	}
	before := balances()
	var coups int64
	for step := 0; step < 3000 && coups < 100; step++ {
		tbl := h.get(id)
		switch tbl.GetState() {
		case tablev1.TableState_TABLE_STATE_OFFERING_BANK:
			p := tbl.GetOfferedPlayerId()
			if rng.IntN(4) == 0 {
				seen["bank declined"]++
				if _, err := h.tables.DeclineBank(h.as(p), &tablev1.DeclineBankRequest{RequestId: h.rid(), TableId: id, PlayerId: p}); err != nil {
					t.Fatal(err)
				}
				break
			}
			h.acceptBank(id, p, int64(200+rng.IntN(20)*100))
		case tablev1.TableState_TABLE_STATE_BETTING:
			cp := tbl.GetCoup()
			if len(cp.GetBets()) == 0 && cp.GetNumber() > 1 && rng.IntN(8) == 0 {
				seen["bank passed"]++
				if _, err := h.tables.PassBank(h.as(tbl.GetBankerPlayerId()), &tablev1.PassBankRequest{RequestId: h.rid(), TableId: id, PlayerId: tbl.GetBankerPlayerId()}); err != nil {
					t.Fatal(err)
				}
				break
			}
			if s := tbl.GetBancoSuiviPlayerId(); s != "" && len(cp.GetBets()) == 0 && rng.IntN(2) == 0 {
				seen["banco suivi"]++
				if _, err := h.tables.CallBanco(h.as(s), &tablev1.CallBancoRequest{RequestId: h.rid(), TableId: id, PlayerId: s}); err != nil {
					t.Fatal(err)
				}
				break
			}
			p := cp.GetTurnPlayerId()
			switch r := rng.IntN(10); {
			case r == 0 && tbl.GetBancoSuiviPlayerId() == "":
				seen["banco"]++
				if _, err := h.tables.CallBanco(h.as(p), &tablev1.CallBancoRequest{RequestId: h.rid(), TableId: id, PlayerId: p}); err != nil {
					t.Fatal(err)
				}
			case r < 3:
				if _, err := h.tables.DeclineBet(h.as(p), &tablev1.DeclineBetRequest{RequestId: h.rid(), TableId: id, PlayerId: p}); err != nil {
					t.Fatal(err)
				}
			default:
				amount := 1 + rng.Int64N(cp.GetUncovered())
				if p == "erin" {
					seen["gallery bet"]++
				}
				h.mustBet(id, p, amount)
			}
		case tablev1.TableState_TABLE_STATE_DECISION:
			seen["decision"]++
			if _, err := h.decide(id, tbl.GetCoup().GetDecisionPlayerId(), rng.IntN(2) == 0); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("step %d: table in %v", step, tbl.GetState())
		}
		tbl = h.get(id)
		if tbl.GetCoupsPlayed() == coups {
			continue
		}
		// A coup was settled: check its money.
		coups = tbl.GetCoupsPlayed()
		last := tbl.GetLastCoup()
		after := balances()
		want := map[string]int64{}
		for k, v := range before {
			want[k] = v
		}
		banker := "player:" + last.GetBankerPlayerId()
		var lost, paid int64
		for _, b := range last.GetBets() {
			switch last.GetOutcome() {
			case tablev1.Outcome_OUTCOME_BANK_WINS:
				want["player:"+b.GetPlayerId()] -= b.GetAmount()
				lost += b.GetAmount()
			case tablev1.Outcome_OUTCOME_BANK_LOSES:
				want["player:"+b.GetPlayerId()] += b.GetAmount()
				paid += b.GetAmount()
			}
		}
		commission := lost * 500 / 10000
		want[banker] += lost - commission - paid
		want["house:commission"] += commission
		for k, w := range want {
			if after[k] != w {
				t.Fatalf("coup %d (%v, bets %v): %s = %d, want %d", last.GetNumber(), last.GetOutcome(), last.GetBets(), k, after[k], w)
			}
		}
		var total, held int64
		for _, a := range accounts {
			resp, err := h.wallets.GetAccount(h.as("op"), &walletv1.GetAccountRequest{AccountId: a})
			if err != nil {
				t.Fatal(err)
			}
			total += resp.GetAccount().GetBalance()
			held += resp.GetAccount().GetHeld()
		}
		total += after["house:commission"]
		if total != fund*int64(len(players)) || held != tbl.GetBank() {
			t.Fatalf("coup %d: total %d (want %d), held %d (want the bank %d)", last.GetNumber(), total, fund*int64(len(players)), held, tbl.GetBank())
		}
		seen[last.GetOutcome().String()]++
		before = after
	}
	if coups < 100 {
		t.Fatalf("only %d coups played", coups)
	}
	if h.get(id).GetShoeId() == firstShoe {
		t.Errorf("100 coups and still the first shoe")
	}
	for _, k := range []string{"banco", "banco suivi", "bank passed", "bank declined", "decision", "gallery bet",
		"OUTCOME_BANK_WINS", "OUTCOME_BANK_LOSES", "OUTCOME_STAND_OFF"} {
		if seen[k] == 0 {
			t.Errorf("the scenario never saw %q: %v", k, seen)
		}
	}
	t.Logf("%d coups: %v", coups, seen)
}
