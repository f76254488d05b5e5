package e2e

import (
	"fmt"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// mdLink is an inline Markdown link or image: [text](target) or
// [text](target "title").
var mdLink = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)

// mdCodeSpan is an inline code span, whose text is not a link.
var mdCodeSpan = regexp.MustCompile("`[^`]*`")

// TestDocLinks: every relative link of every Markdown file of the
// repository (README.md, docs/ and the others: markdownFiles) points to a
// file or directory that exists inside the repository, and a link to a
// heading (#anchor, in the same file or in another Markdown file) names a
// heading the target has, as GitHub makes its anchors. The documents
// link to each other since the README was split into docs/: a file moved
// or a heading renamed must not leave a link behind.
func TestDocLinks(t *testing.T) {
	root := repoRoot(t)
	files := markdownFiles(t, root)
	anchors := map[string]map[string]bool{} // file -> its headings' anchors
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		b, err := os.ReadFile(path.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		a := headingAnchors(string(b))
		anchors[file] = a
		return a
	}
	links := 0
	for _, file := range files {
		b, err := os.ReadFile(path.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range markdownProse(string(b)) {
			if line == "" {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(mdCodeSpan.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				where := fmt.Sprintf("%s:%d: (%s)", file, n+1, target)
				ref, anchor, _ := strings.Cut(target, "#")
				to := file
				if ref != "" {
					if strings.HasPrefix(ref, "/") {
						t.Errorf("%s: an absolute path; link relative to the file", where)
						continue
					}
					to = path.Clean(path.Join(path.Dir(file), ref))
					if to == ".." || strings.HasPrefix(to, "../") {
						t.Errorf("%s: outside the repository", where)
						continue
					}
					if _, err := os.Stat(path.Join(root, to)); err != nil {
						t.Errorf("%s: no such file %s", where, to)
						continue
					}
				}
				if anchor == "" {
					continue
				}
				if !strings.HasSuffix(to, ".md") {
					t.Errorf("%s: an anchor into %s, which is not Markdown", where, to)
					continue
				}
				if !anchorsOf(to)[anchor] {
					t.Errorf("%s: %s has no heading #%s", where, to, anchor)
				}
			}
		}
	}
	if links == 0 {
		t.Fatal("no relative link found: the test reads nothing")
	}
}

// markdownProse is text's lines with those of fenced code blocks blanked
// (kept as "", so that line numbers stay right).
func markdownProse(text string) []string {
	lines := strings.Split(text, "\n")
	fence := ""
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, " ")
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:3]
			lines[i] = ""
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			lines[i] = ""
		}
	}
	return lines
}

// headingAnchors are the anchors GitHub gives the ATX headings of a
// Markdown text: the heading's text in lower case, without its code
// backticks and punctuation (letters, digits, spaces, - and _ stay),
// spaces made hyphens; a repeated one gets -1, -2, ...
func headingAnchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range markdownProse(text) {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimLeft(l, "#")
		if len(l)-len(h) > 6 || (h != "" && h[0] != ' ' && h[0] != '\t') {
			continue
		}
		h = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(h), "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}
