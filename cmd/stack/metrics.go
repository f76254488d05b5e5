package stack

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/chemmy/chemmy/services/kit/buildinfo"
	"github.com/chemmy/chemmy/services/kit/grpcx"
)

// The stack's metrics. Each service registers its metrics on a registry
// of its own (what it would serve alone on its -metrics-addr: gRPC server
// and client metrics, its outbox relay, its store's commits and fsyncs,
// its business metrics), and the stack serves them all on one address,
// each series labelled service ("gateway", "table-svc", "wallet-svc",
// "shoe-svc"; and shard, "0", "1"..., with several shards),
// with the process's Go runtime and process metrics and chemmy_build_info
// (unlabelled: one process), and the embedded NATS server's own metrics
// (service="nats", nats.go). Nothing is counted twice: every metric belongs to one
// service.

// registry returns a new registry for the service name, gathered by
// Metrics with the label service=name and the labels of the name, value
// pairs more (shard, of a service of a shard).
func (s *Stack) registry(name string, more ...string) *prometheus.Registry {
	r := prometheus.NewRegistry()
	g := prometheus.Gatherer(grpcx.LabelGatherer{Gatherer: r, Name: "service", Value: name})
	for i := 0; i+1 < len(more); i += 2 {
		g = grpcx.LabelGatherer{Gatherer: g, Name: more[i], Value: more[i+1]}
	}
	s.gatherers = append(s.gatherers, g)
	return r
}

// Metrics gathers the metrics of every service of the stack, labelled
// service, and the process's.
func (s *Stack) Metrics() prometheus.Gatherer {
	process := prometheus.NewRegistry()
	process.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), buildinfo.Collector())
	return append(prometheus.Gatherers{process}, s.gatherers...)
}

// serveMetrics serves Metrics, /healthz and /readyz (Ready: while the
// stack serves, from the end of Start to Stop, and every service in it
// can do its job) on addr until Stop.
func (s *Stack) serveMetrics(ctx context.Context, addr string, log *slog.Logger) error {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("stack: metrics address: %w", err)
	}
	s.MetricsAddr = lis.Addr().String()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		err := grpcx.ServeGathererOn(ctx, lis, s.Metrics(), s.Ready)
		if err != nil {
			log.Error("stack metrics", "addr", addr, "err", err)
		}
		done <- err
	}()
	s.add(cancel, func() error { return <-done })
	return nil
}
