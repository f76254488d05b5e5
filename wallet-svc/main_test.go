package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOperatorOf(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "CHEMMY_OPERATOR_SECRET" {
				return v
			}
			return ""
		}
	}
	if op, err := operatorOf("transfer", "", "", time.Second, env("")); op != nil || err != nil {
		t.Fatalf("transfer: %v %v", op, err)
	}
	if op, err := operatorOf("seamless", "http://127.0.0.1:7090/wallet", secretFile, time.Second, env("")); op == nil || err != nil {
		t.Fatalf("seamless with a secret file: %v %v", op, err)
	}
	if op, err := operatorOf("seamless", "http://127.0.0.1:7090/wallet", "", time.Second, env("s")); op == nil || err != nil {
		t.Fatalf("seamless with the env secret: %v %v", op, err)
	}
	for _, c := range []struct{ mode, url, file, env, want string }{
		{"bogus", "", "", "", "-wallet-mode"},
		{"transfer", "http://127.0.0.1:1", "", "", "needs -wallet-mode seamless"},
		{"seamless", "", "", "s", "needs -operator-url"},
		{"seamless", "http://127.0.0.1:1", "", "", "secret"},
		{"seamless", "http://wallet.example.com", "", "s", "plain http"},
	} {
		_, err := operatorOf(c.mode, c.url, c.file, time.Second, env(c.env))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error with %q", c, err, c.want)
		}
	}
}
