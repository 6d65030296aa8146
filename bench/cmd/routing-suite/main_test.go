package main

import (
	"errors"
	"flag"
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
	if err := run([]string{"--help"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--help: %v", err)
	}
}
