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
	if err := run([]string{"--help"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--help: %v", err)
	}
}
