// Package health decides which servers may take new requests. Its Monitor
// answers route's Availability (route asks it about each candidate on the
// statement path, and it answers from atomic loads only) and observes
// route's tables (TableObserver), but health does not import route: the
// two share the vocabulary of internal/topology (servers, zones, their
// states) and internal/failure (how a try failed), and the process wires
// them together.
//
// What it knows today:
//   - the cluster's own view of each server, read by the server-state
//     refresh (TableChanged): a server that is not ACTIVE, or whose zone is
//     not ACTIVE, is unavailable (ODP's force-congested states);
//   - connection failures reported by sessions (ConnectFailed): a server
//     that refused or timed out a connection is unavailable for
//     congestion_retry_interval, process-wide, so that every new session
//     does not pay the connect timeout again.
//
// Entries are created when a failure is first reported and read through a
// sync.Map, whose loads take no lock.
package health
