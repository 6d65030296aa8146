// Package mysqlproto holds obgate's wire codecs: MySQL packet framing with the
// 16 MiB continuation rule, the v10 handshake and HandshakeResponse41, auth
// scrambles, OK/ERR/EOF packets with session-state tracking, response-boundary
// scanning for streaming forward, result-set encoding for locally answered
// statements, the SQL error type and its code table, a small client for
// internal SQL, and OceanBase's side of the wire: OB 2.0 frames with their
// CRC-16 and raw CRC-32C checksums, extra info in both formats, capability
// negotiation, OceanBase value serialization (partition bounds), and the MySQL
// compressed protocol.
//
// The package does no I/O policy, routing or logging. Decoders take a byte
// slice and a position, return the new position and an ok flag, and never
// panic on malformed input; every decoder has a fuzz target.
//
// Buffer ownership: a function that returns a slice of its input says so
// ("borrowed"); such a slice is valid only as long as the caller keeps the
// input unchanged. Functions named Append* write to the end of dst and return
// the extended slice, like the standard library's strconv.Append*.
package mysqlproto
