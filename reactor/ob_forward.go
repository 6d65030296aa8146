package reactor

import (
	"slices"
	"strconv"
	"time"

	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/reactor/connio"
	"obgate/reactor/sessvars"
)

// terminator handles an OK, EOF or ERR that ended a result in OceanBase
// mode; the packet ends at buf[dec]. It records the server status, learns
// the session-state report of an OK (database, system and user variables,
// server feedback), and rewrites that report into what a MySQL client
// reads: one variable per entry, without OceanBase's feedback variables and
// user variables, or nothing at all for a client that does not track
// session state. The OK is the one the scanner decoded; clientOK rewrites
// it from that. It returns the buffer (a bigger one when the packet grew)
// and the shifted positions.
func (o *obSession) terminator(buf []byte, dec, end int) ([]byte, int, int) {
	s := o.s
	sc := &s.scanner
	if sc.IsErr() {
		return buf, dec, end
	}
	if sc.ExtraOK() {
		return o.dropExtraOK(buf, dec, end)
	}
	st := sc.Status()
	s.status = st
	s.servers.Current().Status = st
	p := sc.Packet()
	if p[0] != mysqlproto.OKHeader || !st.Has(mysqlproto.StatusSessionStateChange) {
		return buf, dec, end
	}
	ok, good := sc.OK() // decoded once, by the scanner
	if !good {
		return buf, dec, end
	}
	o.vars.Learn(ok.SessionState, ok.Status, o.feedback)
	out := o.clientOK(ok)
	delta := len(out) - len(p)
	start := dec - len(p) - mysqlproto.HeaderLen
	if end+delta > len(buf) {
		nb := connio.GetChunk(end + delta)
		copy(nb, buf[:end])
		connio.PutChunk(buf)
		buf = nb
	}
	copy(buf[dec+delta:end+delta], buf[dec:end])
	copy(buf[start+mysqlproto.HeaderLen:], out)
	mysqlproto.PutHeader(buf[start:], len(out), buf[start+3])
	return buf, dec + delta, end + delta
}

// dropExtraOK learns the session state of the OK a server sent after a
// result set's final EOF (EXTRA_OK_PACKET_FOR_STATISTICS: the partition-hit
// feedback of a SELECT travels there) and removes the packet, which ends
// at buf[dec], from what the client gets: the client's response ends with
// the EOF, as it expects.
func (o *obSession) dropExtraOK(buf []byte, dec, end int) ([]byte, int, int) {
	s := o.s
	sc := &s.scanner
	if ok, good := sc.OK(); good && ok.Status.Has(mysqlproto.StatusSessionStateChange) {
		o.vars.Learn(ok.SessionState, ok.Status, o.feedback)
	}
	start := dec - len(sc.Packet()) - mysqlproto.HeaderLen
	n := copy(buf[start:], buf[dec:end])
	return buf, start, start + n
}

// clientOK builds, in the session's scratch buffer, the OK payload a
// client gets for a server's OK.
func (o *obSession) clientOK(ok mysqlproto.OK) []byte {
	s := o.s
	var state []byte
	track := s.caps.Has(mysqlproto.ClientSessionTrack)
	if track {
		state = o.stateScratch[:0]
		it := mysqlproto.SessionStates(ok.SessionState)
		for {
			typ, data, more := it.Next()
			if !more {
				break
			}
			if typ != mysqlproto.SessionTrackSystemVariables {
				state = append(state, typ)
				state = mysqlproto.AppendLenEncBytes(state, data)
				continue
			}
			for pos := 0; pos < len(data); {
				name, value, next, good := mysqlproto.ParseSystemVariable(data, pos)
				if !good || string(name) == sessvars.UserVarSeparator {
					break
				}
				pos = next
				if sessvars.IsFeedback(name) {
					continue
				}
				state = appendVarEntry(state, name, value)
			}
		}
		o.stateScratch = state
	}
	out := ok
	out.SessionState = state
	out.Status &^= mysqlproto.StatusSessionStateChange
	if len(state) > 0 {
		out.Status |= mysqlproto.StatusSessionStateChange
	}
	caps := s.caps & mysqlproto.ClientSessionTrack
	o.okScratch = mysqlproto.AppendOK(o.okScratch[:0], out, caps)
	return o.okScratch
}

// appendVarEntry appends one SessionTrackSystemVariables entry.
func appendVarEntry(dst, name, value []byte) []byte {
	n := mysqlproto.LenEncIntSize(uint64(len(name))) + len(name) + mysqlproto.LenEncIntSize(uint64(len(value))) + len(value)
	dst = append(dst, mysqlproto.SessionTrackSystemVariables)
	dst = mysqlproto.AppendLenEncInt(dst, uint64(n))
	dst = mysqlproto.AppendLenEncBytes(dst, name)
	return mysqlproto.AppendLenEncBytes(dst, value)
}

