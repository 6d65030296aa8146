package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1G": 1 << 30, "256m": 256 << 20, "64K": 64 << 10, "1000": 1000} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "G", "-1M", "1T", "x"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) succeeded", bad)
		}
	}
}

func TestParseInts(t *testing.T) {
	got, err := parseInts(" 1, 8,32 ")
	if err != nil || len(got) != 3 || got[0] != 1 || got[1] != 8 || got[2] != 32 {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range []string{"", "1,x", "0", "-2"} {
		if _, err := parseInts(bad); err == nil {
			t.Errorf("parseInts(%q) succeeded", bad)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"--quick":                "--quick",
		"":                       "''",
		"a b":                    "'a b'",
		"it's":                   `'it'\''s'`,
		"obgate-net=-o,x=net":    "obgate-net=-o,x=net",
		"--threads=1,8,32":       "--threads=1,8,32",
		"--workloads=$HOME/oops": "'--workloads=$HOME/oops'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestFindRoot(t *testing.T) {
	root, err := findRoot("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "bench", "cmd", "sysbench-suite")); err != nil {
		t.Errorf("root %s: %v", root, err)
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
