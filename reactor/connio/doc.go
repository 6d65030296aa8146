// Package connio is the I/O a session runs on: the client transports
// (ClientIO: net, netpoll, and OB 2.0 framing over either), the pooled
// buffers answers are read into (GetChunk), the goroutines netpoll's
// callbacks and handed-off commands run on (Tasks), writes straight to a
// socket that never wait (WriteNow), and the TCP options of client and
// server connections (TuneClientConn, ServerDialer).
//
// It knows nothing of sessions or routing; which goroutine may call what
// is said on each type.
package connio
