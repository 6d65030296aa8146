// Package obsim simulates an OceanBase 4.x cluster for tests, benchmarks
// and the demo: nodes on loopback ports that log clients in as OceanBase
// does (user@tenant, ODP's proxy scramble and connect attributes,
// ob_capability_flag, OB 2.0 or compressed framing), relay SQL to one shared
// MariaDB, answer the metadata SQL ODP sends from real tables kept in step
// with the topology, report ob_proxy_partition_hit from their own partition
// calculation (text statements and prepared ones with their bound
// parameters, execparams.go), make statements that run as remote plans
// pay a configurable internal round trip (remoteplan.go) and count local
// and remote statements for benchmarks (stats.go), report the user
// variables a statement assigned (uservars.go), show session ids as an
// OBServer does in CONNECTION_ID(), SHOW PROCESSLIST and KILL (procs.go),
// and can be stopped, hung, slowed, marked inactive, made to fail
// statements with chosen error codes, or lose partition leaders.
//
// Start builds a Cluster from a Topology; Cluster and Node methods are the
// fault API, and ControlHandler / ServeControl expose it over HTTP for the
// obsim command. See README.md for the topology format, the control routes
// and the simplifications.
//
// Concurrency: each client connection is served by one goroutine that owns
// its session, its prepared statements and its MariaDB connection;
// Cluster.mu guards the topology model (statuses, leaders) and the view
// tables are rewritten under it after every change; what SHOW PROCESSLIST
// reads of another session is behind that session's procInfo lock; fault
// knobs on a node take effect at the next handshake or reply of each
// session, the remote-plan cost at the next statement; statement counters
// are atomics that any goroutine may read.
package obsim
