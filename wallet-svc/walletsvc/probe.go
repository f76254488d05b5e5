package walletsvc

import (
	"context"
	"strings"
	"time"

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

// probeOperator asks the operator's wallet for player's balance and
// reports the probe kind ("" when it proved the URL and the secret).
func (s *Service) probeOperator(ctx context.Context, player string) (string, error) {
	_, err := s.walletOf(s.opID).Balance(ctx, opwallet.BalanceRequest{PlayerID: player, Currency: s.currency})
	return probeKind(err), err
}

// probeLoop probes the operator's wallet at once and then every
// interval until ctx is done, setting chemmy_operator_up, the health
// status of OperatorHealthService on hs, and logging an ERROR naming the
// likely cause when the probe starts failing or fails otherwise, an INFO
// when it succeeds again.
func (s *Service) probeLoop(ctx context.Context, hs *health.Server, interval time.Duration, player string) {
	last := "start"
	for {
		kind, err := s.probeOperator(ctx, player)
		if ctx.Err() != nil {
			return
		}
		if kind == "" {
			s.opMetrics.up.Set(1)
			hs.SetServingStatus(OperatorHealthService, healthpb.HealthCheckResponse_SERVING)
			if last != "" {
				s.log.Info("operator wallet probe: answers signed with our secret", "player", player)
			}
		} else {
			s.opMetrics.up.Set(0)
			s.opMetrics.probeFailures.WithLabelValues(kind).Inc()
			hs.SetServingStatus(OperatorHealthService, healthpb.HealthCheckResponse_NOT_SERVING)
			if last != kind {
				s.log.Error("operator wallet probe failed: stakes cannot be taken", "cause", probeCauses[kind],
					"kind", kind, "err", err)
			}
		}
		last = kind
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
