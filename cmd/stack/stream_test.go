package stack

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chemmy/chemmy/services/kit/natsauth"
	"github.com/chemmy/chemmy/services/kit/outbox"
)

// TestStackCreatesStreamWithItsLimits: the stack creates the CHEMMY
// stream with Config.Stream before any service can create it with its
// own limits, and a restart with other limits leaves it as it is.
func TestStackCreatesStreamWithItsLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the stack")
	}
	dir := t.TempDir()
	quiet := slog.New(slog.DiscardHandler)
	config := func(s *Stack) jetstream.StreamConfig {
		t.Helper()
		nc, err := outbox.Connect(s.NATSURL, "test", s.NATSKeys.SeedFile(natsauth.Reader),
			nats.CustomInboxPrefix(natsauth.InboxPrefix(natsauth.Reader)))
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		st, err := js.Stream(context.Background(), outbox.StreamName)
		if err != nil {
			t.Fatal(err)
		}
		return st.CachedInfo().Config
	}
	for i, l := range []outbox.StreamLimits{{MaxAge: 2 * time.Hour, MaxBytes: 64 << 20}, {}} {
		s, err := Start(context.Background(), Config{DataDir: dir, TokensFile: "../../deploy/local/tokens.yaml", Insecure: true, Stream: l, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		c := config(s)
		s.Stop()
		if err := s.Wait(); err != nil {
			t.Fatal(err)
		}
		if c.MaxAge != 2*time.Hour || c.MaxBytes != 64<<20 {
			t.Fatalf("start %d: stream max_age %s max_bytes %d, want the first start's 2h and 64 MiB", i+1, c.MaxAge, c.MaxBytes)
		}
	}
}

// TestStackRefusesBadStreamLimits: limits the stream cannot work with
// (an age of 1ns, which JetStream refuses, so the stream was never
// created and only a warning said so) stop Start before anything runs,
// the error naming the flag.
func TestStackRefusesBadStreamLimits(t *testing.T) {
	for flag, l := range map[string]outbox.StreamLimits{
		"-stream-max-age": {MaxAge: time.Nanosecond}, "-stream-max-bytes": {MaxBytes: 1}, "-stream-replicas": {Replicas: 6},
	} {
		dir := t.TempDir()
		s, err := Start(context.Background(), Config{DataDir: dir, TokensFile: "../../deploy/local/tokens.yaml", Insecure: true, Stream: l,
			Logger: slog.New(slog.DiscardHandler), NATSPort: -1})
		if err == nil {
			s.Stop()
			_ = s.Wait()
			t.Fatalf("%+v: started", l)
		}
		if !strings.Contains(err.Error(), flag) {
			t.Errorf("%+v: error %v, want one naming %s", l, err, flag)
		}
	}
}
