package testkit

import (
	"strconv"
	"strings"
)

// MetricSum adds up the samples of family in Prometheus text whose labels
// include every name/value pair in labels. It reports false when no sample
// matched.
func MetricSum(text, family string, labels ...string) (float64, bool) {
	var sum float64
	found := false
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		fam, lbls, _ := strings.Cut(name, "{")
		if fam != family {
			continue
		}
		if !hasLabels(strings.TrimSuffix(lbls, "}"), labels) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		if err != nil {
			continue
		}
		sum += v
		found = true
	}
	return sum, found
}

// hasLabels reports whether the label list `a="x",b="y"` holds every pair.
// Label values in obgate's metrics contain no commas or quotes, which keeps
// this simple.
func hasLabels(list string, pairs []string) bool {
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(","+list+",", ","+pairs[i]+`="`+pairs[i+1]+`",`) {
			return false
		}
	}
	return true
}
