package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParse(t *testing.T) {
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "secret")
	os.WriteFile(secretFile, []byte("from-file\n"), 0o600)
	o, err := parse([]string{"-secret-file", secretFile, "-fault-late", "0.2", "-late-delay", "250ms", "-fund", "alice=100, bob=5"},
		env(map[string]string{"CHEMMY_OPERATOR_SECRET": "from-env", "CHEMMY_OPERATOR_ADMIN_TOKEN": "tok"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if string(o.cfg.Secret) != "from-file" || o.cfg.AdminToken != "tok" || o.cfg.Addr != "127.0.0.1:7090" {
		t.Fatalf("config %+v", o.cfg)
	}
	if o.cfg.Faults.Late != 0.2 || o.cfg.Faults.LateMS != 250 || o.cfg.Faults.HangMS != 10_000 {
		t.Fatalf("faults %+v", o.cfg.Faults)
	}
	if o.cfg.NewSecret != nil {
		t.Fatalf("a new secret without -new-secret-file: %q", o.cfg.NewSecret)
	}
	newFile := filepath.Join(dir, "new")
	os.WriteFile(newFile, []byte("rotated-in\n"), 0o600)
	if r, err := parse([]string{"-secret-file", secretFile, "-new-secret-file", newFile}, env(nil), io.Discard); err != nil || string(r.cfg.NewSecret) != "rotated-in" {
		t.Fatalf("-new-secret-file: %q %v", r.cfg.NewSecret, err)
	}
	if len(o.fund) != 2 || o.fund["alice"] != 100 || o.fund["bob"] != 5 {
		t.Fatalf("fund %v", o.fund)
	}

	for name, args := range map[string][]string{
		"no secret":   {},
		"rates":       {"-fault-error", "0.6", "-fault-late", "0.6"},
		"fund":        {"-fund", "alice"},
		"extra":       {"stray"},
		"log level":   {"-log-level", "loud"},
		"zero hang":   {"-hang", "0s"},
		"bad fund n":  {"-fund", "alice=-1"},
		"secret file": {"-secret-file", filepath.Join(dir, "missing")},
		"same secret": {"-secret-file", secretFile, "-new-secret-file", secretFile},
		"new missing": {"-new-secret-file", filepath.Join(dir, "missing")},
	} {
		e := map[string]string{"CHEMMY_OPERATOR_SECRET": "s"}
		if name == "no secret" {
			e = nil
		}
		if _, err := parse(args, env(e), io.Discard); err == nil {
			t.Errorf("%s: %v accepted", name, args)
		}
	}
}
