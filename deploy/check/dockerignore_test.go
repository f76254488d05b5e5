package check

import (
	"bufio"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// TestDockerignore: the repository's .dockerignore keeps the build
// context of deploy/docker/Dockerfile free of what must not be sent to a
// builder (history, local binaries, the local CA's key and NATS keys,
// dependencies, test output) and excludes nothing the Dockerfile's COPY
// lines need: for `COPY . .`, every file go build reads (go.work,
// go.work.sum, and in each module of go.work its go.mod, go.sum, non-test
// Go files and go:embed files).
func TestDockerignore(t *testing.T) {
	di, err := ReadDockerignore(filepath.Join(repo, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		".git", ".git/config", "bin", "bin/kustomize",
		".chemmy", ".chemmy/ca.key", ".chemmy/nats/table-svc.nk", ".k8s", ".k8s/x",
		"node_modules", "gateway/web/node_modules/x/index.js",
		"cmd/e2e/test-output/trace.txt", "table-svc/tablesvc/testdata/replay.json",
	} {
		if !di.Excludes(p) {
			t.Errorf(".dockerignore sends %s into the build context", p)
		}
	}
	for _, src := range dockerCopySources(t, filepath.Join(repo, "deploy/docker/Dockerfile")) {
		if src != "." {
			if di.Excludes(src) {
				t.Errorf("the Dockerfile copies %s, which .dockerignore excludes", src)
			}
			continue
		}
		needed := goBuildFiles(t)
		if len(needed) < 50 {
			t.Fatalf("only %d files found for go build: the walk is wrong", len(needed))
		}
		for _, f := range needed {
			if di.Excludes(f) {
				t.Errorf("go build reads %s, which .dockerignore excludes", f)
			}
		}
	}
}

// The spoilt cases: the matcher reads what Docker reads.
func TestDockerignoreMatcher(t *testing.T) {
	di := Dockerignore{{pattern: "bin"}, {pattern: "**/node_modules"}, {pattern: "*.test"}, {pattern: "docs"}, {pattern: "docs/keep.md", negate: true}}
	for p, want := range map[string]bool{
		"bin": true, "bin/x": true, "cmd/bin": false, "a/b/node_modules/c": true,
		"x.test": true, "cmd/x.test": false, "docs/a.md": true, "docs/keep.md": false, "go.work": false,
	} {
		if got := di.Excludes(p); got != want {
			t.Errorf("Excludes(%s) = %v, want %v", p, got, want)
		}
	}
}

// dockerCopySources: the build-context sources of the Dockerfile's COPY
// (and ADD) lines; a COPY --from copies from a stage, not the context.
func dockerCopySources(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || (!strings.EqualFold(f[0], "COPY") && !strings.EqualFold(f[0], "ADD")) {
			continue
		}
		args, fromStage := []string{}, false
		for _, a := range f[1:] {
			if strings.HasPrefix(a, "--") {
				fromStage = fromStage || strings.HasPrefix(a, "--from=")
				continue
			}
			args = append(args, a)
		}
		if fromStage || len(args) < 2 {
			continue
		}
		for _, s := range args[:len(args)-1] {
			out = append(out, path.Clean(s))
		}
	}
	if len(out) == 0 {
		t.Fatal("no COPY from the build context in the Dockerfile")
	}
	return out
}

// goBuildFiles: the files go build reads in the workspace, relative to
// the repository's root.
func goBuildFiles(t *testing.T) []string {
	t.Helper()
	out := []string{"go.work", "go.work.sum"}
	for _, mod := range workModules(t) {
		root := filepath.Join(repo, mod)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() {
				if p != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || fileExists(filepath.Join(p, "go.mod"))) {
					return filepath.SkipDir
				}
				return nil
			}
			switch {
			case name == "go.mod" || name == "go.sum":
			case strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go"):
				out = append(out, embedFiles(t, p)...)
			default:
				return nil
			}
			out = append(out, rel(t, p))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func workModules(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	var mods []string
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "use (":
			in = true
		case in && line == ")":
			in = false
		case in && line != "":
			mods = append(mods, line)
		case strings.HasPrefix(line, "use "):
			mods = append(mods, strings.TrimSpace(strings.TrimPrefix(line, "use ")))
		}
	}
	if len(mods) == 0 {
		t.Fatal("go.work uses no module")
	}
	return mods
}

// embedFiles: the files the //go:embed lines of a Go file name.
func embedFiles(t *testing.T, goFile string) []string {
	t.Helper()
	f, err := os.Open(goFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pats, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "//go:embed ")
		if !ok {
			continue
		}
		for _, pat := range strings.Fields(pats) {
			matches, _ := filepath.Glob(filepath.Join(filepath.Dir(goFile), strings.TrimPrefix(pat, "all:")))
			if len(matches) == 0 {
				t.Errorf("%s: //go:embed %s matches nothing", rel(t, goFile), pat)
			}
			for _, m := range matches {
				_ = filepath.WalkDir(m, func(p string, d fs.DirEntry, err error) error {
					if err == nil && !d.IsDir() {
						out = append(out, rel(t, p))
					}
					return err
				})
			}
		}
	}
	return out
}

func rel(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.Rel(repo, p)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(r)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
