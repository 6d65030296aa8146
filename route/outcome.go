package route

import (
	"strings"

	"obgate/internal/failure"
	"obgate/mysqlproto"
)

// The rules in this file decide what the outcome of a statement's try on a
// server means: whether the statement may go to another server, what the
// outcome says of the location it was routed by, and (WeakRead) whether it
// reads weakly at all. They are data and pure functions; the session
// reports what happened and obeys. health judges what an outcome says of
// the server (AliveFailure and friends).

// ResendableERR reports the server error codes after which a statement
// goes to another server, write or read: the server says it did not run
// it and another server may (odp-behaviour.md §4.3). 5727 REROUTE is
// handled apart (ResendAfterReroute).
func ResendableERR(code uint16) bool {
	switch code {
	case mysqlproto.OBServerIsInit, mysqlproto.OBServerIsStopping, mysqlproto.OBTenantNotInServer,
		mysqlproto.OBConnectError, mysqlproto.OBErrReadOnly:
		return true
	}
	return false
}

// RetryableLoginERR reports the errors to a login after which another
// server is tried (odp-behaviour.md §4.3, SERVER_SEND_LOGIN).
func RetryableLoginERR(code uint16) bool {
	switch code {
	case mysqlproto.OBServerIsInit, mysqlproto.OBServerIsStopping, mysqlproto.OBTenantNotInServer,
		mysqlproto.OBConnectError, mysqlproto.OBClusterNoMatch, mysqlproto.OBSessionEntryExist,
		mysqlproto.OBServiceNameNotFound, mysqlproto.OBNotPrimaryTenant:
		return true
	}
	return false
}

// LocationFix says what a server's ERR tells of the location a statement
// was routed by.
type LocationFix uint8

const (
	FixNone       LocationFix = iota
	FixEntryLater             // the entry is dirty; fetch it after delay_update_entry_interval (4038 NOT_MASTER)
	FixEntryNow               // the entry is dirty and due now (4124 CONNECT_ERROR, 5727 REROUTE)
	FixTenantNow              // every entry of the tenant is dirty (5150 TENANT_NOT_IN_SERVER, 4666 CLUSTER_NO_MATCH)
)

// LocationFixFor maps a server ERR code to what it says of the location.
func LocationFixFor(code uint16) LocationFix {
	switch code {
	case mysqlproto.OBNotMaster:
		return FixEntryLater
	case mysqlproto.OBConnectError, mysqlproto.OBErrReroute:
		return FixEntryNow
	case mysqlproto.OBTenantNotInServer, mysqlproto.OBClusterNoMatch:
		return FixTenantNow
	}
	return FixNone
}

// Try describes a statement whose try on a server failed before any byte
// of the answer reached the client, as the session knows it.
type Try struct {
	Failure failure.Kind
	// Code is the ERR's code for failure.HeldERR.
	Code uint16
	// ReadOnly: the statement was read whole and only reads, so running
	// it twice changes nothing (a SELECT without locks, or the execute
	// of such a prepared statement).
	ReadOnly bool
	// Kept: the whole request is kept, ready to go again, and any
	// server-specific statement id in it can be rewritten.
	Kept bool
	// Bound: something ties the session to the server that failed: a
	// transaction open there before this statement, state the session
	// left there (temporary tables, locks, user variables it depends
	// on), or a route that named that server.
	Bound bool
	// Stopped: obgate itself broke the statement (a KILL, a shutdown),
	// not its server.
	Stopped bool
	// Resends is how many times the statement went again already; Budget
	// how many times it may (RetryBudget).
	Resends, Budget int
}

// MayResend reports whether a failed try may go to another server:
//
//   - after an ERR that says nothing ran (held back by ResendableERR), any
//     statement, write or read;
//   - after the server's connection or protocol broke, only a read: a
//     write may have run;
//   - never after a timeout (the statement would run out of time elsewhere
//     too, and the server may still be running it), never when the client
//     broke, never when bound to the server, never beyond the budget,
//     never when obgate stopped the statement itself.
func MayResend(t Try) bool {
	if !t.Kept || t.Bound || t.Stopped || t.Resends >= t.Budget {
		return false
	}
	switch t.Failure {
	case failure.HeldERR:
		return true
	case failure.Transport, failure.Protocol:
		return t.ReadOnly
	}
	return false
}

// RetryBudget is how many times one statement may go again after its
// first try: ODP's max(connect_observer_max_retries, 2 × replicas + 1),
// less the first try. replicas is the number of servers its route
// offered: the partition's replicas, or the tenant's servers for a
// statement routed by no partition.
func RetryBudget(maxRetries int64, replicas int) int {
	return max(int(maxRetries), 2*replicas+1) - 1
}

// HoldERR reports whether an ERR with code, the whole answer so far,
// should be held back from the client: the code says nothing ran, and
// either the statement may go elsewhere (mayRetry) or it is the COMMIT of
// a transaction open on that server (commits: the session then closes the
// server session, which rolls the transaction back, and says so); or the
// statement is the ROLLBACK of such a transaction (rollsBack: closing the
// server session does what it asked, whatever the server's error).
func HoldERR(code uint16, mayRetry, commits, rollsBack bool) bool {
	return ResendableERR(code) && (mayRetry || commits) || rollsBack
}

// WeakRead decides whether a statement reads weakly (odp-behaviour.md
// §5.5): only a SELECT that takes no locks can; its hint counts first,
// then the session's ob_read_consistency (sessionWeak), then
// weak_read_user_list (userListed). A statement too long to lex whole
// reads weakly only when its hint says so (the hint is at its start; a
// lock clause could be beyond what was read).
func WeakRead(f *Facts, sessionWeak, userListed bool) bool {
	if f == nil || f.Kind != StmtSelect || f.Pins != 0 {
		return false
	}
	switch f.ReadConsistency {
	case ConsistencyWeak, ConsistencyFrozen:
		return f.ReadOnly || f.Incomplete
	case ConsistencyStrong:
		return false
	}
	return f.ReadOnly && (sessionWeak || userListed)
}

// UserListed reports whether the user of id is in list, a comma-separated
// list of user or user@tenant names (weak_read_user_list).
func UserListed(list string, id Identity) bool {
	for list != "" {
		item, rest, _ := strings.Cut(list, ",")
		list = rest
		u, tenant, hasTenant := strings.Cut(strings.TrimSpace(item), "@")
		if u == id.User && (!hasTenant || strings.EqualFold(tenant, id.Tenant)) {
			return true
		}
	}
	return false
}
