// Package config is obgate's configuration: ODP's parameters (obproxy's proxy config) with
// ODP's names, value notation, ranges and need_reboot rules, plus a few of obgate's own.
// It imports nothing else from obgate.
//
// # One table, typed fields
//
// Every parameter is one entry of the registry in items.go: its ODP name, default, range,
// need_reboot flag, visible level, a one-line description and a reference to the field of
// Config that holds it. The reference is a small function returning a pointer to that field,
// and its constructor (intRef, durRef, ...) fixes the item's kind from the field's Go type,
// so the table and the struct cannot disagree; a test checks that every field is referenced
// by exactly one item. The same table drives the command line (-o), the config file,
// SHOW PROXYCONFIG (Items, Item.Value), ALTER PROXYCONFIG (Store.Set) and the generated
// reference (MarkdownTable, tools/genconfigdoc).
//
// Struct tags were the other option; a table of entries keeps each item's documentation
// readable, needs no reflection at run time, and lets the compiler check the field
// references.
//
// # Snapshots
//
// A *Config is an immutable snapshot. Readers call Store.Load once per unit of work (a
// command, a probe round) and read plain fields such as cfg.ClientMaxConnections (int64) or
// cfg.ShortAsyncTaskTimeout (time.Duration): an atomic load and field reads, nothing else.
// Store.Set builds a new snapshot and publishes it with an atomic store, so a reader sees
// either the old or the new snapshot and never a mix. Components that keep derived state
// (tickers, pools) register with Store.Subscribe.
//
// need_reboot items changed by Set are written to the file but do not enter the running
// snapshot; Store.Saved has them and Store.Pending lists them until the next start.
//
// # Values
//
// Durations are ODP time values: an integer with us, ms, s, m, h or d, where a bare number
// means seconds ("20s", "100ms", "1d", "180000"), except in hot_upgrade_exit_timeout, which
// ODP counts in microseconds. Capacities are integers with B, K/KB, M/MB, G/GB, T/TB or P/PB
// in powers of 1024, where a bare number means bytes ("8KB", "2G").
// Booleans accept true/false, yes/no, on/off and 1/0 in any case. Ranges use ODP's notation:
// "[1s,1h]" is inclusive, "(1024,65536)" exclusive, "[0,]" unbounded above. Every set is
// checked against the range and the error names the item and the range.
//
// Password items (obproxy_sys_password, inspector_password, observer_sys_password,
// observer_sys_password1) hold the SHA1 of the password as 40 lowercase hex digits, or ""
// for no password. How a value is read depends on where it comes from:
//   - ALTER PROXYCONFIG (Store.Set) always hashes what it is given, as ODP does;
//   - -o takes 40 hex digits as the hash itself, which is what ODP start scripts pass, and
//     hashes anything else;
//   - the config file holds hashes and is never hashed again.
//
// # Load order and persistence
//
// ParseArgs reads ODP's command line (-p -l -r -c -n -o -N -V -h) plus --config-dir and
// --check-config. Load applies, lowest priority first: defaults, <config dir>/obgate.conf,
// -o values, flags. Then, as ODP dumps its config at startup, it rewrites the file with every
// value that differs from its default. Each successful Set rewrites it too, through a temporary file, fsync and
// rename. The file is plain "name = value" text that may be edited while obgate is stopped.
//
// Check (obgate --check-config) builds the same configuration without writing anything and
// returns every problem instead of the first, each as "file:line: message" or
// "flag: message". It is stricter than Load: an unknown or repeated item in the file, which
// Load only warns about (with its line) or lets the last one win, is a problem.
//
// # Concurrency
//
// Items, Lookup, Default, the parsers and all *Config methods are safe from any goroutine.
// Store methods are safe from any goroutine; Set calls are serialised, and subscribers run
// on the goroutine that called Set. ParseArgs and Load are for main, once, at startup.
package config
