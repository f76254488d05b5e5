package shoesvc

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind (server,
// relay, client connections). NATS is never started here.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
