package check

import (
	"fmt"
	"regexp"
	"strings"
)

// Relabel applies Prometheus relabelings to a target's labels, as
// Prometheus does for the actions chemmy uses (replace, the default):
// the source labels' values joined by the separator (";") are matched
// against the anchored regex ("(.*)"); on a match the target label
// becomes the replacement ("$1") expanded with the match's groups.
func Relabel(labels map[string]string, cfgs []RelabelConfig) (map[string]string, error) {
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		out[k] = v
	}
	for _, c := range cfgs {
		if c.Action != "" && c.Action != "replace" {
			return nil, fmt.Errorf("relabeling action %q: only replace is modelled", c.Action)
		}
		sep, expr, repl := ";", "(.*)", "$1"
		if c.Separator != "" {
			sep = c.Separator
		}
		if c.Regex != "" {
			expr = c.Regex
		}
		if c.Replacement != nil {
			repl = *c.Replacement
		}
		re, err := regexp.Compile("^(?:" + expr + ")$")
		if err != nil {
			return nil, err
		}
		vals := make([]string, len(c.SourceLabels))
		for i, l := range c.SourceLabels {
			vals[i] = out[l]
		}
		m := re.FindStringSubmatchIndex(strings.Join(vals, sep))
		if m == nil || c.TargetLabel == "" {
			continue
		}
		v := string(re.ExpandString(nil, repl, strings.Join(vals, sep), m))
		if v == "" {
			delete(out, c.TargetLabel)
		} else {
			out[c.TargetLabel] = v
		}
	}
	return out, nil
}

// metaLabel is Prometheus's name for a Kubernetes label in a target's
// meta labels: every character not a letter, digit or _ becomes _.
func metaLabel(prefix, name string) string {
	return prefix + regexp.MustCompile(`[^a-zA-Z0-9_]`).ReplaceAllString(name, "_")
}
