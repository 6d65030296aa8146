package admin

import (
	"strconv"
	"strings"
	"time"

	"obgate/internal/warnlog"
	"obgate/mysqlproto"
)

// obErrOperatorUnknown is ODP's answer to a SHOW WARNLOG time it cannot
// read (OB_ERR_OPERATOR_UNKNOWN, -5010: no MySQL errno, SQLSTATE 21000).
var obErrOperatorUnknown = mysqlproto.OBErr{Errno: 5010, State: "21000", Name: "OB_ERR_OPERATOR_UNKNOWN", Message: "Unknown operator"}

// SetWarnLog gives admin the ring of recent warnings SHOW WARNLOG lists;
// cmd/obgate sets it before serving (without one the list is empty).
func (a *Admin) SetWarnLog(r *warnlog.Ring) { a.warnings = r }

// warnlogTime is the text layout of SHOW WARNLOG's time column.
const warnlogTime = "2006-01-02 15:04:05.000000"

// showWarnlog answers SHOW WARNLOG [log_id[, thread_id[, 'time']]] with
// ODP's columns log_id, thread_id, time, log: the kept WARN and ERROR
// records, oldest first, with log_id at least the first number, of the
// thread given second, logged at or after the time given third (local
// 'YYYY-MM-DD hh:mm:ss[.ffffff]', or microseconds since the epoch), as
// ODP's grammar has it (ob_proxy_parser.y, ob_show_warning_handler.cpp).
// obgate logs from goroutines, not ODP's event threads: every record's
// thread_id is 0. The ring holds the last warnlog.DefaultSize records.
func (a *Admin) showWarnlog(c command) (*mysqlproto.ResultSet, *mysqlproto.SQLError) {
	since := time.Time{}
	if c.since != "" {
		t, ok := parseWarnlogTime(c.since)
		if !ok {
			return nil, obErrOperatorUnknown.New()
		}
		since = t
	}
	rs := &mysqlproto.ResultSet{Columns: []mysqlproto.Column{
		mysqlproto.BigintColumn("log_id"), mysqlproto.BigintColumn("thread_id"),
		timestampColumn("time"), mysqlproto.VarcharColumn("log"),
	}}
	if a.warnings == nil || c.threadID > 0 {
		return rs, nil
	}
	for _, r := range a.warnings.Records() {
		if (c.logID >= 0 && r.ID < uint64(c.logID)) || r.Time.Before(since) {
			continue
		}
		rs.Rows = append(rs.Rows, []any{r.ID, int64(0), r.Time.Local().Format(warnlogTime), r.Text})
	}
	return rs, nil
}

// parseWarnlogTime reads SHOW WARNLOG's time filter.
func parseWarnlogTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, ":") {
		us, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, false
		}
		return time.UnixMicro(us), true
	}
	for _, layout := range []string{"2006-01-02 15:04:05.999999", "2006-01-02 15:04:05", "2006-01-02 15:04"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// timestampColumn describes a TIMESTAMP column with microseconds.
func timestampColumn(name string) mysqlproto.Column {
	return mysqlproto.Column{Name: name, OrgName: name, Charset: mysqlproto.CharsetBinary, Length: 26,
		Type: mysqlproto.TypeTimestamp, Flags: mysqlproto.FlagBinary, Decimals: 6}
}
