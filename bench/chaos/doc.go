// Package chaos runs fault-injection scenarios against obgate under load and
// says, for each one, what the clients saw and whether obgate behaved as an
// OceanBase Database Proxy should.
//
// A scenario starts a fresh obgate in front of a simulated three-zone
// OceanBase cluster (tools/obsim, run as its binary and driven through its
// control endpoint) or in front of two throwaway MariaDB servers (mysql
// routing mode, with HAProxy as the reference), puts a load on it, breaks a
// server, repairs it, and measures:
//
//   - what the clients saw: statements that failed, by MySQL error code or
//     by driver-side class ("net", "timeout", "badconn"), reads and writes
//     apart, per second; and how often they had to reconnect;
//   - how fast obgate stopped sending to the broken server and how fast it
//     came back, from the simulator's per-node statement log (the proxy's
//     sessions of the load's user only) or from obgate's per-server request
//     metric where it has one;
//   - what SHOW PROXYCONGESTION said about the server, once a second;
//   - whether every acknowledged write is in the database exactly once, and
//     nothing else is (the ledger check);
//   - whether obgate gave back its goroutines, file descriptors and server
//     sessions afterwards (the leak check).
//
// # Load
//
// Read workers run sysbench's oltp_read_only statement mix with
// --skip_trx=on: ten point selects, a simple range, a sum range, an order
// range and a distinct range, each its own autocommit statement, on an
// sbtest-like table the suite creates and fills. Reads are autocommit on
// purpose: a read inside an explicit transaction whose server dies must get
// an ERR (the transaction is gone with the server), so only autocommit reads
// can be expected never to fail.
//
// Write workers alternate between single autocommit INSERTs and small
// transactions (BEGIN; INSERT; INSERT; COMMIT) into a ledger table that has
// no unique key on the operation name, so a write applied twice shows up as
// two rows. Every attempt uses a fresh operation name, and the client keeps
// its own record of each: acknowledged (the INSERT or the COMMIT got an OK),
// failed (an error before COMMIT was sent, then ROLLBACK: must be absent) or
// of unknown fate (an error on COMMIT or on an autocommit INSERT: either
// outcome is allowed, but a transaction must be all or nothing).
//
// Statements use the text protocol (the driver interpolates parameters), one
// round trip each; every worker has its own connection and opens a new one
// when the old one broke (counted as a reconnect).
package chaos
