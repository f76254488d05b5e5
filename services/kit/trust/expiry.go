package trust

import (
	"crypto/x509"
	"encoding/pem"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ExpiryMetric is the name of the certificate expiry gauge (Collector).
const ExpiryMetric = "chemmy_certificate_expiry_timestamp_seconds"

var expiryDesc = prometheus.NewDesc(ExpiryMetric,
	"When a certificate this process uses stops being valid (NotAfter), in seconds since the Unix epoch, by cert: "+
		"service (its own certificate, as last re-read: a rotated file counts at once) or ca (the first of the suite's CA certificates to expire). "+
		"Alert on "+ExpiryMetric+" - time() < 7 * 86400 (cert-manager renews 10 days before; deploy/k8s alerts so).",
	[]string{"cert"}, nil)

// Collector exports ExpiryMetric for m's certificates; nil for nil m
// (insecure: no certificate).
func (m *Material) Collector() prometheus.Collector {
	if m == nil {
		return nil
	}
	return expiryCollector{m}
}

type expiryCollector struct{ m *Material }

func (c expiryCollector) Describe(ch chan<- *prometheus.Desc) { ch <- expiryDesc }

func (c expiryCollector) Collect(ch chan<- prometheus.Metric) {
	if cert, err := c.m.pair.get(); err == nil && cert.Leaf != nil {
		ch <- prometheus.MustNewConstMetric(expiryDesc, prometheus.GaugeValue, unix(cert.Leaf.NotAfter), "service")
	}
	if !c.m.caNotAfter.IsZero() {
		ch <- prometheus.MustNewConstMetric(expiryDesc, prometheus.GaugeValue, unix(c.m.caNotAfter), "ca")
	}
}

func unix(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// firstExpiry is the earliest NotAfter of the PEM certificates in b
// (zero when none parses).
func firstExpiry(b []byte) time.Time {
	var first time.Time
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return first
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			continue
		}
		if first.IsZero() || c.NotAfter.Before(first) {
			first = c.NotAfter
		}
	}
}
