package config

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"math"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Value parsers in ODP's notation. They are pure functions, safe for any goroutine.

// Day is the "d" unit of ODP durations.
const Day = 24 * time.Hour

// durationUnits are ODP's time suffixes, matched case-insensitively. A plain number means
// seconds, as in ODP.
var durationUnits = map[string]time.Duration{
	"":   time.Second,
	"us": time.Microsecond,
	"ms": time.Millisecond,
	"s":  time.Second,
	"m":  time.Minute,
	"h":  time.Hour,
	"d":  Day,
}

// capacityUnits are ODP's size suffixes (powers of 1024), matched case-insensitively. A plain
// number means bytes.
var capacityUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40,
	"p": 1 << 50, "pb": 1 << 50,
}

// ParseDuration parses an ODP time value: a non-negative integer followed by one of us, ms,
// s, m, h, d (any case); without a unit the number is seconds. "0", "20s", "100ms", "1d" are
// valid; "1.5s", "-1s", "1h30m" and "20 s" are not.
func ParseDuration(s string) (time.Duration, error) { return parseDuration(s, time.Second) }

// parseDuration is ParseDuration with bare numbers counted in the given unit.
func parseDuration(s string, bare time.Duration) (time.Duration, error) {
	n, unit, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	mult, ok := durationUnits[strings.ToLower(unit)]
	if unit == "" {
		mult = bare
	}
	if !ok {
		return 0, errors.New("unknown time unit " + strconv.Quote(unit) + " (want us, ms, s, m, h or d)")
	}
	if n > math.MaxInt64/int64(mult) {
		return 0, errors.New("time value too large")
	}
	return time.Duration(n) * mult, nil
}

// ParseCapacity parses an ODP capacity value in bytes: a non-negative integer followed by one
// of B, K/KB, M/MB, G/GB, T/TB, P/PB (any case, powers of 1024); without a unit the number is
// bytes. "0", "8KB", "16M", "2G" are valid; "1.5MB", "-1KB" and "8 KB" are not.
func ParseCapacity(s string) (int64, error) {
	n, unit, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	mult, ok := capacityUnits[strings.ToLower(unit)]
	if !ok {
		return 0, errors.New("unknown capacity unit " + strconv.Quote(unit) + " (want B, KB, MB, GB, TB or PB)")
	}
	if n > math.MaxInt64/mult {
		return 0, errors.New("capacity value too large")
	}
	return n * mult, nil
}

// splitNumber splits s into its leading decimal digits and the rest.
func splitNumber(s string) (int64, string, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, "", errors.New("want a non-negative number with an optional unit")
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, "", errors.New("number too large")
	}
	return n, s[i:], nil
}

// parseBool accepts what ODP's boolean parser accepts, in any case.
func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "true", "yes", "on", "1":
		return true, nil
	case "false", "no", "off", "0":
		return false, nil
	}
	return false, errors.New("want true or false")
}

// parseInt parses a signed decimal 64-bit integer.
func parseInt(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, errors.New("integer too large")
		}
		return 0, errors.New("want an integer")
	}
	return n, nil
}

// HashPassword returns the form in which password items are stored: the SHA1 of the
// plaintext as 40 lowercase hex digits (MySQL's "stage1" hash, without the leading '*'). The
// empty password stays empty, meaning "no password".
func HashPassword(plain string) string {
	if plain == "" {
		return ""
	}
	sum := sha1.Sum([]byte(plain))
	return hex.EncodeToString(sum[:])
}

// isSHA1Hex reports whether s is 40 hex digits in any case.
func isSHA1Hex(s string) bool {
	if len(s) != 2*sha1.Size {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// formatDuration writes d in the largest ODP unit that holds it exactly ("20s", "100ms",
// "1d"); zero is "0s".
func formatDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{Day, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}} {
		if d%u.unit == 0 {
			return strconv.FormatInt(int64(d/u.unit), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(d/time.Microsecond), 10) + "us"
}

// formatCapacity writes n bytes in the largest unit that holds it exactly ("8KB", "1GB"),
// or as plain bytes.
func formatCapacity(n int64) string {
	if n == 0 {
		return "0"
	}
	for _, u := range []struct {
		unit int64
		name string
	}{{1 << 50, "PB"}, {1 << 40, "TB"}, {1 << 30, "GB"}, {1 << 20, "MB"}, {1 << 10, "KB"}} {
		if n%u.unit == 0 {
			return strconv.FormatInt(n/u.unit, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

// splitList splits an ODP ';'-separated list, dropping empty entries.
func splitList(s string) []string { return slices.Collect(listEntries(s, ";")) }

// listEntries yields the entries of the list s, separated by any of the
// runes of seps: spaces around each entry dropped, blank entries left out.
func listEntries(s, seps string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for e := range strings.FieldsFuncSeq(s, func(r rune) bool { return strings.ContainsRune(seps, r) }) {
			if e = strings.TrimSpace(e); e != "" && !yield(e) {
				return
			}
		}
	}
}

// cutAssignment cuts the entry name=value at its first '=' into the name,
// spaces around it dropped, and the value as it is; ok is false when the
// entry has no '=' or no name.
func cutAssignment(entry string) (name, value string, ok bool) {
	name, value, ok = strings.Cut(entry, "=")
	name = strings.TrimSpace(name)
	return name, value, ok && name != ""
}

// Checks used by string items in the table.

func checkIP(s string) (string, error) {
	if net.ParseIP(s) == nil {
		return "", errors.New("want an IP address")
	}
	return s, nil
}

// parsePrefix reads an address (one host) or a prefix such as 10.0.0.0/8.
func parsePrefix(e string) (netip.Prefix, error) {
	if strings.Contains(e, "/") {
		p, err := netip.ParsePrefix(e)
		return p.Masked(), err
	}
	a, err := netip.ParseAddr(e)
	if err != nil {
		return netip.Prefix{}, err
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

func checkPrefixList(s string) (string, error) {
	for _, e := range splitList(s) {
		if _, err := parsePrefix(e); err != nil {
			return "", fmt.Errorf("entry %q: want IP addresses or prefixes (10.0.0.0/8) separated by ';'", e)
		}
	}
	return s, nil
}

func checkAddrList(s string) (string, error) {
	for _, e := range splitList(s) {
		host, port, err := net.SplitHostPort(e)
		if err != nil || host == "" {
			return "", fmt.Errorf("entry %q: want ip:port entries separated by ';'", e)
		}
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return "", fmt.Errorf("entry %q: port must be 1..65535", e)
		}
	}
	return s, nil
}

func checkSeparators(s string) (string, error) {
	if s == "" {
		return s, nil
	}
	for _, e := range strings.Split(s, ";") {
		if len(e) != 1 || e == "@" || e == "#" {
			return "", errors.New("want single characters other than '@' and '#' separated by ';'")
		}
	}
	return s, nil
}

func checkCompression(s string) (string, error) {
	if s == "" {
		return s, nil
	}
	algo, level, ok := strings.Cut(s, ":")
	if !ok || !strings.EqualFold(algo, "zlib") || len(level) != 1 || level[0] < '0' || level[0] > '9' {
		return "", errors.New("want zlib:<0-9> or nothing")
	}
	return "zlib:" + level, nil
}

func checkNotEmpty(s string) (string, error) {
	if s == "" {
		return "", errors.New("must not be empty")
	}
	return s, nil
}
