// Package route decides where a statement goes. It holds the cluster
// resources (servers, zones, tenants) read from the sys tenant, the
// immutable routing-table snapshots published through atomic pointers,
// the username grammar that picks a cluster and tenant, and the statement
// facts routing needs, read by a small allocation-free lexer rather than a
// SQL parser. PartDesc computes which tablet of a partitioned table a
// statement touches, from the partition key values in its text.
//
// route does not import health, nor health route: route asks an
// Availability interface whether a server may take new requests and tells
// a TableObserver of every table it reads, and health's Monitor satisfies
// both. What the two share, the servers and zones of a table with their
// states and how a try failed, is internal/topology's and
// internal/failure's.
package route
