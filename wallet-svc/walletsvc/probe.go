package walletsvc

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/chemmy/chemmy/services/kit/opwallet"
)

// Defaults of the operator probe (Config.OperatorProbeInterval and
// Config.OperatorProbePlayer).
const (
	DefaultOperatorProbeInterval = 30 * time.Second
	DefaultOperatorProbePlayer   = "chemmy-probe"
	// OperatorHealthService is the gRPC health service name whose status
	// is the last operator probe's: SERVING when it proved the URL and
	// the shared secret, NOT_SERVING otherwise (seamless mode only). The
	// server's overall status ("") does not follow it (doc.go).
	OperatorHealthService = "chemmy.wallet.operator"
)

// Kinds of a failed operator probe (the label "kind" of
// chemmy_operator_probe_failures_total), with the likely cause logged.
const (
	probeBadSignature = "bad_signature" // signed, but not with our secret
	probeUnsigned     = "unsigned"      // an answer without a signature
	probeClockSkew    = "clock_skew"    // signed answer's timestamp too far from our clock
	probeTimeout      = "timeout"
	probeUnreachable  = "unreachable"       // no answer: connection, DNS, TLS
	probeBadAnswer    = "bad_answer"        // 5xx, 3xx, 408, 429, a body not understood
	probeRefusedSig   = "signature_refused" // a signed INVALID_SIGNATURE refusal
)

var probeCauses = map[string]string{
	probeBadSignature: "the operator's answers are not signed with our secret: check -operator-secret-file (or CHEMMY_OPERATOR_SECRET) against the operator's",
	probeUnsigned:     "the operator's answers are not signed: check -operator-url (a wrong path or a proxy answers unsigned)",
	probeClockSkew:    "the operator's answers are dated too far from our clock: check both clocks (NTP)",
	probeTimeout:      "the operator's wallet did not answer in time: check -operator-url, the network and -operator-timeout",
	probeUnreachable:  "the operator's wallet is unreachable: check -operator-url, DNS, the network and TLS (-operator-ca-file)",
	probeRefusedSig:   "the operator signs with our secret but refuses our signatures: check both clocks (NTP) and any proxy rewriting the path",
	probeBadAnswer:    "the operator's wallet answered neither a signed answer nor a signed refusal: check -operator-url",
}

// probeKind classifies the error of a balance call: "" when the answer
// was signed with our secret (a 200, or a refusal such as UNKNOWN_PLAYER:
// both prove the URL and the secret; but INVALID_SIGNATURE says our
// requests are refused), else one of the probe kinds. The
// HTTP adapter's errors carry no types beyond ErrUnknownOutcome: their
// text is read (client.go).
func probeKind(err error) string {
	if err == nil {
		return ""
	}
	if ref, refused := opwallet.IsRefusal(err); refused {
		if ref.Code == opwallet.CodeInvalidSignature {
			return probeRefusedSig
		}
		return ""
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "signature does not match"):
		return probeBadSignature
	case strings.Contains(msg, "away from now"):
		return probeClockSkew
	case strings.Contains(msg, "answer not trusted"):
		return probeUnsigned
	case strings.Contains(msg, "deadline exceeded") || strings.Contains(msg, "Timeout"):
		return probeTimeout
	case strings.Contains(msg, ": status ") || strings.Contains(msg, "answer"):
		return probeBadAnswer
	}
	return probeUnreachable
}

// probeOperator asks operator op's wallet for player's balance and
// reports the probe kind ("" when it proved the URL and the secret).
func (s *Service) probeOperator(ctx context.Context, op, player string) (string, error) {
	w := s.walletOf(op)
	if w == nil {
		return probeUnreachable, errors.New("no seamless wallet")
	}
	_, err := w.Balance(ctx, opwallet.BalanceRequest{PlayerID: player, Currency: s.currency})
	return probeKind(err), err
}

// probeLoop probes every operator's wallet (walletOperators: the default
// operator's and the operators file's, as configured at each round) at
// once and then every interval until ctx is done, setting
// chemmy_operator_up{operator}, the health status of
// OperatorHealthService on hs from the default operator's wallet, and
// logging an ERROR naming the operator and the likely cause when an
// operator's probe starts failing or fails otherwise, an INFO when it
// succeeds again. One operator's wallet down changes no other operator's
// series and no health status but the default operator's
// OperatorHealthService. The series of an operator no longer configured
// are deleted.
func (s *Service) probeLoop(ctx context.Context, hs *health.Server, interval time.Duration, player string) {
	last := map[string]string{} // operator -> his last probe's kind
	for {
		ops := s.walletOperators()
		kinds := make([]string, len(ops))
		errs := make([]error, len(ops))
		var wg sync.WaitGroup
		for i, op := range ops { // at once: a hanging wallet delays no other's probe
			wg.Add(1)
			go func() {
				defer wg.Done()
				kinds[i], errs[i] = s.probeOperator(ctx, op, player)
			}()
		}
		wg.Wait()
		if ctx.Err() != nil {
			return
		}
		now := map[string]string{}
		for i, op := range ops {
			kind, err := kinds[i], errs[i]
			prev, seen := last[op]
			if !seen {
				prev = "start"
			}
			now[op] = kind
			if kind == "" {
				s.opMetrics.up.WithLabelValues(op).Set(1)
				if prev != "" {
					s.log.Info("operator wallet probe: answers signed with our secret", "operator", op, "player", player)
				}
			} else {
				s.opMetrics.up.WithLabelValues(op).Set(0)
				s.opMetrics.probeFailures.WithLabelValues(op, kind).Inc()
				if prev != kind {
					s.log.Error("operator wallet probe failed: stakes cannot be taken", "operator", op, "cause", probeCauses[kind],
						"kind", kind, "err", err)
				}
			}
			if op == s.opID {
				status := healthpb.HealthCheckResponse_SERVING
				if kind != "" {
					status = healthpb.HealthCheckResponse_NOT_SERVING
				}
				hs.SetServingStatus(OperatorHealthService, status)
			}
		}
		for op := range last {
			if _, ok := now[op]; !ok { // no longer configured
				s.opMetrics.up.DeleteLabelValues(op)
				s.opMetrics.probeFailures.DeletePartialMatch(prometheus.Labels{"operator": op})
			}
		}
		last = now
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
