package reactor

import "obgate/reactor/backend"

// commandOptions is how obgate's own commands on the statement's server
// sessions (backend.Conn.Command) read their answers: with the client's
// capabilities, within short_async_task_timeout, and learning the
// session-state reports of their OKs as a client statement's.
func (st *statement) commandOptions() backend.CommandOptions {
	s := st.s
	return backend.CommandOptions{Caps: s.caps, Timeout: s.cfg.ShortAsyncTaskTimeout, Learn: s.side.learnState}
}

// prepareOn prepares a statement on be for obgate itself and returns the
// server's statement id and counts.
func prepareOn(be *backend.Conn, payload []byte, opt backend.CommandOptions) (id uint32, params, columns uint16, err error) {
	sc, err := be.Command(payload, opt)
	if err != nil {
		return 0, 0, 0, err
	}
	id, columns, params = sc.Prepared()
	return id, params, columns, nil
}
