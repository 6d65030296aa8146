package reactor

import (
	"time"

	"obgate/reactor/prepared"
	"obgate/route"
)

// statement is one command being served: what serving it knows (the
// fields below), made anew at the top of serveCommand (next) so that
// nothing of one command leaks into the next, and the methods that run it
// against servers: forwarding and relaying the answer (forward, answer,
// relay), resending it (retry.go), prepared statements (prepared.go), KILL
// (kill.go), and answering it when it failed (reply.go). The Session keeps
// the client side; the routing mode's serverSide finds the servers. Only
// the goroutine running the session's command uses it.
type statement struct {
	// s is the session the statement runs in.
	s *Session
	// pendingDB is the database of a COM_INIT_DB, pendingUser the login
	// name of a COM_CHANGE_USER, until the server's answer.
	pendingDB, pendingUser string
	// facts are those of the COM_QUERY in progress (lexStatement).
	facts route.Facts
	// kept is the request being answered, borrowed from the client buffer
	// until the first byte of its answer reaches the client (relayPacket,
	// releaseKept), or obgate's own copy when keptOwned; nil when it was
	// streamed or already released.
	kept      []byte
	keptOwned bool
	// tunneled says the request is longer than
	// tunnel_request_size_threshold: never sent again (noteTunnel).
	tunneled bool
	// resends counts how often the statement was sent again; resendable
	// says it only reads, so a server break may send it again
	// (route.MayResend).
	resends    int
	resendable bool
	// tried are the servers the statement failed on; the router puts
	// them last.
	tried []string
	// partitionMissed says the server's ob_proxy_partition_hit feedback
	// on the statement was a miss (countStatement reads and clears it).
	partitionMissed bool
	// txnBefore says a transaction was open on a server before the
	// statement, routeBound that the router bound it to its last server;
	// either forbids sending it elsewhere.
	txnBefore, routeBound bool
	// rerouted says it was sent again after ERR 5727 (once only).
	rerouted bool
	// heldERR is an ERR answer held back while the statement goes
	// elsewhere.
	heldERR []byte
	// patchID is the server's statement id written into the request
	// being relayed, when patchOn; retryPS (client id retryPSID) is the
	// prepared statement of an execute that may go to another server
	// session, prepared there first.
	patchID   uint32
	patchOn   bool
	retryPS   *prepared.Stmt
	retryPSID uint32
	// pinCandidate says the statement may create a temporary table or
	// take a user lock (applied once it succeeded).
	pinCandidate bool
	// killFailed says the server refused the KILL obgate sent for the
	// client.
	killFailed bool
	// rr is the relay of the answer in progress (relay.go); then is what
	// the statement needs to go on after it stopped on the poller
	// (poller.go).
	rr   responseRelay
	then answerWait
	// prep is the prepare obgate sent on the poller before this execute
	// (prepare_polled.go).
	prep polledPrepare
	// requestAt is when the request whose answer the next relay streams
	// was about to go to the server (beforeRequest); relayBegin takes it
	// as the relay's sentAt, so that the server's time includes the
	// write and never misses time the server spent while the writer was
	// not yet scheduled again. Zero when no send site set it.
	requestAt time.Time
}

// beforeRequest notes the moment a request is about to be written to the
// server; the relay of its answer starts its server time there.
func (st *statement) beforeRequest() { st.requestAt = time.Now() }

// next is the statement value of the next command: empty, but for the
// buffers of this one, which it reuses.
func (st *statement) next() statement {
	return statement{s: st.s, tried: st.tried[:0], heldERR: st.heldERR[:0]}
}
