// Package memory measures what a proxy process costs in memory: its RSS
// while a slow client holds up a large result (backpressure), and its RSS
// and goroutines per idle client connection. The obgate end-to-end tests
// and bench/cmd/memory-suite share it.
//
// The clients are raw mysqlproto clients, so the measuring process stays
// light and its own buffering is known: a slow client reads through a
// 16 KiB buffer and may shrink its socket's receive buffer.
package memory
