package config

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

	"obgate/internal/safefile"
)

// Path returns the config file Load reads and writes: <ConfigDir>/obgate.conf, with
// DefaultConfigDir when ConfigDir is empty. A nil opts means the defaults.
func (o *Options) Path() string {
	dir := DefaultConfigDir
	if o != nil && o.ConfigDir != "" {
		dir = o.ConfigDir
	}
	return filepath.Join(dir, FileName)
}

// Check builds the configuration Load would build from opts, reading the config file and
// writing nothing, and returns it with every problem found instead of the first one. Each
// problem's text starts with where it is:
//
//   - "path:line: " for a line of the config file: a malformed line, an unknown item (Load
//     only warns and skips it; a check calls it a problem, as it is almost always a typo),
//     an item given twice (Load keeps the last) and a value that does not parse or is out
//     of range;
//   - "-o: " or the flag ("-p/--listen_port: ") for a command-line value that is invalid;
//   - "path: " when the file cannot be read (it is read as Load reads it, with safefile: a
//     FIFO, device or directory in its place is a problem, not a hang).
//
// Rules between items come last, without a place. What obgate would refuse to start with in
// a configuration of valid values (servers to route to, TLS files that load) is the returned
// Config's Problems, which --check-config adds. A directory obgate cannot write is no problem
// (Load runs on the file as it is); Unwritable says so. The returned Config holds every value that
// was valid (the default where one was not), for further checks by the caller; it is never
// nil. A missing file is no problem, as for Load. Check is for --check-config; it does not
// touch any Store and any goroutine may call it.
func Check(opts *Options) (*Config, []error) {
	if opts == nil {
		opts = &Options{}
	}
	path := opts.Path()
	c := Default()
	var problems []error
	data, err := safefile.ReadFile(path, safefile.MaxConfig)
	if err == nil {
		problems = append(problems, checkFile(path, data, c)...)
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		problems = append(problems, fmt.Errorf("%s: %w", path, err))
	}
	for _, ov := range opts.Overrides {
		it, ok := Lookup(ov.Name)
		if !ok {
			problems = append(problems, fmt.Errorf("%s: %w: %q", ov.From, ErrUnknownItem, ov.Name))
			continue
		}
		if err := c.set(it, ov.Value, fromCommandLine); err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", ov.From, err))
		}
	}
	if err := c.validate(); err != nil {
		problems = append(problems, err)
	}
	return c, problems
}

// Unwritable returns why obgate could not rewrite the config file of opts at startup, or
// nil. obgate then runs on the file as it is and refuses ALTER PROXYCONFIG (which would have
// to write it); --check-config prints this as a note, not a problem, since a read-only
// config (a Kubernetes Secret) is a choice. A nil opts means the defaults.
func Unwritable(opts *Options) error {
	path := opts.Path()
	if err := checkWritable(filepath.Dir(path)); err != nil {
		return fmt.Errorf("%s: obgate rewrites this file at startup and after ALTER PROXYCONFIG, but %w", path, err)
	}
	return nil
}

// checkFile sets the file's valid entries on c and returns a problem for each bad line, in
// file order.
func checkFile(path string, data []byte, c *Config) []error {
	entries, bad := parseLines(data)
	first := map[*Item]int{} // item → line that first set it
	for _, e := range entries {
		it, ok := Lookup(e.name)
		if !ok {
			bad = append(bad, &lineError{e.line, fmt.Errorf("%w: %q", ErrUnknownItem, e.name)})
			continue
		}
		if l, dup := first[it]; dup {
			bad = append(bad, &lineError{e.line, fmt.Errorf("%s is given again (first on line %d); the last one counts", it.name, l)})
		} else {
			first[it] = e.line
		}
		if err := c.set(it, e.value, fromFile); err != nil {
			bad = append(bad, &lineError{e.line, err})
		}
	}
	slices.SortStableFunc(bad, func(a, b *lineError) int { return cmp.Compare(a.line, b.line) })
	problems := make([]error, len(bad))
	for i, le := range bad {
		problems[i] = fmt.Errorf("%s:%d: %w", path, le.line, le.err)
	}
	return problems
}

// checkWritable reports whether obgate could write a file in dir: dir itself if it exists,
// else the nearest existing parent (Load creates the missing directories).
func checkWritable(dir string) error {
	for {
		fi, err := os.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", dir)
			}
			if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
				return fmt.Errorf("directory %s is not writable: %w", dir, err)
			}
			return nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return err
		}
		dir = parent
	}
}
