package reactor

import (
	"errors"

	"obgate/mysqlproto"
	"obgate/reactor/backend"
)

// runInitSQL sends init_sql, when it is set, on a server session that has
// just logged in, before any client statement and, for a client's first
// server session, before the client sees its login's OK: so every server
// session of every client starts from it (ODP sends it once, on the first
// server session; obgate sends it on each, because a statement may run on
// any of them). The statement must answer OK, as a SET does; rows or an
// ERR fail the login or the statement that needed the server session with
// OB_SEND_INIT_SQL_ERROR (8006), naming the statement, as ODP answers.
//
// It runs on the goroutine that owns the session's server side (the login
// or the statement that opens the server session).
func (st *statement) runInitSQL(be *backend.Conn) error {
	q := st.s.cfg.InitSQL
	if q == "" {
		return nil
	}
	payload := make([]byte, 0, 1+len(q))
	payload = append(append(payload, byte(mysqlproto.ComQuery)), q...)
	err := be.RoundTrip(payload, st.commandOptions())
	if err == nil {
		return nil
	}
	var se *mysqlproto.SQLError
	if !errors.As(err, &se) && !errors.Is(err, backend.ErrServerState) && !errors.Is(err, backend.ErrUnexpectedAnswer) {
		return err // the connection broke: the caller handles that as any loss
	}
	return mysqlproto.NewSQLError(mysqlproto.OBSendInitSQLError, "send init sql to observer failed, sql : '%s'", q)
}
