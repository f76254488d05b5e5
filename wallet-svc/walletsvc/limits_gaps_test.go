package walletsvc

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// TestLimitsAcrossCurrencies: the player-wide limits of his default
// account (self-exclusion, session time, reality checks) bind his other
// currencies' accounts; amount limits stay with the account whose
// currency they are in.
func TestLimitsAcrossCurrencies(t *testing.T) {
	clk, e := newClockedEnv(t)
	const eur, usd = "player:alice", "player:alice@USD"
	e.deposit(eur, 10000)
	e.deposit(usd, 10000)

	// A maximum stake in EUR says nothing of USD stakes.
	e.setLimits(eur, &walletv1.PlayerLimits{MaxStake: 100})
	if _, err := e.tryHold(eur, 200); err == nil {
		t.Fatal("a EUR stake over the EUR maximum was taken")
	}
	h, err := e.tryHold(usd, 200)
	if err != nil {
		t.Fatalf("a USD stake of 200 refused by a EUR maximum: %v", err)
	}
	e.void(h)
	// A USD maximum binds USD only.
	e.setLimits(usd, &walletv1.PlayerLimits{MaxStake: 300})
	_, err = e.tryHold(usd, 400)
	wantLimit(t, err, limitMaxStake)

	// Self-exclusion set on the default account binds every currency.
	e.setLimits(eur, &walletv1.PlayerLimits{MaxStake: 100, SelfExcludedUntil: timestamppb.New(clk.Now().Add(time.Hour)),
		RealityCheckInterval: durationpb.New(20 * time.Minute)})
	_, err = e.tryHold(usd, 50)
	wantLimit(t, err, limitSelfExclusion)
	// GetPlayerLimits of the USD account shows the limits in effect
	// there: its own maximum, the player's exclusion and interval.
	got, err := e.c.GetPlayerLimits(as(operator), &walletv1.GetPlayerLimitsRequest{AccountId: usd})
	if err != nil {
		t.Fatal(err)
	}
	if l := got.GetLimits(); l.GetMaxStake() != 300 || l.GetSelfExcludedUntil() == nil ||
		l.GetRealityCheckInterval().AsDuration() != 20*time.Minute {
		t.Fatalf("USD limits in effect: %v; want max 300, the exclusion and a 20 min reality check", l)
	}
	clk.Advance(time.Hour + time.Second)
	h, err = e.tryHold(usd, 50)
	if err != nil {
		t.Fatalf("after the exclusion: %v", err)
	}
	e.void(h)
}

// TestRealityCheckInterval: the interval is kept and read back; a
// shorter one is at once, a longer one (or none) waits for the
// cooling-off like a looser limit; a negative one is refused.
func TestRealityCheckInterval(t *testing.T) {
	clk, e := newClockedEnv(t)
	const alice = "player:alice"
	e.deposit(alice, 1000)
	r := e.setLimits(alice, &walletv1.PlayerLimits{RealityCheckInterval: durationpb.New(time.Hour)})
	if r.GetLimits().GetRealityCheckInterval().AsDuration() != time.Hour {
		t.Fatalf("after setting 1 h: %v", r)
	}
	r = e.setLimits(alice, &walletv1.PlayerLimits{RealityCheckInterval: durationpb.New(15 * time.Minute)})
	if r.GetLimits().GetRealityCheckInterval().AsDuration() != 15*time.Minute || r.GetPendingLimits() != nil {
		t.Fatalf("a shorter interval: %v; want 15 min at once", r)
	}
	r = e.setLimits(alice, &walletv1.PlayerLimits{})
	if r.GetLimits().GetRealityCheckInterval().AsDuration() != 15*time.Minute || r.GetPendingLimits() == nil {
		t.Fatalf("no interval: %v; want 15 min until the cooling-off", r)
	}
	clk.Advance(DefaultLimitsCoolingOff)
	got, err := e.c.GetPlayerLimits(as(operator), &walletv1.GetPlayerLimitsRequest{AccountId: alice})
	if err != nil || got.GetLimits().GetRealityCheckInterval() != nil {
		t.Fatalf("after the cooling-off: %v %v; want no interval", got, err)
	}
	_, err = e.c.SetPlayerLimits(as(operator), &walletv1.SetPlayerLimitsRequest{RequestId: e.id("neg"), AccountId: alice,
		Limits: &walletv1.PlayerLimits{RealityCheckInterval: durationpb.New(-time.Minute)}})
	wantErr(t, err, codes.InvalidArgument, reasonInvalidArgument)
}

