package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// DefaultConfigDir is where the config file lives unless --config-dir says otherwise.
const DefaultConfigDir = "./etc"

// Override is one item value given on the command line.
type Override struct {
	Name  string // registry name, e.g. "listen_port"
	Value string
	From  string // what set it, for error messages: "-o" or a flag such as "-p/--listen_port"
}

// Options is the parsed command line.
type Options struct {
	ConfigDir string     // directory of the config file; DefaultConfigDir if empty
	Overrides []Override // -o values in the order given, then flag values; later ones win
	Version   bool       // -V: print the version and exit
	Help      bool       // -h: print Usage and exit
	NoDaemon  bool       // -N: accepted for ODP compatibility; obgate always stays in the foreground
	// CheckConfig (--check-config): check the config file and the command line with Check,
	// report, and exit without serving or writing anything.
	CheckConfig bool
}

// flagItems maps ODP's value flags to the items they set, in the order they are applied.
var flagItems = []struct {
	long, short, item, usage string
}{
	{"listen_port", "p", "listen_port", "SQL listen port (1025..65535)"},
	{"prometheus_listen_port", "l", "prometheus_listen_port", "Prometheus metrics port"},
	{"rs_list", "r", "rootservice_list", "root servers, ip:sql_port;ip:sql_port"},
	{"cluster_name", "c", "rootservice_cluster_name", "cluster name of the root servers"},
	{"appname", "n", "app_name", "application name"},
}

// newFlagSet declares obgate's flags on a fresh set whose parse results land in the given
// variables.
func newFlagSet(values map[string]*string, optstr *[]string, opts *Options) *pflag.FlagSet {
	fs := pflag.NewFlagSet("obgate", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.Usage = func() {}
	for _, f := range flagItems {
		values[f.long] = fs.StringP(f.long, f.short, "", f.usage)
	}
	fs.StringArrayVarP(optstr, "optstr", "o", nil, "config items, name=value separated by ',' or newlines")
	fs.BoolVarP(&opts.NoDaemon, "nodaemon", "N", false, "run in the foreground (always the case)")
	fs.BoolVarP(&opts.Version, "version", "V", false, "print the version and exit")
	fs.BoolVarP(&opts.Help, "help", "h", false, "print this help and exit")
	fs.StringVar(&opts.ConfigDir, "config-dir", DefaultConfigDir, "directory of "+FileName)
	fs.BoolVar(&opts.CheckConfig, "check-config", false, "check "+FileName+" and the options, print ok or each problem, and exit")
	return fs
}

// ParseArgs parses the command line (without the program name) in ODP's syntax plus
// --config-dir and --check-config. Item names and -o syntax are checked here (an error lists
// every bad -o pair, one per line); values are checked by Load.
func ParseArgs(args []string) (*Options, error) {
	opts := &Options{}
	values := map[string]*string{}
	var optstr []string
	fs := newFlagSet(values, &optstr, opts)
	fs.SetOutput(new(strings.Builder))
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("config: unexpected argument %q", fs.Arg(0))
	}
	var errs []error // every bad -o pair, so that --check-config can list them all
	for _, s := range optstr {
		ovs, err := parseOptStr(s)
		if err != nil {
			errs = append(errs, err)
		}
		opts.Overrides = append(opts.Overrides, ovs...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, f := range flagItems {
		if fs.Changed(f.long) {
			opts.Overrides = append(opts.Overrides, Override{
				Name: f.item, Value: *values[f.long], From: "-" + f.short + "/--" + f.long,
			})
		}
	}
	return opts, nil
}

// Usage returns the help text for -h.
func Usage() string {
	var opts Options
	fs := newFlagSet(map[string]*string{}, new([]string), &opts)
	return "Usage: obgate [options]\n\nOptions:\n" + fs.FlagUsages()
}

// parseOptStr parses the argument of -o: name=value pairs separated by commas or newlines,
// as ODP's -o. Empty pairs are skipped, spaces around names and values dropped, and one pair
// of matching quotes around a value removed (start scripts often quote values). The value
// ends at the next comma, so it cannot contain one; use the config file or ALTER PROXYCONFIG
// for such values. Unknown names are errors; the error joins one per bad pair, and the good
// pairs are returned with it.
func parseOptStr(s string) ([]Override, error) {
	var out []Override
	var errs []error
	for pair := range listEntries(s, ",\n") {
		name, value, ok := cutAssignment(pair)
		if !ok {
			errs = append(errs, fmt.Errorf("config: -o: %q: want name=value", pair))
			continue
		}
		it, ok := Lookup(name)
		if !ok {
			errs = append(errs, fmt.Errorf("config: -o: %w: %q", ErrUnknownItem, name))
			continue
		}
		out = append(out, Override{Name: it.name, Value: unquote(strings.TrimSpace(value)), From: "-o"})
	}
	return out, errors.Join(errs...)
}

// unquote removes one pair of matching single or double quotes around s.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// applyOverrides sets each override on c with command-line semantics.
func applyOverrides(c *Config, ovs []Override) error {
	for _, ov := range ovs {
		it, ok := Lookup(ov.Name)
		if !ok {
			return fmt.Errorf("config: %s: %w: %q", ov.From, ErrUnknownItem, ov.Name)
		}
		if err := c.set(it, ov.Value, fromCommandLine); err != nil {
			return fmt.Errorf("config: %s: %w", ov.From, err)
		}
	}
	return nil
}
