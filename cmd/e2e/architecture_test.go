package e2e

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docPath is a path named in a code span of a Markdown file, and its line.
type docPath struct {
	line int
	path string
}

// pathEndings make a code span a path even without a slash.
var pathEndings = []string{".go", ".md", ".proto", ".yaml"}

// pathPlaceholder is a <name> in a path (`table-svc/game/<game>`): it
// stands for any name.
var pathPlaceholder = regexp.MustCompile(`<[^<>/]+>`)

// docPaths are the code spans of a Markdown text that look like paths:
// a span without blanks (a command such as `make run` is none) that
// contains a slash or ends in one of pathEndings. Fenced code blocks and
// URLs are left out.
func docPaths(text string) []docPath {
	var out []docPath
	for n, line := range markdownProse(text) {
		for _, span := range mdCodeSpan.FindAllString(line, -1) {
			p := strings.Trim(span, "`")
			if p == "" || strings.ContainsAny(p, " \t") || strings.Contains(p, "://") {
				continue
			}
			isPath := strings.Contains(p, "/")
			for _, e := range pathEndings {
				isPath = isPath || strings.HasSuffix(p, e)
			}
			if isPath {
				out = append(out, docPath{n + 1, p})
			}
		}
	}
	return out
}

// checkDocPath reports why p, a path relative to the repository at root,
// names nothing there: outside the repository, absent, or a directory
// (a trailing slash) that is a file. A placeholder must match at least
// one entry.
func checkDocPath(root, p string) error {
	if strings.HasPrefix(p, "/") {
		return fmt.Errorf("an absolute path; name it from the repository's root")
	}
	clean := path.Clean(p)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return fmt.Errorf("outside the repository")
	}
	pattern := pathPlaceholder.ReplaceAllString(clean, "*")
	matches, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(pattern)))
	if err != nil {
		return err
	}
	if len(matches) == 0 {
		return fmt.Errorf("no such file or directory")
	}
	if strings.HasSuffix(p, "/") {
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && fi.IsDir() {
				return nil
			}
		}
		return fmt.Errorf("not a directory")
	}
	return nil
}

// TestArchitecturePaths: every path ARCHITECTURE.md names in a code span
// (`table-svc/tablesvc/saga.go`, `services/rules`, `adapter_<game>.go`
// patterns) exists in the repository, so that the map follows the code
// when a file moves or is renamed. Paths are written from the root; a
// span with a slash that is no path (an id pattern, a subject) belongs
// in prose, not in a code span. After editing ARCHITECTURE.md run it with
// -count=1 (as make test does): go test does not look again at files
// outside this module before it replays a cached result.
func TestArchitecturePaths(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	paths := docPaths(string(b))
	if len(paths) < 50 {
		t.Fatalf("only %d paths found in ARCHITECTURE.md: the test reads too little", len(paths))
	}
	for _, p := range paths {
		if err := checkDocPath(root, p.path); err != nil {
			t.Errorf("ARCHITECTURE.md:%d: `%s`: %v", p.line, p.path, err)
		}
	}
}

// TestArchitecturePathsCatchBogus: the check finds a path that does not
// exist, one outside the repository and an absolute one, and leaves
// commands, URLs, code blocks and names without a slash alone.
func TestArchitecturePathsCatchBogus(t *testing.T) {
	root := repoRoot(t)
	doc := strings.Join([]string{
		"The saga is `table-svc/tablesvc/saga.go`, the adapters `table-svc/tablesvc/adapter_<game>.go`.",
		"Gone: `table-svc/tablesvc/no_such_file.go`, `docs/nowhere.md`, `table-svc/game/<game>/nothing.go`.",
		"Out: `../elsewhere/RULES.md`, `/etc/passwd`; a file as a directory: `README.md/`.",
		"Not paths: `make run`, `house:commission`, `https://example.com/x`, `mutateCore`.",
		"```",
		"`table-svc/in/a/fence.go`",
		"```",
	}, "\n")
	var bad []string
	for _, p := range docPaths(doc) {
		if checkDocPath(root, p.path) != nil {
			bad = append(bad, p.path)
		}
	}
	want := []string{
		"table-svc/tablesvc/no_such_file.go", "docs/nowhere.md", "table-svc/game/<game>/nothing.go",
		"../elsewhere/RULES.md", "/etc/passwd", "README.md/",
	}
	if strings.Join(bad, " ") != strings.Join(want, " ") {
		t.Errorf("refused %q, want %q", bad, want)
	}
}
