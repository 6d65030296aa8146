package reactor

import (
	"context"
	"errors"

	"obgate/route"
)

// RouteExplanation is what EXPLAIN ROUTE reports about a statement: the
// router's account of its plan, and the server session obgate would use
// for it now (opened if needed, nothing sent).
type RouteExplanation struct {
	Facts route.Facts
	Plan  route.Explain
	// Bound says the session must stay on its last server (open
	// transaction, temporary tables, locks, dependent functions).
	Bound bool
	// Used is the server that would run the statement; "" with Err when
	// none could be used.
	Used string
	Err  error
}

// ErrNotOceanBase reports EXPLAIN ROUTE in a session that is not an
// OceanBase-mode session.
var ErrNotOceanBase = errors.New("EXPLAIN ROUTE needs an OceanBase-mode session")

// ExplainRoute plans stmt as if it were the session's next statement. It
// runs on the session's own goroutine (from the interceptor) and does not
// send the statement anywhere.
func (s *Session) ExplainRoute(stmt []byte) RouteExplanation {
	if s.admin {
		return RouteExplanation{Err: ErrNotOceanBase}
	}
	return s.side.explain(stmt)
}

// explain is ExplainRoute in OceanBase mode.
func (ob obIdentity) explain(stmt []byte) RouteExplanation {
	var out RouteExplanation
	own := append([]byte(nil), stmt...)
	out.Facts = route.Lex(own)
	need := needAny
	if out.Facts.Pins.NeedsLast() {
		need = needLast
	}
	saved := ob.route
	defer func() { ob.route = saved }()
	ob.route.resetRoute()
	ob.route.routeBy(own, &out.Facts, nil)
	ob.route.explain = &out.Plan
	be, err := ob.pickServer(context.Background(), need)
	out.Bound = ob.s.st.routeBound
	if err != nil {
		out.Err = err
		return out
	}
	out.Used = be.Addr
	return out
}
