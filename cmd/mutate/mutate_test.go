package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = `package p

import "fmt"

func F(a, b int, s string) (int, bool) {
	if a < b && !(a == 3) {
		a += b * 2
	}
	a++
	s = s + "x"
	return a % b, a >= b || s != ""
}

func G(n int) int { return n - 1 }

var msg = fmt.Sprint("a" + "b")
`

func TestEnumerate(t *testing.T) {
	ms, err := Enumerate("p/p.go", []byte(sample), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.String())
	}
	want := []string{
		"p/p.go:6:7: < → <=",
		"p/p.go:6:11: && → ||",
		"p/p.go:6:14: ! → (removed)",
		"p/p.go:6:18: == → !=",
		"p/p.go:7:5: += → -=",
		"p/p.go:7:10: * → /",
		"p/p.go:9:3: ++ → --",
		"p/p.go:11:11: % → *",
		"p/p.go:11:18: >= → >",
		"p/p.go:11:23: || → &&",
		"p/p.go:11:28: != → ==",
		"p/p.go:14:30: - → +",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("mutants:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	only, err := Enumerate("p/p.go", []byte(sample), map[string]bool{"G": true})
	if err != nil || len(only) != 1 || only[0].Func != "G" {
		t.Fatalf("funcs filter: %v %v", only, err)
	}
}

func TestApply(t *testing.T) {
	ms, _ := Enumerate("p/p.go", []byte(sample), nil)
	for _, m := range ms {
		out := string(m.Apply([]byte(sample)))
		if out == sample {
			t.Errorf("%s: no change", m)
		}
		// Exactly the operator changed: the rest is the same.
		if got, want := len(out)-len(sample), len(m.To)-len(m.From); got != want {
			t.Errorf("%s: length changed by %d, want %d", m, got, want)
		}
		if !strings.HasPrefix(out, sample[:m.Offset]) || !strings.HasSuffix(out, sample[m.Offset+len(m.From):]) {
			t.Errorf("%s: changed outside the operator", m)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Apply to another source did not panic")
		}
	}()
	ms[0].Apply([]byte("package p\n"))
}

// Run judges every mutant through the overlay and never writes to the
// tree: the files are byte-identical afterwards, whatever the outcomes.
func TestRunLeavesTheTreeAsItWas(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "p")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\n\nfunc f(a int) bool { return a < 1 }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := treeSum(t, root)
	n := 0
	run := func(_ context.Context, overlay string, phase Phase, _ Target) Outcome {
		if phase != ShortTests {
			t.Errorf("simulation phase run with Sim off")
		}
		b, err := os.ReadFile(overlay)
		if err != nil || !bytes.Contains(b, []byte(filepath.Join(dir, "p.go"))) {
			t.Errorf("overlay %s: %v", b, err)
		}
		n++
		switch n % 4 {
		case 0:
			return Survived
		case 1:
			return Killed
		case 2:
			return TimedOut
		}
		return BuildFailed
	}
	var out, log bytes.Buffer
	res, err := Run(context.Background(), Config{Root: root, Targets: []Target{{Name: "p", Dir: "p"}}, Out: &out, Log: &log, Run: run})
	if err != nil {
		t.Fatal(err)
	}
	if n != 12 || res.Killed != 3 || res.TimedOut != 3 || res.BuildFailed != 3 || res.Survived != 3 {
		t.Fatalf("ran %d, result %+v", n, res)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; last != "mutation score: 6/9 (0.67)" {
		t.Errorf("last line %q", last)
	}
	if !strings.HasPrefix(lines[0], "survived: p/p.go:") {
		t.Errorf("first line %q", lines[0])
	}
	if after := treeSum(t, root); after != before {
		t.Error("the tree changed")
	}
}

func treeSum(t *testing.T, root string) [32]byte {
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		h.Write([]byte(p))
		h.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return s
}

// A target's Shell judges exactly the mutants its short tests let
// through, before the simulation; with Shell off it is never run.
func TestShellJudgesWhatTheShortTestsLetThrough(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "p")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, on := range []bool{true, false} {
		short, shell, sim := 0, 0, 0
		run := func(_ context.Context, _ string, phase Phase, tg Target) Outcome {
			switch phase {
			case ShortTests:
				short++
				if short%2 == 1 { // the odd ones killed here
					return Killed
				}
				return Survived
			case ShellTests:
				if tg.Shell == nil || tg.Shell.Pkg != "./shell" {
					t.Errorf("shell phase for %+v", tg)
				}
				shell++
				if shell%2 == 1 {
					return Killed
				}
				return Survived
			}
			sim++
			return Survived
		}
		var out, log bytes.Buffer
		res, err := Run(context.Background(), Config{Root: root, Shell: on, Sim: true,
			Targets: []Target{{Name: "p", Dir: "p", Shell: &TestSet{Pkg: "./shell"}}}, Out: &out, Log: &log, Run: run})
		if err != nil {
			t.Fatal(err)
		}
		// 12 mutants: 6 killed by the short tests; with the shell, 3 of
		// the other 6 by it and the last 3 go to the simulation.
		wantShell, wantSim, wantKilled := 6, 3, 9
		if !on {
			wantShell, wantSim, wantKilled = 0, 6, 6
		}
		if short != 12 || shell != wantShell || sim != wantSim || res.Killed != wantKilled {
			t.Errorf("shell %v: short %d, shell %d, sim %d, killed %d; want 12, %d, %d, %d", on, short, shell, sim, res.Killed, wantShell, wantSim, wantKilled)
		}
	}
}
