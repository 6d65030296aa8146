package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"obgate/internal/safefile"
)

// FileName is the name of the config file inside the config directory.
const FileName = "obgate.conf"

// fileHeader starts every config file obgate writes.
const fileHeader = `# obgate configuration, written by obgate at startup and after every ALTER PROXYCONFIG.
# You may edit it while obgate is stopped; while it runs, use ALTER PROXYCONFIG instead.
# One "name = value" per line; lines starting with # are comments. Items not listed here
# take their defaults, and only values that differ from the default are written.
# Passwords are stored as the SHA1 hex of the plaintext, never in clear.
`

// fileEntry is one "name = value" line of a config file.
type fileEntry struct {
	line        int
	name, value string
}

// parseFile splits a config file into entries. Blank lines and lines whose first non-space
// character is '#' are skipped; every other line must be name = value, where the name has no
// spaces or control characters and the value may be empty and may itself contain '='. Spaces
// around names and values are dropped. Names are not looked up: unknown ones are the caller's
// business. The first malformed line is the error.
func parseFile(data []byte) ([]fileEntry, error) {
	entries, bad := parseLines(data)
	if len(bad) > 0 {
		return nil, bad[0]
	}
	return entries, nil
}

// lineError is a malformed line of a config file; its text is "line N: why".
type lineError struct {
	line int
	err  error
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %v", e.line, e.err) }

// parseLines is parseFile going on past malformed lines: it returns the well-formed entries
// and one error for each malformed line, in file order (--check-config lists them all).
func parseLines(data []byte) (entries []fileEntry, bad []*lineError) {
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if i == 0 {
			line = strings.TrimPrefix(line, "\uFEFF")
		}
		if line == "" || line[0] == '#' {
			continue
		}
		name, value, ok := cutAssignment(line)
		if !ok {
			bad = append(bad, &lineError{i + 1, errors.New("want name = value")})
			continue
		}
		if strings.IndexFunc(name, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
			bad = append(bad, &lineError{i + 1, fmt.Errorf("item name %q has spaces or control characters", name)})
			continue
		}
		entries = append(entries, fileEntry{line: i + 1, name: name, value: strings.TrimSpace(value)})
	}
	return entries, bad
}

// formatFile renders c as a config file: the header, then every item whose value differs
// from its default, in registry order.
func formatFile(c *Config) []byte {
	var b strings.Builder
	b.WriteString(fileHeader)
	for _, it := range registry {
		if it.IsDefault(c) {
			continue
		}
		b.WriteString(it.name)
		b.WriteString(" = ")
		b.WriteString(it.Value(c))
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// readFile loads path into c (read with safefile: a FIFO or device in its place, or a file
// over safefile.MaxConfig, is an error rather than a hang). A missing file is not an error. Unknown names are skipped and
// reported in warnings, as ODP skips them; an invalid value is an error naming the line,
// because starting on a default the operator did not ask for (another port, no password) is
// worse than not starting.
func readFile(path string, c *Config) (warnings []string, err error) {
	data, err := safefile.ReadFile(path, safefile.MaxConfig)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	entries, err := parseFile(data)
	if err != nil {
		return nil, fmt.Errorf("config: %s: %w", path, err)
	}
	for _, e := range entries {
		it, ok := Lookup(e.name)
		if !ok {
			warnings = append(warnings, fmt.Sprintf("%s:%d: unknown config item %q skipped", path, e.line, e.name))
			continue
		}
		if err := c.set(it, e.value, fromFile); err != nil {
			return warnings, fmt.Errorf("config: %s:%d: %w", path, e.line, err)
		}
	}
	return warnings, nil
}

// writeConfigFile is writeFile; tests replace it to see what a file obgate cannot write does
// (a read-only mount, which a test running as root cannot make with permissions).
var writeConfigFile = writeFile

// writeFile replaces path with the rendering of c so that a crash leaves either the old file
// or the new one: it writes a temporary file in the same directory, syncs it, renames it over
// path and syncs the directory. The directory is created if missing. The file is readable by
// its owner only, since it holds password hashes.
func writeFile(path string, c *Config) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(formatFile(c)); err != nil {
		return fmt.Errorf("config: writing %s: %w", tmp.Name(), err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("config: syncing %s: %w", tmp.Name(), err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("config: closing %s: %w", tmp.Name(), err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	// The rename is durable once the directory is synced; not every platform can sync a
	// directory, and the new file is already complete, so a failure here is ignored.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
