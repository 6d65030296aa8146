// Package testproxy runs an obgate inside a test process, wired as
// cmd/obgate wires one: configuration, clusters, health monitor, router,
// reactor server and the admin interceptor, on a loopback port, with its
// diagnosis log kept in memory for the test to read.
//
// It is the one test helper that imports the production packages above
// config; internal/testkit, which the benchmarks use too, imports none of
// them.
package testproxy
