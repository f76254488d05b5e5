package main

// What `chemmy load -metrics` reads from the /metrics of the stack (chemmy
// run -metrics-addr serves every service's, with the store counters of
// each, and the process's) or of each service.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// sample is what `chemmy load` reads from one metrics endpoint.
type sample struct {
	cpu     float64            // process_cpu_seconds_total
	commits map[string]float64 // chemmy_store_commits_total by db
	fsyncs  map[string]float64 // chemmy_store_fsyncs_total by db
	// writes: chemmy_store_group_calls_total by db (the durable writes:
	// each writer's call of the service's group committer, whether it
	// shared its commit or not)
	writes map[string]float64
	// published: chemmy_outbox_published_total by db (events published)
	published map[string]float64
	// handled: grpc_server_handled_total by service label (the RPCs
	// each server answered; under chemmy run, "gateway", "table-svc"...).
	handled map[string]float64
	alloc   float64 // go_memstats_alloc_bytes_total
	// streamBytes: nats_jetstream_bytes (the events stored; chemmy run's
	// embedded NATS).
	streamBytes float64
}

// delta is what changed between two scrapes of each URL, summed.
type delta struct {
	cpu, alloc, streamBytes            float64
	fsyncs, writes, published, handled map[string]float64
}

// deltaOf sums after - before over the URLs.
func deltaOf(before, after []sample) delta {
	d := delta{fsyncs: map[string]float64{}, writes: map[string]float64{}, published: map[string]float64{}, handled: map[string]float64{}}
	for i := range after {
		b, a := before[i], after[i]
		d.cpu += a.cpu - b.cpu
		d.alloc += a.alloc - b.alloc
		d.streamBytes += a.streamBytes - b.streamBytes
		for _, m := range []struct{ to, a, b map[string]float64 }{{d.fsyncs, a.fsyncs, b.fsyncs}, {d.writes, a.writes, b.writes},
			{d.published, a.published, b.published}, {d.handled, a.handled, b.handled}} {
			for k, v := range m.a {
				m.to[k] += v - m.b[k]
			}
		}
	}
	return d
}

func (delta) sum(m map[string]float64) float64 {
	t := 0.0
	for _, v := range m {
		t += v
	}
	return t
}

// parts is m per coup, by key in order: "table-svc 1.20, wallet-svc 0.40".
func (delta) parts(m map[string]float64, perCoup func(float64) float64) string {
	keys := slices.Sorted(maps.Keys(m))
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%s %.2f", k, perCoup(m[k])))
	}
	return strings.Join(out, ", ")
}

// internal is the RPCs the services behind the gateway answered: the
// gateway's forwards and the services' calls to each other (internal
// hops, over mutual TLS).
func (d delta) internal() float64 { return d.sum(d.handled) - d.handled["gateway"] }

func (d delta) internalParts(perCoup func(float64) float64) string {
	m := maps.Clone(d.handled)
	delete(m, "gateway")
	return d.parts(m, perCoup)
}

// scrape reads a Prometheus text exposition from url.
func scrape(ctx context.Context, url string) (sample, error) {
	s := sample{commits: map[string]float64{}, fsyncs: map[string]float64{}, writes: map[string]float64{}, published: map[string]float64{}, handled: map[string]float64{}}
	if !strings.Contains(url, "://") {
		url = "http://" + url
	}
	if !strings.HasSuffix(url, "/metrics") {
		url = strings.TrimSuffix(url, "/") + "/metrics"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return s, err
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return parseMetrics(resp.Body, s)
}

// parseMetrics reads the samples load needs from a text exposition.
func parseMetrics(r io.Reader, s sample) (sample, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(r)
	if err != nil {
		return s, err
	}
	found := false
	for name, f := range families {
		for _, m := range f.GetMetric() {
			v := m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetUntyped().GetValue()
			label := func(k string) string {
				for _, l := range m.GetLabel() {
					if l.GetName() == k {
						return l.GetValue()
					}
				}
				return ""
			}
			switch name {
			case "process_cpu_seconds_total":
				s.cpu, found = v, true
			case "chemmy_store_commits_total":
				s.commits[label("db")] += v
			case "chemmy_store_fsyncs_total":
				s.fsyncs[label("db")] += v
			case "chemmy_store_group_calls_total":
				if s.writes != nil {
					s.writes[label("db")] += v
				}
			case "chemmy_outbox_published_total":
				if s.published != nil {
					s.published[label("db")] += v
				}
			case "grpc_server_handled_total":
				if s.handled != nil {
					s.handled[label("service")] += v
				}
			case "go_memstats_alloc_bytes_total":
				s.alloc = v
			case "nats_jetstream_bytes":
				s.streamBytes = v
			}
		}
	}
	if !found && len(s.fsyncs) == 0 {
		return s, errors.New("no process or store metrics")
	}
	return s, nil
}
