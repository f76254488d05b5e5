package stack

import (
	"github.com/nats-io/nats-server/v2/server"
	"github.com/prometheus/client_golang/prometheus"
)

// natsCollector exports a few of the embedded NATS server's own figures,
// read in process from its monitoring (Varz and Jsz: what its HTTP
// monitoring port would serve as /varz and /jsz, without opening one),
// when scraped. The stack serves them labelled service="nats". An
// external NATS (-nats-url) is not the stack's to watch: its own
// monitoring port and the NATS Prometheus exporter do that.
type natsCollector struct{ ns *server.Server }

// natsMetric is one series: its description, its type and its value.
type natsMetric struct {
	desc  *prometheus.Desc
	typ   prometheus.ValueType
	value func(*server.Varz, *server.JSInfo) float64
}

func natsDesc(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, nil, nil) }

var natsMetrics = []natsMetric{
	{natsDesc("nats_connections", "Client connections open on the embedded NATS server (each service's, the readers', the watchers')."),
		prometheus.GaugeValue, func(v *server.Varz, _ *server.JSInfo) float64 { return float64(v.Connections) }},
	{natsDesc("nats_subscriptions", "Subscriptions on the embedded NATS server."),
		prometheus.GaugeValue, func(v *server.Varz, _ *server.JSInfo) float64 { return float64(v.Subscriptions) }},
	{natsDesc("nats_slow_consumers_total", "Clients the embedded NATS server disconnected for reading too slowly."),
		prometheus.CounterValue, func(v *server.Varz, _ *server.JSInfo) float64 { return float64(v.SlowConsumers) }},
	{natsDesc("nats_in_msgs_total", "Messages the embedded NATS server received."),
		prometheus.CounterValue, func(v *server.Varz, _ *server.JSInfo) float64 { return float64(v.InMsgs) }},
	{natsDesc("nats_out_msgs_total", "Messages the embedded NATS server sent."),
		prometheus.CounterValue, func(v *server.Varz, _ *server.JSInfo) float64 { return float64(v.OutMsgs) }},
	{natsDesc("nats_in_bytes_total", "Bytes the embedded NATS server received."),
		prometheus.CounterValue, func(v *server.Varz, _ *server.JSInfo) float64 { return float64(v.InBytes) }},
	{natsDesc("nats_out_bytes_total", "Bytes the embedded NATS server sent."),
		prometheus.CounterValue, func(v *server.Varz, _ *server.JSInfo) float64 { return float64(v.OutBytes) }},
	{natsDesc("nats_jetstream_streams", "JetStream streams (chemmy has one, CHEMMY)."),
		prometheus.GaugeValue, func(_ *server.Varz, j *server.JSInfo) float64 { return float64(j.Streams) }},
	{natsDesc("nats_jetstream_consumers", "JetStream consumers (a WatchTable's, a chemmy events', the relays' none)."),
		prometheus.GaugeValue, func(_ *server.Varz, j *server.JSInfo) float64 { return float64(j.Consumers) }},
	{natsDesc("nats_jetstream_messages", "Messages stored in JetStream (the events kept by the stream's limits)."),
		prometheus.GaugeValue, func(_ *server.Varz, j *server.JSInfo) float64 { return float64(j.Messages) }},
	{natsDesc("nats_jetstream_bytes", "Bytes of the messages stored in JetStream."),
		prometheus.GaugeValue, func(_ *server.Varz, j *server.JSInfo) float64 { return float64(j.Bytes) }},
	{natsDesc("nats_jetstream_storage_bytes", "File storage JetStream uses (under <data-dir>/nats)."),
		prometheus.GaugeValue, func(_ *server.Varz, j *server.JSInfo) float64 { return float64(j.Store) }},
	{natsDesc("nats_jetstream_memory_bytes", "Memory storage JetStream uses (the watchers' consumers)."),
		prometheus.GaugeValue, func(_ *server.Varz, j *server.JSInfo) float64 { return float64(j.Memory) }},
	{natsDesc("nats_jetstream_api_requests_total", "JetStream API requests (stream and consumer management, direct gets)."),
		prometheus.CounterValue, func(_ *server.Varz, j *server.JSInfo) float64 { return float64(j.API.Total) }},
	{natsDesc("nats_jetstream_api_errors_total", "JetStream API requests answered with an error."),
		prometheus.CounterValue, func(_ *server.Varz, j *server.JSInfo) float64 { return float64(j.API.Errors) }},
}

func (c natsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range natsMetrics {
		ch <- m.desc
	}
}

func (c natsCollector) Collect(ch chan<- prometheus.Metric) {
	v, err := c.ns.Varz(&server.VarzOptions{})
	if err != nil {
		return
	}
	j, err := c.ns.Jsz(&server.JSzOptions{})
	if err != nil || j == nil {
		j = &server.JSInfo{}
	}
	for _, m := range natsMetrics {
		ch <- prometheus.MustNewConstMetric(m.desc, m.typ, m.value(v, j))
	}
}
