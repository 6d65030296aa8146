package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"obgate/config"
)

// checkConfig runs --check-config: it checks the config file and the
// command line as config.Check does (each value, the rules between items,
// and what obgate would refuse to start with: servers to route to, TLS
// files that load; ALTER PROXYCONFIG refuses the same), and prints "ok" on
// stdout and returns 0, or prints each problem (file:line: message, or the
// flag and the message) on stderr and returns 1. A config directory obgate
// cannot write is a note on stderr, not a problem: obgate runs on a
// read-only file. It neither listens nor writes the config file, and
// never prints a password's value (config errors name password items
// only).
func checkConfig(opts *config.Options, stdout, stderr io.Writer) int {
	cfg, problems := config.Check(opts)
	problems = append(problems, cfg.Problems()...)
	for _, p := range problems {
		fmt.Fprintln(stderr, p)
	}
	if n := len(problems); n > 0 {
		fmt.Fprintf(stderr, "obgate: %d problem(s) in the configuration\n", n)
		return 1
	}
	if _, err := os.Stat(opts.Path()); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stderr, "obgate: %s does not exist; checked the defaults and the command line\n", opts.Path())
	}
	if err := config.Unwritable(opts); err != nil {
		fmt.Fprintf(stderr, "obgate: note: %v; obgate will run on the file as it is and refuse ALTER PROXYCONFIG\n", err)
	}
	fmt.Fprintln(stdout, "ok")
	return 0
}
