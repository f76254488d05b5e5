package check

import (
	"bufio"
	"os"
	"path"
	"strings"
)

// Dockerignore is the patterns of a .dockerignore, in order.
type Dockerignore []ignorePattern

type ignorePattern struct {
	pattern string
	negate  bool
}

// ReadDockerignore reads a .dockerignore: one pattern a line, # comments
// and blank lines skipped, a leading ! re-including.
func ReadDockerignore(file string) (Dockerignore, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out Dockerignore
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p := ignorePattern{}
		if rest, ok := strings.CutPrefix(line, "!"); ok {
			p.negate, line = true, rest
		}
		p.pattern = path.Clean(strings.TrimPrefix(line, "/"))
		out = append(out, p)
	}
	return out, sc.Err()
}

// Excludes reports whether the context path p (slash-separated, relative
// to the context's root) is left out of the build context, as Docker
// reads the file: the last pattern matching p or one of its parent
// directories decides; "**" matches any number of directories.
func (d Dockerignore) Excludes(p string) bool {
	p = path.Clean(p)
	excluded := false
	for _, ip := range d {
		if matchesPathOrParent(ip.pattern, p) {
			excluded = !ip.negate
		}
	}
	return excluded
}

func matchesPathOrParent(pattern, p string) bool {
	for q := p; ; q = path.Dir(q) {
		if globMatch(strings.Split(pattern, "/"), strings.Split(q, "/")) {
			return true
		}
		if !strings.Contains(q, "/") {
			return false
		}
	}
}

// globMatch matches path elements against pattern elements: "**" any
// number of elements, else path.Match per element.
func globMatch(pat, elems []string) bool {
	if len(pat) == 0 {
		return len(elems) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(elems); i++ {
			if globMatch(pat[1:], elems[i:]) {
				return true
			}
		}
		return false
	}
	if len(elems) == 0 {
		return false
	}
	if ok, err := path.Match(pat[0], elems[0]); err != nil || !ok {
		return false
	}
	return globMatch(pat[1:], elems[1:])
}
