package config

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Kind is the value type of an item.
type Kind uint8

const (
	KindBool     Kind = iota // true/false (also yes/no, on/off, 1/0)
	KindInt                  // signed decimal integer
	KindDuration             // ODP time: "20s", "100ms", "1d"; a plain number is seconds
	KindCapacity             // ODP size: "8KB", "16MB", "2G"; a plain number is bytes
	KindString               // free text, sometimes restricted to a set of choices
	KindPassword             // SHA1 hex of a password; see HashPassword
)

var kindNames = [...]string{"bool", "int", "duration", "capacity", "string", "password"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Level is the visible_level column of SHOW PROXYCONFIG.
type Level uint8

const (
	LevelUser Level = iota // ordinary tuning knobs
	LevelSys               // identity, security and internals
	LevelDBA               // reserved for items only a DBA should see
)

var levelNames = [...]string{"USER", "SYS", "DBA"}

func (l Level) String() string {
	if int(l) < len(levelNames) {
		return levelNames[l]
	}
	return "Level(" + strconv.Itoa(int(l)) + ")"
}

// Errors returned by Set, With and Load wrap one of these.
var (
	ErrUnknownItem  = errors.New("unknown config item")
	ErrInvalidValue = errors.New("invalid config value")
	ErrNotAlterable = errors.New("config item cannot be changed while running")
)

// Item describes one parameter. Items live in a fixed registry built at package
// initialisation and are never modified, so they may be shared by any goroutine.
type Item struct {
	name    string
	ref     ref    // the Config field that holds the value; also fixes the kind
	def     string // default, in the notation a user would write
	rng     string // ODP range notation: "[1s,1h]", "(1024,65536)", "[0,]"; "" = unbounded
	reboot  bool   // need_reboot: a change is stored but only used after a restart
	fixed   bool   // refused by ALTER PROXYCONFIG (as ODP refuses app_name)
	level   Level
	doc     string
	choices []string                     // allowed values of a string item, matched ignoring case
	check   func(string) (string, error) // validates and normalises a string item
	bare    time.Duration                // unit of a duration given as a bare number; 0 = seconds

	index  int   // position in the registry
	lo, hi bound // parsed from rng
}

// bound is one end of an item's range, in the kind's unit (nanoseconds, bytes, or the number).
type bound struct {
	set  bool
	open bool
	v    int64
}

// Name returns the ODP name, e.g. "client_max_connections".
func (it *Item) Name() string { return it.name }

// Kind returns the value type.
func (it *Item) Kind() Kind { return it.ref.kind }

// Default returns the default value as text.
func (it *Item) Default() string { return it.def }

// NeedReboot reports whether a new value only takes effect after a restart.
func (it *Item) NeedReboot() bool { return it.reboot }

// Level returns the visible level.
func (it *Item) Level() Level { return it.level }

// Doc returns the one-line description (the info column of SHOW PROXYCONFIG).
func (it *Item) Doc() string { return it.doc }

// inertPrefix starts the doc of every item that obgate accepts, so that ODP's start scripts and
// config files keep working, but that changes nothing; the rest of the doc says why.
const inertPrefix = "Accepted for ODP compatibility; changes nothing: "

// Inert reports whether the item is accepted for ODP compatibility and changes nothing.
func (it *Item) Inert() bool { return strings.HasPrefix(it.doc, inertPrefix) }

// Range returns the allowed range in ODP notation, or for enumerated strings the choices
// joined by "|" (the empty choice is written as two single quotes), or "".
func (it *Item) Range() string {
	if it.rng != "" || len(it.choices) == 0 {
		return it.rng
	}
	shown := make([]string, len(it.choices))
	for i, c := range it.choices {
		if c == "" {
			c = "''"
		}
		shown[i] = c
	}
	return strings.Join(shown, "|")
}

// source says where a value comes from; it matters only for passwords.
type source uint8

const (
	fromFile        source = iota // the config file holds hashes: store as is
	fromCommandLine               // -o and flags: 40 hex digits are a hash, anything else plaintext
	fromAlter                     // ALTER PROXYCONFIG: always plaintext, as ODP
)

// parse turns raw into the typed value and the text shown for it. Errors name the item.
func (it *Item) parse(raw string, src source) (any, string, error) {
	if it.Kind() != KindPassword || src == fromFile {
		raw = strings.TrimSpace(raw)
	}
	v, text, err := it.parseValue(raw, src)
	if err != nil {
		if it.Kind() == KindPassword {
			return nil, "", fmt.Errorf("%w: %s: %v", ErrInvalidValue, it.name, err)
		}
		return nil, "", fmt.Errorf("%w: %s: %q: %v", ErrInvalidValue, it.name, raw, err)
	}
	return v, text, nil
}

func (it *Item) parseValue(raw string, src source) (any, string, error) {
	switch it.Kind() {
	case KindBool:
		b, err := parseBool(raw)
		return b, strconv.FormatBool(b), err
	case KindInt:
		n, err := parseInt(raw)
		if err == nil {
			err = it.inRange(n)
		}
		return n, strconv.FormatInt(n, 10), err
	case KindDuration:
		d, err := parseDuration(raw, it.bareUnit())
		if err == nil {
			err = it.inRange(int64(d))
		}
		return d, raw, err
	case KindCapacity:
		n, err := ParseCapacity(raw)
		if err == nil {
			err = it.inRange(n)
		}
		return n, raw, err
	case KindPassword:
		h, err := parsePassword(raw, src)
		return h, h, err
	}
	s, err := it.parseString(raw)
	return s, s, err
}

func parsePassword(raw string, src source) (string, error) {
	switch {
	case raw == "":
		return "", nil
	case src == fromAlter:
		return HashPassword(raw), nil
	case isSHA1Hex(raw):
		return strings.ToLower(raw), nil
	case src == fromCommandLine:
		return HashPassword(raw), nil
	}
	return "", errors.New("want 40 hex digits (the SHA1 of the password) or nothing")
}

func (it *Item) parseString(raw string) (string, error) {
	if len(raw) > maxStringLen {
		return "", fmt.Errorf("longer than %d bytes", maxStringLen)
	}
	if strings.ContainsAny(raw, "\r\n\x00") {
		return "", errors.New("line breaks and NUL are not allowed")
	}
	if len(it.choices) > 0 {
		for _, c := range it.choices {
			if strings.EqualFold(raw, c) {
				return c, nil
			}
		}
		return "", errors.New("want one of " + it.Range())
	}
	if it.check != nil {
		return it.check(raw)
	}
	return raw, nil
}

// maxStringLen bounds string values, as ODP's OB_MAX_CONFIG_VALUE_LEN does.
const maxStringLen = 4096

func (it *Item) bareUnit() time.Duration {
	if it.bare == 0 {
		return time.Second
	}
	return it.bare
}

func (it *Item) inRange(v int64) error {
	lo, hi := it.lo, it.hi
	if lo.set && (v < lo.v || lo.open && v == lo.v) || hi.set && (v > hi.v || hi.open && v == hi.v) {
		return errors.New("out of range " + it.rng)
	}
	return nil
}

// parseRange fills it.lo and it.hi from it.rng, whose ends are written in the item's kind.
func (it *Item) parseRange() error {
	r := strings.TrimSpace(it.rng)
	if r == "" {
		return nil
	}
	if len(r) < 3 || !strings.ContainsRune("[(", rune(r[0])) || !strings.ContainsRune("])", rune(r[len(r)-1])) {
		return fmt.Errorf("range %q: want [lo,hi] with ( or ) for open ends", it.rng)
	}
	lo, hi, ok := strings.Cut(r[1:len(r)-1], ",")
	if !ok {
		return fmt.Errorf("range %q: missing comma", it.rng)
	}
	var err error
	if it.lo, err = it.parseBound(lo, r[0] == '('); err != nil {
		return err
	}
	if it.hi, err = it.parseBound(hi, r[len(r)-1] == ')'); err != nil {
		return err
	}
	return nil
}

func (it *Item) parseBound(s string, open bool) (bound, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return bound{}, nil
	}
	var v int64
	var err error
	switch it.Kind() {
	case KindInt:
		v, err = parseInt(s)
	case KindDuration:
		var d time.Duration
		d, err = parseDuration(s, it.bareUnit())
		v = int64(d)
	case KindCapacity:
		v, err = ParseCapacity(s)
	default:
		err = errors.New("only int, duration and capacity items have ranges")
	}
	if err != nil {
		return bound{}, fmt.Errorf("range %q: %v", it.rng, err)
	}
	return bound{set: true, open: open, v: v}, nil
}

// The registry, built once from the table in items.go.
var (
	registry = buildRegistry(itemTable)
	byName   = indexRegistry(registry)
)

func buildRegistry(table []Item) []*Item {
	out := make([]*Item, len(table))
	for i := range table {
		it := &table[i]
		it.index = i
		if err := it.parseRange(); err != nil {
			panic("config: item " + it.name + ": " + err.Error())
		}
		out[i] = it
	}
	return out
}

func indexRegistry(items []*Item) map[string]*Item {
	m := make(map[string]*Item, len(items))
	for _, it := range items {
		if _, dup := m[it.name]; dup || it.name != strings.ToLower(it.name) {
			panic("config: duplicate or non-lowercase item name " + it.name)
		}
		m[it.name] = it
	}
	return m
}

// Items returns every item in display order. The slice is a copy; the items are shared.
func Items() []*Item { return slices.Clone(registry) }

// Lookup finds an item by name, ignoring case and surrounding spaces.
func Lookup(name string) (*Item, bool) {
	it, ok := byName[strings.ToLower(strings.TrimSpace(name))]
	return it, ok
}

func lookup(name string) (*Item, error) {
	it, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownItem, name)
	}
	return it, nil
}
