package metrics

// Metric families. The odp_* names and their labels follow ODP; the
// obgate_* ones are obgate's own.
//
// The tenant families (SQLRequestTotal, SQLCostTotal, TransactionTotal,
// EntryTotal) carry ODP's leading labels logicTenant (app_name),
// logicSchema (""), cluster, tenant and schema (the session's current
// database); cluster and tenant are "" in mysql routing mode. Their label
// sets are limited (limited.go). ODP's slowQuery label is not exported:
// obgate has no slow_query_time_threshold.
const (
	// CurrentSession is a gauge of open sessions, label sessionType
	// (client or server).
	CurrentSession = "odp_current_session"
	// NewClientConnections counts client connections by connectionResult
	// (success or fail).
	NewClientConnections = "odp_new_client_connections"
	// SQLRequestTotal counts statements by the tenant labels, sqlType
	// (SELECT, INSERT, ..., OTHERS), sqlResult (success or fail) and
	// partitionHit (false when the server's ob_proxy_partition_hit
	// feedback said the statement ran away from its data; true otherwise,
	// and always in mysql routing mode).
	SQLRequestTotal = "odp_sql_request_total"
	// SQLCostTotal accumulates statement time in microseconds by the
	// tenant labels, sqlType and timeType: total (first byte of the
	// request to the end of the answer), prepare (request to when it was
	// sent to the server that answered; 0 for statements obgate answers
	// itself) and server (sent to the first byte of the answer). ODP
	// declares the family a gauge but only ever adds to it; obgate
	// exports it as a counter, so rate() gives seconds per second.
	SQLCostTotal = "odp_sql_cost_total"
	// TransactionTotal counts finished transactions by the tenant labels.
	TransactionTotal = "odp_transaction_total"
	// RequestByte counts bytes by transType (request or response) and
	// sessionType (client or server); an extra family.
	RequestByte = "odp_request_byte"
	// SQLLatency is a histogram of statement latency in seconds, from the
	// first byte of the request to the last byte of the response, with
	// Prometheus le buckets.
	SQLLatency = "obgate_sql_latency_seconds"
	// ServerConnectFailures counts failed connection attempts to servers.
	ServerConnectFailures = "obgate_server_connect_failures_total"
	// SessionHandovers counts client sessions a hot upgrade moved between
	// processes, by direction: sent (this process handed it on), adopted
	// (this process took it) or refused (the new process would not take
	// it; it drained here).
	SessionHandovers = "obgate_session_handovers_total"
	// PreparesReused counts the clients' COM_STMT_PREPAREs answered from a
	// statement the session closed and obgate kept prepared
	// (client_ps_keep_count), without a server round trip.
	PreparesReused = "obgate_prepares_reused_total"
	// ServerFailures counts server sessions that broke under a statement,
	// by reason (connection, checksum).
	ServerFailures = "obgate_server_failures_total"
	// MemoryLimit is proxy_mem_limited, the Go memory limit, in bytes;
	// MemoryInUse the live heap the memory guard compares with it;
	// MemoryHigh is 1 while new clients are refused for memory.
	MemoryLimit = "obgate_memory_limit_bytes"
	MemoryInUse = "obgate_memory_in_use_bytes"
	MemoryHigh  = "obgate_memory_high"
	// ConfigChanges counts successful ALTER PROXYCONFIG changes.
	ConfigChanges = "obgate_config_changes_total"
	// ClientRefused counts client connections turned away before their
	// session began, by reason (fd_exhausted: obgate had no file descriptor
	// left for the client or for its server connection; memory: over
	// proxy_mem_limited's high-water mark; handshakes: too many logins in
	// progress; admin_blocked: administrator logins from an address that
	// failed too often).
	ClientRefused = "obgate_client_refused_total"
	// Panics counts panics recovered in obgate's own code, by where
	// (login, command, net_loop, netpoll_request, netpoll_close,
	// netpoll_disconnect, accept, idle_sweeper, server_watch, poller,
	// handover, greeting_look, memory_sampler, adoption, cluster_refresh,
	// http, cpu_governor, config_subscriber, signals, upgrade_parent,
	// upgrade_child, handover_adopt). Each one is a bug; the session it
	// hit is closed, a background loop loses one pass, and everything else
	// goes on.
	Panics = "obgate_panic_total"
	// PollerFinished counts client commands served wholly on a poller
	// goroutine (netpoll's event loop: the fast path); PollerHandOffs those
	// a poller began and gave to a pooled goroutine, by step: where the
	// goroutine took over (command: from its start, because the command
	// is not one the poller serves or the session is not in a state to;
	// command_not_fast: the poller began it and found it needs a dial, a
	// login or a round trip first; send, relay, prepare, reply: a write or
	// a read that would have waited; outcome, end, close: an error, a
	// resend or the session's end).
	PollerFinished = "obgate_poller_finished_total"
	PollerHandOffs = "obgate_poller_handoffs_total"
	// StatementsResent counts statements sent again, invisibly, to another
	// server after their server broke before any byte of the answer
	// reached the client (read-only statements outside transactions).
	StatementsResent = "obgate_statement_resent_total"
	// StatementsRetried counts statements sent to another server after the
	// first one answered with an error that says nothing ran (8001, 8002,
	// 5150, 4124, 5081, ...), by code.
	StatementsRetried = "obgate_statement_retried_total"
	// EntryTotal counts table-entry lookups of statements routed by table,
	// by the tenant labels, entryType (table_entry), routeHit (the location
	// cache had the table) and routeResult (the statement's partition was
	// found); an extra family.
	EntryTotal = "odp_entry_total"
	// PartitionHits counts the servers' ob_proxy_partition_hit feedback by
	// partitionHit (true: the statement ran where its data is).
	PartitionHits = "obgate_partition_hit_total"
	// PartitionHitRatio is the share of that feedback that was a hit (1
	// before any feedback).
	PartitionHitRatio = "obgate_partition_hit_ratio"
	// CongestedServers is a gauge of servers on any blocklist.
	CongestedServers = "obgate_congested_servers"
	// ServerCongested is 1 while a server is on a list, by server and list
	// (dead, alive, detect, connect, force).
	ServerCongested = "obgate_server_congested"
	// CongestionChanges counts blocklist changes by list and change (set,
	// clear).
	CongestionChanges = "obgate_congestion_changes_total"
	// AliveFailures counts failures seen by real traffic that count toward
	// the alive-but-unavailable list, by reason.
	AliveFailures = "obgate_server_alive_failures_total"
	// DetectProbes counts probes of the detect task by result (ok, fail).
	DetectProbes = "obgate_detect_probes_total"
	// SessionsMoved counts mysql-mode client sessions carried to another
	// server after theirs failed.
	SessionsMoved = "obgate_session_moved_total"
	// ServerSessions is a gauge of obgate's open server sessions per server.
	ServerSessions = "obgate_server_sessions"
	// ServerRequests counts statements sent per server.
	ServerRequests = "obgate_server_requests_total"
	// SQLErrors counts the ERR packets that answered client commands, by
	// code: the servers' that obgate relayed and obgate's own.
	SQLErrors = "obgate_sql_error_total"
	// MonitorItemDropped counts updates of tenant-family label sets that
	// were not created because monitor_item_limit of them existed.
	MonitorItemDropped = "obgate_monitor_item_dropped_total"
)

// Label values.
const (
	SessionClient = "client"
	SessionServer = "server"
	ResultSuccess = "success"
	ResultFail    = "fail"
	TransRequest  = "request"
	TransResponse = "response"
	// timeType values of SQLCostTotal.
	TimeTotal   = "total"
	TimePrepare = "prepare"
	TimeServer  = "server"
	// RefusedFDExhausted is the ClientRefused reason for running out of
	// file descriptors.
	RefusedFDExhausted = "fd_exhausted"
	// RefusedMemory is the ClientRefused reason for memory over the
	// high-water mark of proxy_mem_limited.
	RefusedMemory = "memory"
	// RefusedHandshakes is the ClientRefused reason for too many
	// connections still in their handshake (client_max_handshakes, in all
	// or from one address).
	RefusedHandshakes = "handshakes"
	// RefusedAdminBlocked is the ClientRefused reason for an
	// administrator login from an address blocked after failed logins.
	RefusedAdminBlocked = "admin_blocked"
)
