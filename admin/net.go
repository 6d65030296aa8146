package admin

import (
	"strconv"
	"time"

	"obgate/mysqlproto"
	"obgate/reactor"
)

// netThreadColumns and netConnColumns are ODP's SHOW PROXYNET THREAD and
// CONNECTION columns (ob_show_net_handler.cpp), all numbers but the
// connection's type, addresses, bind style and comments.
var (
	netThreadColumns = []string{"net_thread_id", "current_connection_count", "current_client_connection_count",
		"global_current_client_connection_count", "global_current_connection_count", "global_current_do_accept_count",
		"total_epoll_wait", "last_epoll_size", "total_cop_lock_failure", "total_lru_timeout_count",
		"total_lru_timeout_time-sec", "total_set_default_inactive", "total_calls_read_from_net", "total_calls_read",
		"total_calls_read_nodata", "total_read_bytes", "total_calls_write_to_net", "total_calls_write",
		"total_calls_write_nodata", "total_write_bytes", "protected_queue_al_size", "protected_queue_local_size",
		"priority_queue_size"}
	netConnColumns = []string{"thread_id", "connect_id", "socket_fd", "type", "src_ip", "src_port", "dst_ip",
		"dst_port", "virtual_ip", "virtual_port", "virtual_vid", "bind_style", "read_enabled", "read_nbytes",
		"read_ndone", "write_enabled", "write_nbyte", "write_ndone", "alive_time(sec)", "activity_timeout_in(sec)",
		"inactivity_timeout_in(sec)", "timeout_close_in(sec)", "last_error_no", "shutdown", "comments"}
	netConnText = map[string]bool{"type": true, "src_ip": true, "dst_ip": true, "virtual_ip": true,
		"bind_style": true, "comments": true}
)

// obgate's network layer is one event system: netpoll's pollers balance
// connections among themselves and do not say which poller holds which
// (client_io_mode netpoll), or each connection has its own goroutine
// (net). SHOW PROXYNET shows it as ODP's net thread 0, holding every
// connection.

// showNetThread answers SHOW PROXYNET THREAD: one row, net thread 0, for
// the whole process. The connection counts are obgate's; total_read_bytes
// is what obgate read from clients and servers and total_write_bytes what
// it wrote to clients (bytes written to servers are not counted). ODP's
// epoll, lock, LRU, call-count and queue columns have no counterpart in
// Go's network poller and are 0.
func (a *Admin) showNetThread() *mysqlproto.ResultSet {
	rs := &mysqlproto.ResultSet{}
	for _, name := range netThreadColumns {
		rs.Columns = append(rs.Columns, mysqlproto.BigintColumn(name))
	}
	st := a.srv.StatCounters()
	all := st.CurrentClients + st.CurrentServers
	row := make([]any, len(netThreadColumns))
	for i := range row {
		row[i] = int64(0)
	}
	row[1], row[2], row[3], row[4] = all, st.CurrentClients, st.CurrentClients, all
	row[15] = int64(st.ClientRequestBytes + st.ServerResponseBytes)
	row[19] = int64(st.ClientResponseBytes)
	rs.Rows = [][]any{row}
	return rs
}

// showNetConnection answers SHOW PROXYNET CONNECTION [thread_id [LIMIT
// ...]]: every client connection (type accepted, connect_id its session
// id), each followed by its server sessions (type connected, connect_id
// the server's connection id), all on net thread 0; another thread id
// has none. LIMIT applies with a thread id only, as in ODP.
// inactivity_timeout_in is the client's wait_timeout (OceanBase mode) and
// timeout_close_in what is left of it while the client is idle;
// alive_time is known for clients only. Columns obgate has no number
// for, 0 or empty: virtual_ip/port/vid, bind_style, read/write enabled,
// nbytes and ndone (obgate does not keep ODP's VIO state),
// activity_timeout_in, last_error_no, shutdown, and alive_time of server
// sessions.
func (a *Admin) showNetConnection(c command) *mysqlproto.ResultSet {
	rs := &mysqlproto.ResultSet{}
	for _, name := range netConnColumns {
		if netConnText[name] {
			rs.Columns = append(rs.Columns, mysqlproto.VarcharColumn(name))
		} else {
			rs.Columns = append(rs.Columns, mysqlproto.BigintColumn(name))
		}
	}
	if c.hasID && c.id != 0 {
		return rs
	}
	conns := a.srv.NetConnections()
	if c.hasID && c.limit >= 0 {
		off := min(c.offset, int64(len(conns)))
		conns = conns[off:]
		conns = conns[:min(c.limit, int64(len(conns)))]
	}
	now := time.Now()
	for _, nc := range conns {
		rs.Rows = append(rs.Rows, netConnRow(nc, now))
	}
	return rs
}

func netConnRow(nc reactor.NetConnInfo, now time.Time) []any {
	typ, src, dst := "accepted", nc.Remote, nc.Local
	alive := int64(0)
	if nc.Server {
		typ, src, dst = "connected", nc.Local, nc.Remote
	} else if !nc.Since.IsZero() {
		alive = int64(now.Sub(nc.Since) / time.Second)
	}
	inactivity, closeIn := int64(nc.IdleTimeout/time.Second), int64(0)
	if nc.IdleTimeout > 0 && nc.IdleFor > 0 {
		closeIn = max(int64((nc.IdleTimeout-nc.IdleFor)/time.Second), 0)
	}
	return []any{int64(0), int64(nc.ID), int64(nc.FD), typ, hostPart(src), portNum(src), hostPart(dst), portNum(dst),
		"", int64(0), int64(0), "", int64(0), int64(0),
		int64(0), int64(0), int64(0), int64(0), alive, int64(0),
		inactivity, closeIn, int64(0), int64(0), "not closed"}
}

func portNum(hp string) int64 {
	n, _ := strconv.ParseInt(portPart(hp), 10, 64)
	return n
}
