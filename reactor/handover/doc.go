// Package handover is how a hot upgrade gives a live client session from
// the old obgate process to the new one: the session's state as plain
// data (State, with a record per part: prepared statements, server
// sessions, mysql mode's move login, OceanBase mode's login and
// variables), its versioned encoding, and the socket the state travels
// on with the session's descriptors (Link).
//
// It knows no session type: reactor builds a State from a session at an
// idle point, and a session from a State it adopts. Which fields of a
// session travel, and why the others need not, is the ledger of reactor's
// handover_fields_test.go.
//
// The encoding is explicit and versioned so that a newer obgate takes
// sessions from an older one:
//
//	"OBGS" | version:2 | fields
//	field: tag:2 | length:4 | value
//
// all little-endian. A record is a field whose value is fields again. A
// tag with the optional bit set may be skipped by a reader that does not
// know it (a detail the session can do without); an unknown tag without
// it makes the reader refuse the session, which then stays with the old
// process and drains there. A new field that a session cannot do without
// takes a new required tag; the version changes only when the meaning of
// an existing field does.
package handover
