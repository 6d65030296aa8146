package testkit

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Reading Grafana dashboards and the PromQL in them, for tests that check
// a dashboard against what obgate's /metrics exports.

// DashboardExprs returns every PromQL expression of a Grafana dashboard
// JSON: each "expr" string anywhere in it (panel targets, nested rows),
// and the metric selector of each templating query label_values(m, l).
func DashboardExprs(dashboard []byte) ([]string, error) {
	var doc any
	if err := json.Unmarshal(dashboard, &doc); err != nil {
		return nil, fmt.Errorf("dashboard JSON: %w", err)
	}
	var out []string
	var walk func(v any, inTemplating bool)
	walk = func(v any, inTemplating bool) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				switch s, ok := x.(string); {
				case ok && k == "expr":
					out = append(out, s)
				case ok && k == "query" && inTemplating:
					if m := labelValues.FindStringSubmatch(s); m != nil {
						out = append(out, m[1])
					}
				default:
					walk(x, inTemplating || k == "templating")
				}
			}
		case []any:
			for _, x := range v {
				walk(x, inTemplating)
			}
		}
	}
	walk(doc, false)
	return out, nil
}

var labelValues = regexp.MustCompile(`^\s*label_values\(\s*(.+?)\s*,\s*[A-Za-z_][A-Za-z0-9_]*\s*\)\s*$`)

var (
	promStrings  = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`")
	promMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promRanges   = regexp.MustCompile(`\[[^\]]*\]`)
	promVars     = regexp.MustCompile(`\$\{[^}]*\}|\$[A-Za-z0-9_]+`)
	promGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promNumbers  = regexp.MustCompile(`\b\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?:ms|s|m|h|d|w|y)?\b`)
	promIdent    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
)

// promKeywords are PromQL words that are neither functions nor metrics.
var promKeywords = map[string]bool{
	"and": true, "or": true, "unless": true, "by": true, "without": true, "on": true,
	"ignoring": true, "group_left": true, "group_right": true, "offset": true, "bool": true,
	"inf": true, "nan": true, "Inf": true, "NaN": true,
}

// PromQLFamilies returns the metric families an expression reads, sorted
// and without repeats: every identifier left once string literals, label
// matchers, ranges, Grafana variables, grouping label lists and numbers
// are taken out that is not followed by "(" (a function or aggregation)
// and is not a keyword, with a histogram's or summary's _bucket, _sum or
// _count suffix taken off.
func PromQLFamilies(expr string) []string {
	s := promStrings.ReplaceAllString(expr, " ")
	s = promMatchers.ReplaceAllString(s, " ")
	s = promRanges.ReplaceAllString(s, " ")
	s = promVars.ReplaceAllString(s, " ")
	s = promGrouping.ReplaceAllString(s, " ")
	s = promNumbers.ReplaceAllString(s, " ")
	var out []string
	for _, loc := range promIdent.FindAllStringIndex(s, -1) {
		word := s[loc[0]:loc[1]]
		if promKeywords[word] || strings.HasPrefix(strings.TrimLeft(s[loc[1]:], " \t\n"), "(") {
			continue
		}
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if f, ok := strings.CutSuffix(word, suf); ok {
				word = f
				break
			}
		}
		out = append(out, word)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// MissingFamilies returns the families with no sample in the Prometheus
// text: no line named family, family_bucket, family_sum or family_count.
func MissingFamilies(text string, families []string) []string {
	have := map[string]bool{}
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		name, _, _ := strings.Cut(line, " ")
		name, _, _ = strings.Cut(name, "{")
		have[name] = true
	}
	var out []string
	for _, f := range families {
		if !have[f] && !have[f+"_bucket"] && !have[f+"_sum"] && !have[f+"_count"] {
			out = append(out, f)
		}
	}
	return out
}
