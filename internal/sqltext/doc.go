// Package sqltext is the one place where text becomes part of SQL that
// obgate sends to a server: the location, partition, routine and tenant
// queries it runs as proxyro@sys, and the SET statements that replay a
// client's variables on another server session.
//
// Nothing else may splice text into such SQL. A value goes in as a string
// literal (String), a name that must be an identifier as a backquoted
// identifier (Ident), and a name that a query looks up is first checked to
// be one an OceanBase object can have (CheckName). Numbers are not text:
// callers format them with strconv.
//
// The package imports nothing of obgate's, so that every package may use
// it.
package sqltext
