// Package testkit holds helpers for obgate's tests and benchmarks: free
// ports, waits for conditions, metric sums, a generated
// TLS certificate, a client that speaks the wire protocol one packet at a
// time (to send what no driver would), a test logger and goroutine-leak
// checks that know about netpoll's process-wide pollers.
//
// It imports no obgate package but mysqlproto, so that a benchmark or a
// low package's test can use it without pulling the proxy in; an
// in-process obgate is internal/testproxy's. Nothing here is used by
// production code; the package is internal so that it cannot become an
// API.
package testkit