// onFeedback reads the server feedback variables that steer routing.
func (o *obSession) onFeedback(name, value []byte) {
	switch string(name) {
	case "ob_proxy_partition_hit":
		o.onPartitionHit(value)
	case "ob_proxy_set_trx_executed":
		// SET TRANSACTION ran: the next transaction's characteristics live
		// on this server session, so stay on it until it is used.
		o.trxSpecified = string(value) == "1"
	}
}

// afterResponse updates OceanBase-mode facts after a response: the server
// session that ran the statement had the client's whole state before it
// and has learned every change since.
func (o *obSession) afterResponse(cmd mysqlproto.Command, failed bool) {
	s := o.s
	be := s.servers.Current()
	be.Touch()
	switch {
	case be.OB20 != nil:
		be.OB20.ShrinkBuffers()
	case be.Comp != nil:
		be.Comp.ShrinkBuffers()
	}
	o.vars.MarkSynced(&be.Sync)
	if !failed {
		switch cmd {
		case mysqlproto.ComInitDB:
			o.vars.SetDB(s.st.pendingDB)
			o.vars.MarkSynced(&be.Sync)
		case mysqlproto.ComResetConnection:
			o.resetOB(be)
		case mysqlproto.ComQuery:
			if s.st.pinCandidate {
				o.pinned = true
			}
		}
	}
	s.st.pinCandidate = false
	o.pinned = o.pinned || o.trxSpecified
	if o.vars.DBVersion() != o.publishedDB {
		o.publishedDB = o.vars.DBVersion()
		s.setDB(o.vars.DB())
	}
	o.publishOB()
}

// resetOB forgets the session state after COM_RESET_CONNECTION ran on
// keep (or a COM_CHANGE_USER, which resets the same way; keep is nil when
// no server session is left with the new state): other server sessions
// still carry the old state and are closed. The database and the
// multi-statement option outlive a reset, as on the server, so server
// sessions opened later get them.
func (o *obSession) resetOB(keep *backend.Conn) {
	s := o.s
	for _, be := range slices.Clone(s.servers.All()) {
		if be != keep {
			o.drop(be)
		}
	}
	o.vars = o.vars.AfterReset()
	if keep != nil {
		keep.Sync = sessvars.Synced{}
		o.vars.MarkSynced(&keep.Sync)
		keep.Stmts = nil
	}
	s.stmts.Reset()
	o.pinned, o.trxSpecified = false, false
	o.heldBegin = nil
}

// defaultQueryTimeout is OceanBase's default ob_query_timeout.
const defaultQueryTimeout = 10 * time.Second

// answerTimeout is how long obgate waits for a server's answer in
// OceanBase mode, as ODP does: observer_query_timeout_delta plus the
// session's ob_query_timeout (the cluster's global value when the session
// did not set it, else OceanBase's default).
func (o *obSession) answerTimeout() time.Duration {
	s := o.s
	us := int64(-1)
	if v, set := o.vars.Hot(sessvars.HotObQueryTimeout); set {
		us, _ = strconv.ParseInt(v, 10, 64)
	} else if t := o.cluster.Table(); t != nil {
		if v, ok := t.SysVars["ob_query_timeout"]; ok {
			us, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	d := defaultQueryTimeout
	if us > 0 {
		d = time.Duration(us) * time.Microsecond
	}
	return d + s.cfg.ObserverQueryTimeoutDelta
}

// serverSessionFailed handles a server session that broke (or sent a frame
// whose checksum is wrong) before any byte of its answer reached the
// client, outside a transaction: the server session is closed and counted
// as failed, the statement fails with an ERR, and the client session goes
// on with its other server sessions. Its outcome on the server is unknown,
// which is what the error says.
func (o *obSession) serverSessionFailed(err error) error {
	s := o.s
	be := s.servers.Current()
	s.srv.metrics.serverFailure(err)
	s.srv.log.Warn("server session failed", "session", s.id, "server", be.Addr, "err", err)
	o.drop(be)
	return serverLostReply(be.Addr, err, s.st.resendable, o.answerTimeout())
}

// resendElsewhere sends a one-piece request to another server session
// after the current one refused the write. An execute of a prepared
// statement goes with the statement prepared there and its id rewritten
// (repatch), when the statement may go to another server session at all
// (retryPS); other requests with a server's statement id stay.
func (o *obSession) resendElsewhere(p []byte, orig error) error {
	s := o.s
	if s.st.patchOn && s.st.retryPS == nil {
		return orig
	}
	o.drop(s.servers.Current())
	be, err := o.serverFor(needAny)
	if err != nil {
		return err
	}
	if s.st.patchOn && !s.st.repatch(be, p) {
		return orig
	}
	return be.WriteRequest(p, true, true)
}
