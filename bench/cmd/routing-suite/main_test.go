package main

import (
	"obgate/bench/suite"
	"strings"
	"testing"
)

// Bad configurations fail before anything is started.
func TestRunRejectsBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--targets", "obgate-routing,nosuch"}, `unknown target "nosuch"`},
		{[]string{"--targets", "haproxy-rr,haproxy-rr"}, "listed twice"},
		{[]string{"--threads", "8,x"}, "--threads"},
		{[]string{"--remote-plan-cost", "-1ms"}, "negative remote-plan cost"},
		{[]string{"--remote-plan-cost", "soon"}, "remote-plan-cost"},
		{[]string{"--ignore-errors", ""}, "--ignore-errors"},
		{[]string{"--buffer-pool", "lots"}, "--buffer-pool"},
		{[]string{"--obgate", "/nonexistent/obgate", "--quick"}, "obgate binary"},
		{[]string{"--obsim", "/nonexistent/obsim", "--targets", "direct-leaderless"}, "obsim binary"},
		{[]string{"extra"}, "unexpected arguments"},
	} {
		err := run(c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run(%q) = %v, want an error containing %q", c.args, err, c.want)
		}
	}
	if err := run([]string{"--help"}); err != nil {
		t.Errorf("--help: %v", err)
	}
}

func TestParseInts(t *testing.T) {
	got, err := suite.ParseInts(" 1, 8,32 ")
	if err != nil || len(got) != 3 || got[0] != 1 || got[1] != 8 || got[2] != 32 {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range []string{"", "1,x", "0", "-2"} {
		if _, err := suite.ParseInts(bad); err == nil {
			t.Errorf("suite.ParseInts(%q) succeeded", bad)
		}
	}
}
