package reactor

import (
	"testing"

	"obgate/mysqlproto"
)

// TestCommandTable checks the command table against the protocol: an
// administrator session stays silent exactly where a server would send
// nothing, a refused command is never served, and only a reset or a
// change of user ends a broken transaction.
func TestCommandTable(t *testing.T) {
	for i := range commands {
		cmd, spec := mysqlproto.Command(i), commands[i]
		// COM_STMT_CLOSE is the one command without an answer that the
		// poller serves: it ends where its requests went out.
		if spec.polled && ((!cmd.HasResponse() && cmd != mysqlproto.ComStmtClose) || spec.refused) {
			t.Errorf("%s: the poller serves it, but it gets no answer to await or is refused", cmd)
		}
		if spec.admin == adminSilent && cmd.HasResponse() {
			t.Errorf("%s: the administrator is silent, but a server answers it", cmd)
		}
		if spec.admin != adminSilent && spec.admin != adminRefused && !cmd.HasResponse() {
			t.Errorf("%s: the administrator answers it, but a server would not", cmd)
		}
		if spec.refused && (spec.serve != nil || spec.admin != adminRefused || hasModeColumn(spec)) {
			t.Errorf("%s: refused, yet served", cmd)
		}
		if cmd == mysqlproto.ComQuery && hasModeColumn(spec) {
			t.Errorf("%s: a mode's COM_QUERY is its side's query, not a column", cmd)
		}
		if spec.inBrokenTxn == brokenEnds && cmd != mysqlproto.ComResetConnection && cmd != mysqlproto.ComChangeUser {
			t.Errorf("%s ends a broken transaction", cmd)
		}
	}
	for _, cmd := range []mysqlproto.Command{mysqlproto.ComStmtPrepare, mysqlproto.ComStmtExecute, mysqlproto.ComStmtClose,
		mysqlproto.ComStmtReset, mysqlproto.ComStmtFetch, mysqlproto.ComStmtSendLongData} {
		if commands[cmd].serve == nil {
			t.Errorf("%s is not served by the prepared-statement code of both modes", cmd)
		}
	}
}

// hasModeColumn reports whether a routing mode does something of its own
// with the command.
func hasModeColumn(spec commandSpec) bool {
	for _, f := range spec.byMode {
		if f != nil {
			return true
		}
	}
	return false
}
