package admin

import (
	"obgate/mysqlproto"
	"obgate/reactor"
)

// obErrBufNotEnough is ODP's answer to an internal command whose result
// outgrows internal_cmd_mem_limited (OB_BUF_NOT_ENOUGH, -4024: no MySQL
// errno, SQLSTATE HY000).
var obErrBufNotEnough = mysqlproto.OBErr{Errno: 4024, State: "HY000", Name: "OB_BUF_NOT_ENOUGH", Message: "Buffer not enough"}

// send answers with rs, or with ERR 4024 when rs outgrows
// internal_cmd_mem_limited (0: no limit). The rule is ODP's
// (ObInternalCmdHandler::encode_row_packet): a row may not be added once
// the packets already encoded (column definitions and earlier rows) reach
// the limit, and then the whole command fails; so the last row may take
// the result past the limit, and a result without rows always goes out.
func (a *Admin) send(reply *reactor.Reply, rs *mysqlproto.ResultSet) error {
	limit := a.srv.Config().Load().InternalCmdMemLimited
	if limit > 0 && len(rs.Rows) > 0 && encodedBefore(rs, len(rs.Rows)-1) >= limit {
		return reply.Error(obErrBufNotEnough.New())
	}
	return reply.ResultSet(rs)
}

// encodedBefore is the size of rs's column count, column definitions and
// first n rows as packets.
func encodedBefore(rs *mysqlproto.ResultSet, n int) int64 {
	head := &mysqlproto.ResultSet{Columns: rs.Columns, Rows: rs.Rows[:n]}
	b, _ := head.AppendPackets(nil, 0, 0, 0)
	return int64(len(b))
}
