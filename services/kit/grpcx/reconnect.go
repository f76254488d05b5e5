package grpcx

import (
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

// ReconnectDelayMax is the longest a client of a chemmy service waits
// between two attempts to connect to it (ms-scale units: a
// time.Duration).
const ReconnectDelayMax = 2 * time.Second

// Reconnect is the dial option of every internal connection (the
// gateway to its backends, table-svc to shoe-svc and wallet-svc): a
// backend that went away is tried again after 100 ms, the wait growing
// 1.6 times per failure to at most ReconnectDelayMax (gRPC's default
// grows to 120 s). Each failed attempt also looks the backend's name up
// again, so a pod that comes back at a new address (a StatefulSet's pod
// rescheduled) is reached within ReconnectDelayMax of being Ready, not
// after minutes, while the calls meanwhile fail fast UNAVAILABLE for
// their clients to retry.
func Reconnect() grpc.DialOption {
	return grpc.WithConnectParams(grpc.ConnectParams{
		Backoff: backoff.Config{
			BaseDelay:  100 * time.Millisecond,
			Multiplier: 1.6,
			Jitter:     0.2,
			MaxDelay:   ReconnectDelayMax,
		},
		MinConnectTimeout: 5 * time.Second,
	})
}
