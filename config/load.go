package config

import (
	"fmt"
	"path/filepath"
)

// Load builds the startup configuration and returns a Store backed by the config file. The
// order, lowest priority first, is: defaults; <ConfigDir>/obgate.conf; opts.Overrides (-o
// values, then flags). Unknown names in the file are skipped and listed in Store.Warnings;
// an unknown name or an invalid value anywhere else is an error, and so is an invalid value in
// the file. Passwords in the file are SHA1 hex and used as is; on the command line a value of
// 40 hex digits is taken as the hash (what ODP start scripts pass) and anything else is hashed.
//
// Like ODP, which dumps its config back at startup, Load then writes the file (creating the
// directory if needed) with every value that differs from its default; when that write fails
// (a read-only mount) Load goes on and says so in Store.Warnings. A nil opts means no
// overrides and DefaultConfigDir. Load is meant to be called once, from main.
func Load(opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	dir := opts.ConfigDir
	if dir == "" {
		dir = DefaultConfigDir
	}
	path := filepath.Join(dir, FileName)

	c := Default()
	warnings, err := readFile(path, c)
	if err != nil {
		return nil, err
	}
	if err := applyOverrides(c, opts.Overrides); err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := writeConfigFile(path, c); err != nil {
		// A file obgate may read but not write (a Secret or ConfigMap mounted read-only) is
		// the operator's choice: run on it, say so; ALTER PROXYCONFIG then fails on the same
		// write, with this error, and changes nothing.
		warnings = append(warnings, fmt.Sprintf("%s is not rewritten, so ALTER PROXYCONFIG will be refused: %v", path, err))
	}
	s := NewStore(c)
	s.path = path
	s.warnings = warnings
	return s, nil
}
