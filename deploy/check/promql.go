package check

import (
	"regexp"
	"strings"
)

var (
	promLabelMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promGrouping      = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promStrings       = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promRanges        = regexp.MustCompile(`\[[^\]]*\]`)
	promIdent         = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	promKeywords      = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "by": true,
		"without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true, "inf": true, "nan": true}
)

// PromQLMetrics returns the metric names a PromQL expression reads: its
// identifiers once label matchers, strings, ranges and grouping clauses
// are taken out, less function names (an identifier followed by "("),
// keywords and numbers' exponents.
func PromQLMetrics(expr string) []string {
	e := promStrings.ReplaceAllString(expr, `""`)
	e = promLabelMatchers.ReplaceAllString(e, " ")
	e = promGrouping.ReplaceAllString(e, " ")
	e = promRanges.ReplaceAllString(e, " ")
	var out []string
	for _, loc := range promIdent.FindAllStringIndex(e, -1) {
		name := e[loc[0]:loc[1]]
		if loc[0] > 0 && (e[loc[0]-1] >= '0' && e[loc[0]-1] <= '9' || e[loc[0]-1] == '.') {
			continue // 1e3, 0.5
		}
		if promKeywords[strings.ToLower(name)] || strings.HasPrefix(strings.TrimLeft(e[loc[1]:], " \t\n"), "(") {
			continue
		}
		out = append(out, name)
	}
	return out
}
