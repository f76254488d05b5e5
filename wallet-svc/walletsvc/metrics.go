package walletsvc

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// walletMetrics are the wallet's business metrics. Each ledger change
// is counted when its transaction commits (bbolt's Tx.OnCommit, set by
// observe before flush): a request answered from its idempotency record
// changes nothing and counts nothing, a group commit rolled back counts
// nothing (its functions run again), so each transfer and settlement
// counts once. The hold gauges are loaded from the ledger at start and
// follow every commit after it. Every series has an "operator" label: the
// operator (tenant) whose accounts the money is on (docs/design-tenancy.md:
// the business series get it, the transport series do not).
type walletMetrics struct {
	def string // the wallet's default currency
	// op is the wallet's default operator (Config.OperatorID), whose
	// series exist from the start.
	op string

	transfers   *prometheus.CounterVec
	commission  *prometheus.CounterVec
	fees        *prometheus.CounterVec
	settlements *prometheus.CounterVec
	holdsOpen   *prometheus.GaugeVec
	escrow      *prometheus.GaugeVec
}

// settleVariants is the game (the variant label of table-svc's metrics)
// of each settlement method.
var settleVariants = map[string]string{
	"SettleCoup":       "chemin_de_fer",
	"SettlePuntoBanco": "punto_banco",
	"SettleBanque":     "baccarat_banque",
	"SettleOld":        "old_baccarat",
}

func newWalletMetrics(def, op string) *walletMetrics {
	return &walletMetrics{
		def: def, op: op,
		transfers: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chemmy_wallet_transfers_total",
			Help: "Ledger transfers committed, by reason (deposit, withdrawal, bet_lost, bet_won, commission, hold_posted, fees...)."},
			[]string{"operator", "reason"}),
		commission: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chemmy_commission_minor_units_total",
			Help: "Commission the house took from coup settlements (paid into house:commission), in minor units, by game (variant) and currency."},
			[]string{"operator", "variant", "currency"}),
		fees: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chemmy_fees_minor_units_total",
			Help: "Fees the house charged (ChargeFee: bank auction, hourly seat fees; paid into house:commission), in minor units, by reason and currency."},
			[]string{"operator", "reason", "currency"}),
		settlements: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chemmy_settlements_total",
			Help: "Coups settled (their money moved, once per coup), by game (variant)."}, []string{"operator", "variant"}),
		holdsOpen: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "chemmy_holds_open",
			Help: "Holds open (money reserved for a bet or a bank, not yet posted, released or expired), by currency."}, []string{"operator", "currency"}),
		escrow: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "chemmy_escrow_minor_units",
			Help: "Money reserved by the open holds, in minor units, by currency."}, []string{"operator", "currency"}),
	}
}

// register loads the hold gauges from db (before anything writes: the
// service's start) and registers the metrics on reg.
func (m *walletMetrics) register(reg prometheus.Registerer, db *bolt.DB) error {
	start := opCur{m.op, m.def}
	open, held := map[opCur]float64{start: 0}, map[opCur]float64{start: 0}
	err := db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketHolds).ForEach(func(k, v []byte) error {
			h := &walletv1.Hold{}
			if err := proto.Unmarshal(v, h); err != nil {
				return fmt.Errorf("wallet: corrupt hold %q: %w", k, err)
			}
			if h.GetState() == walletv1.HoldState_HOLD_STATE_OPEN {
				k := m.of(h.GetAccountId())
				open[k]++
				held[k] += float64(h.GetAmount())
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	// Every game's series start at zero (the default operator's, in the
	// default currency).
	for _, variant := range settleVariants {
		m.commission.WithLabelValues(m.op, variant, m.def)
		m.settlements.WithLabelValues(m.op, variant)
	}
	for _, reason := range []string{reasonBankAuctionFee, reasonHourlyFee} {
		m.fees.WithLabelValues(m.op, reason, m.def)
	}
	for k, n := range open {
		m.holdsOpen.WithLabelValues(k.op, k.cur).Set(n)
		m.escrow.WithLabelValues(k.op, k.cur).Set(held[k])
	}
	for _, c := range []prometheus.Collector{m.transfers, m.commission, m.fees, m.settlements, m.holdsOpen, m.escrow} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("wallet: metrics: %w", err)
		}
	}
	return nil
}

// holdDelta is how a transaction changes the open holds of a currency.
type holdDelta struct{ open, amount int64 }

// opCur is an operator and a currency: the labels of the hold gauges.
type opCur struct{ op, cur string }

// of is the operator and currency of the account keyed id.
func (m *walletMetrics) of(id string) opCur {
	return opCur{operatorOfKey(id, m.op), currencyOf(id, m.def)}
}

// observe counts t's changes when its transaction commits. Call it just
// before t.flush (the holds it changed are still stored as they were).
// method and key are the request's (idempotent); empty for the sweep.
func (m *walletMetrics) observe(t *txn, method, key string) {
	if m == nil {
		return
	}
	holds := map[opCur]holdDelta{}
	stored := t.tx.Bucket(bucketHolds)
	for id := range t.dirty {
		if v := stored.Get([]byte(id)); v != nil {
			was := &walletv1.Hold{}
			if proto.Unmarshal(v, was) == nil && was.GetState() == walletv1.HoldState_HOLD_STATE_OPEN {
				k := m.of(was.GetAccountId())
				d := holds[k]
				d.open, d.amount = d.open-1, d.amount-was.GetAmount()
				holds[k] = d
			}
		}
		if h := t.holds[id]; h.GetState() == walletv1.HoldState_HOLD_STATE_OPEN {
			k := m.of(h.GetAccountId())
			d := holds[k]
			d.open, d.amount = d.open+1, d.amount+h.GetAmount()
			holds[k] = d
		}
	}
	type paid struct{ op, reason, currency string }
	counts, house := map[[2]string]int{}, map[paid]int64{}
	for _, p := range t.transfers {
		op := operatorOfKey(p.tr.GetDebitAccountId(), m.op)
		counts[[2]string{op, p.tr.GetReason()}]++
		if base, _ := splitCurrency(bare(p.tr.GetCreditAccountId()), m.def); base == AccountCommission {
			house[paid{op, p.tr.GetReason(), p.tr.GetCurrencyCode()}] += p.tr.GetAmount()
		}
	}
	settledBy := orDefault(t.sc.op, m.op)
	variant, settled := settleVariants[method]
	settled = settled && isCoupKey(key)
	t.tx.OnCommit(func() {
		for k, d := range holds {
			m.holdsOpen.WithLabelValues(k.op, k.cur).Add(float64(d.open))
			m.escrow.WithLabelValues(k.op, k.cur).Add(float64(d.amount))
		}
		for k, n := range counts {
			m.transfers.WithLabelValues(k[0], k[1]).Add(float64(n))
		}
		for p, amount := range house {
			if p.reason == reasonCommission {
				m.commission.WithLabelValues(p.op, variant, p.currency).Add(float64(amount))
			} else {
				m.fees.WithLabelValues(p.op, p.reason, p.currency).Add(float64(amount))
			}
		}
		if settled {
			m.settlements.WithLabelValues(settledBy, variant).Inc()
		}
	})
}
