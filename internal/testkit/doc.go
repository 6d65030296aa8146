// Package testkit holds helpers for obgate's end-to-end tests: an
// in-process obgate built from a config snapshot, free ports, a generated
// TLS certificate, a client that speaks the wire protocol one packet at a
// time (to send what no driver would), a test logger and goroutine-leak
// checks that know about netpoll's process-wide pollers.
//
// Nothing here is used by production code; the package is internal so
// that it cannot become an API.
package testkit
