package main

import (
	"obgate/bench/suite"
	"strings"
	"testing"
)

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

// Bad configurations fail before anything is started.
func TestRunRejectsBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--obgate", "/nonexistent/obgate", "--quick"}, "build it first"},
		{[]string{"--targets", "direct,nosuch"}, `unknown target "nosuch"`},
		{[]string{"--targets", "direct,direct"}, "listed twice"},
		{[]string{"--threads", "1,zero"}, "--threads"},
		{[]string{"--target", "=x"}, "want name=arg"},
		{[]string{"--ob-target", "a b=x"}, "want name=arg"},
		{[]string{"--syscalls", "strace"}, "--syscalls"},
		{[]string{"--target-binary", "nosuch=bin/obgate"}, "want name=path"},
		{[]string{"--target", "old=", "--target-binary", "old="}, "want name=path"},
		{[]string{"--target", "old=", "--target-binary", "old=/nonexistent/obgate", "--targets", "old"}, "of target old not found"},
		{[]string{"--obsim", "/nonexistent/obsim", "--targets", "direct,obsim"}, "obsim binary"},
		{[]string{"--buffer-pool", "lots"}, "--buffer-pool"},
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