// TestAuctionFeeIsALoss: the banque auction fee counts against the loss
// limits with what is at stake: a fee that would pass one is refused
// (LIMIT_REACHED, nothing moved); a fee that fits is charged and counted.
func TestAuctionFeeIsALoss(t *testing.T) {
	_, e := newClockedEnv(t)
	const alice = "player:alice"
	e.deposit(alice, 10000)
	e.setLimits(alice, &walletv1.PlayerLimits{SessionLossLimit: 1010})
	bank := e.hold(alice, 1000) // the bank won at auction, held
	fee := func(id string, bid int64) (*walletv1.ChargeFeeResponse, error) {
		return e.c.ChargeFee(as(tableSvc), &walletv1.ChargeFeeRequest{RequestId: id, AccountId: alice,
			FeeType: walletv1.FeeType_FEE_TYPE_BANK_AUCTION, Bid: bid})
	}
	// 2.5% of 1000 is 25: 1000 at stake + 25 passes 1010.
	_, err := fee("a1", 1000)
	wantLimit(t, err, limitSessionLoss)
	e.wantBal(alice, 10000, 1000)
	e.void(bank)
	// With 400 at stake the fee (25 of a 1000 bid) fits, and is a loss.
	small := e.hold(alice, 400)
	if r, err := fee("a2", 1000); err != nil || r.GetFee() != 25 {
		t.Fatalf("fee: %v %v; want 25 charged", r, err)
	}
	e.void(small)
	got, err := e.c.GetPlayerLimits(as(operator), &walletv1.GetPlayerLimitsRequest{AccountId: alice})
	if err != nil || got.GetPlay().GetSessionLoss() != 25 {
		t.Fatalf("play after the fee: %v %v; want a session loss of 25", got.GetPlay(), err)
	}
	// The hourly seat fee is owed whatever the limits.
	e.setLimits(alice, &walletv1.PlayerLimits{SessionLossLimit: 30})
	if r, err := e.c.ChargeFee(as(tableSvc), &walletv1.ChargeFeeRequest{RequestId: "h1", AccountId: alice,
		FeeType: walletv1.FeeType_FEE_TYPE_HOURLY, HourlyFee: 100, SeatSeconds: 3600}); err != nil || r.GetFee() != 100 {
		t.Fatalf("hourly fee: %v %v", r, err)
	}
}

// TestTransferBalances: every transfer carries the balances it left on
// each side.
func TestTransferBalances(t *testing.T) {
	_, e := newClockedEnv(t)
	e.deposit("player:a", 1000)
	e.deposit("player:b", 1000)
	bank := e.hold("player:a", 300)
	bet := e.hold("player:b", 200)
	r := e.settle(&walletv1.SettleCoupRequest{CoupId: "c1", BankHoldId: bank.GetHoldId(), Bets: bets(bet), Outcome: walletv1.CoupOutcome_COUP_OUTCOME_BANK_WINS})
	if len(r.GetTransfers()) == 0 {
		t.Fatal("no transfers")
	}
	for _, tr := range r.GetTransfers() {
		if tr.GetDebitAccountId() == "player:b" && tr.GetDebitBalanceAfter() != 800 {
			t.Fatalf("b's balance after %v: want 800", tr)
		}
		if tr.GetCreditAccountId() == "player:a" && tr.GetCreditBalanceAfter() != 1200 {
			t.Fatalf("a's balance after %v: want 1200", tr)
		}
	}
}
