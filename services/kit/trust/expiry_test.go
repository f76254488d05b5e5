package trust

import (
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// expiries gathers ExpiryMetric from c, by cert.
func expiries(t *testing.T, c prometheus.Collector) map[string]float64 {
	t.Helper()
	r := prometheus.NewRegistry()
	r.MustRegister(c)
	mfs, err := r.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != ExpiryMetric {
			continue
		}
		for _, m := range mf.GetMetric() {
			out[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
		}
	}
	return out
}

// TestExpiryMetric: the service's certificate's NotAfter and the CA's
// (30 days, as NewDevPKI makes them), and the rotated certificate's as
// soon as it is read again.
func TestExpiryMetric(t *testing.T) {
	if (*Material)(nil).Collector() != nil {
		t.Error("insecure material has a collector")
	}
	pki, m := devGateway(t)
	in30 := float64(time.Now().Add(30 * 24 * time.Hour).Unix())
	got := expiries(t, m.Collector())
	if len(got) != 2 || math.Abs(got["service"]-in30) > 120 || math.Abs(got["ca"]-in30) > 120 {
		t.Fatalf("expiries %v, want service and ca at about %v", got, in30)
	}
	rotate(t, pki, m)
	in2 := float64(time.Now().Add(48 * time.Hour).Unix())
	if got := expiries(t, m.Collector()); math.Abs(got["service"]-in2) > 120 || math.Abs(got["ca"]-in30) > 120 {
		t.Errorf("after rotation: expiries %v, want service at about %v", got, in2)
	}
}
