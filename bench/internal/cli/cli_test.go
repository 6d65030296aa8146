package cli

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	newSet := func() (*flag.FlagSet, *List, *bytes.Buffer) {
		var out bytes.Buffer
		var opts List
		fs := NewFlagSet("demo", "Does nothing.\nTwice.")
		fs.SetOutput(&out)
		fs.Var(&opts, "opt", "a `key=value`; repeatable")
		return fs, &opts, &out
	}

	fs, opts, _ := newSet()
	if err := Parse(fs, []string{"--opt", "a=1", "-opt", "b=2"}); err != nil || strings.Join(*opts, ",") != "a=1,b=2" {
		t.Errorf("repeated flag: %q, %v", *opts, err)
	}

	fs, _, out := newSet()
	if err := Parse(fs, []string{"--help"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--help: %v", err)
	}
	want := "Usage: demo [flags]\n\nDoes nothing.\nTwice.\n\nFlags:\n  -opt key=value\n    \ta key=value; repeatable\n"
	if out.String() != want {
		t.Errorf("usage:\n%q\nwant:\n%q", out.String(), want)
	}

	fs, _, _ = newSet()
	if err := Parse(fs, []string{"--opt", "a=1", "extra"}); err == nil || err.Error() != `unexpected arguments ["extra"]` {
		t.Errorf("stray argument: %v", err)
	}

	fs, _, _ = newSet()
	if err := Parse(fs, []string{"--nosuch"}); err == nil || errors.Is(err, flag.ErrHelp) {
		t.Errorf("unknown flag: %v", err)
	}
}

func TestSignalContextStop(t *testing.T) {
	ctx, stop := SignalContext()
	if ctx.Err() != nil {
		t.Fatal("cancelled before any signal")
	}
	stop()
	<-ctx.Done()
}
