package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

// Main runs run with the command's arguments and exits: with status 1,
// after "name: " and the error on stderr, when run fails; with status 0
// when it succeeds or only printed the usage (flag.ErrHelp).
func Main(name string, run func(args []string) error) {
	if err := run(os.Args[1:]); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}
