package suite

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Helpers for the suites' command lines.

// FindRoot returns dir made absolute, or, when dir is empty, the nearest
// directory upwards from the working directory that holds go.mod of
// module obgate.
func FindRoot(dir string) (string, error) {
	if dir != "" {
		return filepath.Abs(dir)
	}
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), "module obgate") {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", errors.New("cannot find the repository root (go.mod of module obgate); run from inside the repository or pass --root")
		}
		d = parent
	}
}

// CommandLine renders how a suite was invoked, for its report: goRun
// (e.g. "go run ./bench/cmd/memory-suite") stands for a binary that go run
// built, then the arguments, quoted for a POSIX shell where needed.
func CommandLine(goRun string, args []string) string {
	prog := os.Args[0]
	if strings.Contains(prog, "go-build") {
		prog = goRun
	}
	parts := []string{prog}
	for _, a := range args {
		parts = append(parts, ShellQuote(a))
	}
	return strings.Join(parts, " ")
}

// ShellQuote quotes s for a POSIX shell unless it needs no quoting.
func ShellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?&;|<>(){}[]#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ParseSize reads a positive byte count with an optional K, M or G suffix
// (powers of 1024).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToUpper(s))
	mult := int64(1)
	switch {
	case strings.HasSuffix(t, "K"):
		mult, t = 1<<10, strings.TrimSuffix(t, "K")
	case strings.HasSuffix(t, "M"):
		mult, t = 1<<20, strings.TrimSuffix(t, "M")
	case strings.HasSuffix(t, "G"):
		mult, t = 1<<30, strings.TrimSuffix(t, "G")
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}

// FormatSize writes n with the largest of the suffixes G, M, K that
// divides it, the inverse of ParseSize.
func FormatSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "G"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "M"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "K"
	}
	return strconv.FormatInt(n, 10)
}

// Exported forms of the runner's helpers, for the other suites.

// WriteJSON writes v indented to path.
func WriteJSON(path string, v any) error { return writeJSON(path, v) }

// FreePort returns a loopback port that was free a moment ago.
func FreePort() (int, error) { return freePort() }

// LookPath finds name on PATH, else in dirs (a non-root PATH often lacks
// /usr/sbin).
func LookPath(name string, dirs ...string) (string, error) { return lookPath(name, dirs...) }

// UnderRoot resolves p, a path relative to the repository root unless it
// is absolute or empty.
func UnderRoot(root, p string) string { return underRoot(root, p) }

// Rel returns target relative to dir with forward slashes, for Markdown
// links.
func Rel(dir, target string) string { return rel(dir, target) }

// RelArgs shortens paths under root to relative ones, for a report.
func RelArgs(root string, argv []string) []string { return relArgs(root, argv) }

// TuningArgs drops the mariadbd options that only name one server's files
// and port.
func TuningArgs(args []string) []string { return tuningArgs(args) }

// UpdateMarkedSection replaces the part of doc from begin to end (markers
// included) with section, or appends section when doc lacks the markers.
// An empty doc gets a title first. The rest of doc is left as it is.
func UpdateMarkedSection(doc, begin, end, section string) string {
	section = strings.TrimRight(section, "\n") + "\n"
	if i := strings.Index(doc, begin); i >= 0 {
		if j := strings.Index(doc[i:], end); j >= 0 {
			rest := strings.TrimPrefix(doc[i+j+len(end):], "\n")
			return doc[:i] + section + rest
		}
	}
	if strings.TrimSpace(doc) == "" {
		return "# Benchmarks\n\n" + section
	}
	return strings.TrimRight(doc, "\n") + "\n\n" + section
}

// SplitList splits a comma-separated flag value, dropping blanks and
// empty items.
func SplitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// ParseInts reads a comma-separated list of positive integers (a
// --threads flag); an empty list is an error.
func ParseInts(s string) ([]int, error) {
	var out []int
	for _, f := range SplitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad number %q", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("empty list")
	}
	return out, nil
}

// DefaultFlags gives the flags of fs that the command line did not set the
// values in defaults (a suite's --quick settings).
func DefaultFlags(fs *flag.FlagSet, defaults map[string]string) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for name, v := range defaults {
		if !set[name] {
			if err := fs.Set(name, v); err != nil {
				return err
			}
		}
	}
	return nil
}
