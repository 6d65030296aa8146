package reactor

import (
	"errors"
	"fmt"

	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/reactor/handover"
	"obgate/reactor/sessvars"
	"obgate/route"
)

// obHandover is OceanBase mode's part of the hand-over (sideHandover):
// the records of the session's state and the adoption of them.
type obHandover struct{ *obSession }

// OceanBase mode's part of a hot upgrade's hand-over (handover.go): only
// the client connection moves, with the login and the variables obgate
// replays on every server session it opens; the new process opens its
// own server sessions when its statements need them.

// handoverReady reports whether the session holds nothing obgate cannot
// replay elsewhere: no pinned state, no SET TRANSACTION, no held BEGIN,
// no server-side transaction, no prepared statement whose long data or
// cursor lives on a server session.
func (o obHandover) handoverReady() bool {
	if o.cluster == nil || o.pinned || o.trxSpecified || o.heldBegin != nil || o.serverInTrans() {
		return false
	}
	for _, p := range o.s.stmts.ByID {
		if p.Home != nil {
			return false
		}
	}
	return true
}

// handoverFreeze has nothing to freeze: no server connection moves.
func (o obHandover) handoverFreeze() (fds []int, thaw func(), ok bool) {
	return nil, func() {}, true
}

// handoverRecord adds the login and variables.
func (o obHandover) handoverRecord(h *handover.State) {
	h.Mode = handover.ModeOB
	h.OB = o.handoverState()
}

// adoptRecord gives an adopted session the login and variables of h.
func (o obHandover) adoptRecord(h *handover.State, server *backend.PolledConn) error {
	if server != nil {
		server.Close()
		return errors.New("an OceanBase-mode session comes without server sessions")
	}
	if h.OB == nil {
		return errors.New("an OceanBase-mode session without its login")
	}
	return o.adoptOB(h.OB)
}

// handoverState is the OceanBase-mode part of the session's state; the
// session's owner calls it.
func (o obHandover) handoverState() *handover.OB {
	s := o.s
	v := &o.vars
	multiStmt, multiStmtSet := v.MultiStatements()
	h := &handover.OB{
		Cluster: s.identity.Cluster, Tenant: o.tenant, IdentityUser: s.identity.User, ClusterID: s.identity.ClusterID,
		Login: o.clientLogin.Append(nil), Scramble: o.scramble, DB: v.DB(),
		MultiStmtSet: multiStmtSet, MultiStmt: multiStmt,
	}
	for _, e := range v.Sys() {
		h.Sys = append(h.Sys, handover.Var{Name: e.Name, Value: e.Value})
	}
	for _, e := range v.User() {
		h.User = append(h.User, handover.Var{Name: e.Name, Value: e.Value})
	}
	for i := range sessvars.NumHot {
		if value, set := v.Hot(i); set {
			h.Hot = append(h.Hot, handover.Hot{Index: uint8(i), Value: value})
		}
	}
	return h
}

// adoptOB gives an adopted OceanBase-mode session its login and
// variables; its server sessions are opened when its statements need
// them.
func (o obHandover) adoptOB(h *handover.OB) error {
	s := o.s
	cluster, ok := s.srv.clusters.Get(h.Cluster)
	if !ok {
		return fmt.Errorf("cluster %q is not served here", h.Cluster)
	}
	login, err := mysqlproto.ParseHandshakeResponse(h.Login)
	if err != nil {
		return fmt.Errorf("the client's login: %w", err)
	}
	s.identity = route.Identity{User: h.IdentityUser, Tenant: h.Tenant, Cluster: h.Cluster, ClusterID: h.ClusterID}
	o.cluster, o.tenant, o.clientLogin, o.scramble = cluster, h.Tenant, login, h.Scramble
	o.proxySessID = proxySessionID(s.client.rawConn.LocalAddr(), s.id)
	o.feedback = o.onFeedback
	s.series.setTenant(h.Cluster, h.Tenant)
	if h.DB != "" {
		o.vars.SetDB(h.DB)
	}
	for _, e := range h.Sys {
		o.vars.SetSys([]byte(e.Name), []byte(e.Value))
	}
	for _, e := range h.User {
		o.vars.SetUser(e.Name, e.Value)
	}
	for _, hv := range h.Hot {
		if int(hv.Index) >= len(sessvars.HotNames) {
			return fmt.Errorf("hot variable %d is not known here", hv.Index)
		}
		o.vars.SetSys([]byte(sessvars.HotNames[hv.Index]), []byte(hv.Value))
	}
	if h.MultiStmtSet {
		o.vars.SetMultiStatements(h.MultiStmt)
	}
	o.updateWaitTimeout()
	o.publishOB()
	return nil
}
