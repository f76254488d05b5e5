package main

import (
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chemmy/chemmy/services/kit/opwallet"
)

// operatorFromArgs parses args as wallet-svc's operator flags and builds
// the operator's wallet, with the log it wrote.
func operatorFromArgs(t *testing.T, env string, args ...string) (opwallet.Operator, string, error) {
	t.Helper()
	fs := flag.NewFlagSet("wallet-svc", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := registerOperatorFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	getenv := func(k string) string {
		if k == "CHEMMY_OPERATOR_SECRET" {
			return env
		}
		return ""
	}
	var logged bytes.Buffer
	op, err := operatorOf(*f, getenv, slog.New(slog.NewJSONHandler(&logged, nil)))
	return op, logged.String(), err
}

func TestOperatorOf(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if op, _, err := operatorFromArgs(t, ""); op != nil || err != nil {
		t.Fatalf("transfer (the default): %v %v", op, err)
	}
	if op, _, err := operatorFromArgs(t, "", "-wallet-mode", "seamless", "-operator-url", "http://127.0.0.1:7090/wallet", "-operator-secret-file", secretFile); op == nil || err != nil {
		t.Fatalf("seamless with a secret file: %v %v", op, err)
	}
	if op, _, err := operatorFromArgs(t, "s", "-wallet-mode", "seamless", "-operator-url", "http://127.0.0.1:7090/wallet"); op == nil || err != nil {
		t.Fatalf("seamless with the env secret: %v %v", op, err)
	}
	for _, c := range []struct {
		env  string
		args []string
		want string
	}{
		{"", []string{"-wallet-mode", "bogus"}, "-wallet-mode"},
		{"", []string{"-operator-url", "http://127.0.0.1:1"}, "need -wallet-mode seamless"},
		{"", []string{"-operator-allow-http"}, "need -wallet-mode seamless"},
		{"s", []string{"-wallet-mode", "seamless"}, "needs -operator-url"},
		{"", []string{"-wallet-mode", "seamless", "-operator-url", "http://127.0.0.1:1"}, "secret"},
		{"s", []string{"-wallet-mode", "seamless", "-operator-url", "http://wallet.example.com"}, "plain http"},
		{"s", []string{"-wallet-mode", "seamless", "-operator-url", "https://wallet.example.com", "-operator-ca-file", filepath.Join(t.TempDir(), "none.pem")}, "-operator-ca-file"},
		{"s", []string{"-wallet-mode", "seamless", "-operator-url", "https://wallet.example.com", "-operator-ca-file", secretFile}, "no PEM certificate"},
		{"s", []string{"-wallet-mode", "seamless", "-operator-url", "http://wallet.example.com", "-operator-allow-http", "-operator-ca-file", secretFile}, "needs an https"},
	} {
		_, _, err := operatorFromArgs(t, c.env, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error with %q", c.args, err, c.want)
		}
	}
}

// TestOperatorAllowHTTP: plain http to a non-loopback operator is refused
// unless -operator-allow-http, which logs a warning.
func TestOperatorAllowHTTP(t *testing.T) {
	url := "http://wallet.casino.internal:7090/chemmy"
	if _, _, err := operatorFromArgs(t, "s", "-wallet-mode", "seamless", "-operator-url", url); err == nil {
		t.Fatal("plain http to a non-loopback host accepted without -operator-allow-http")
	}
	op, logged, err := operatorFromArgs(t, "s", "-wallet-mode", "seamless", "-operator-url", url, "-operator-allow-http")
	if op == nil || err != nil {
		t.Fatalf("-operator-allow-http: %v %v", op, err)
	}
	if !strings.Contains(logged, `"level":"WARN"`) || !strings.Contains(logged, "private network") {
		t.Errorf("no warning logged: %q", logged)
	}
	if _, logged, _ := operatorFromArgs(t, "s", "-wallet-mode", "seamless", "-operator-url", "https://wallet.casino.internal/chemmy", "-operator-allow-http"); logged != "" {
		t.Errorf("https logged %q", logged)
	}
}

// TestOperatorCAFile: -operator-ca-file makes the adapter trust an
// operator whose certificate a private CA signed (the TLS handshake
// succeeds; without it the system roots refuse the certificate).
func TestOperatorCAFile(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	b := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(caFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	tx := opwallet.Transaction{TransactionID: "db-1", PlayerID: "alice", RoundID: "c1", Amount: 1, Currency: "EUR"}
	debit := func(args ...string) error {
		op, _, err := operatorFromArgs(t, "s", append([]string{"-wallet-mode", "seamless", "-operator-url", srv.URL + "/chemmy"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		_, err = op.Debit(context.Background(), tx)
		return err
	}
	if err := debit(); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("without -operator-ca-file: got %v, want a certificate error", err)
	}
	err := debit("-operator-ca-file", caFile)
	if !errors.Is(err, opwallet.ErrUnknownOutcome) || strings.Contains(err.Error(), "certificate") || !strings.Contains(err.Error(), "status 503") {
		t.Fatalf("with -operator-ca-file: got %v, want the operator's 503 (the handshake passed)", err)
	}
}
