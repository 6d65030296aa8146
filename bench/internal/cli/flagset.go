package cli

import (
	"flag"
	"fmt"
)

// NewFlagSet returns a flag set for command name that returns its errors
// and, on -h, --help or a bad flag, prints "Usage: name [flags]", about
// (one or more lines) and the flags with their defaults.
func NewFlagSet(name, about string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s [flags]\n\n%s\n\nFlags:\n", name, about)
		fs.PrintDefaults()
	}
	return fs
}

// Parse parses args with fs and refuses the arguments left after the
// flags. It returns flag.ErrHelp, which Main takes for success, when args
// asked for the usage and fs has printed it.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return nil
}
