package reactor_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/mysqlproto"
)

// viewsPass is root@proxysys's password in the views tests.
const viewsPass = "views-Secret1"

// viewResult is what the mariadb client printed for a statement in batch
// mode: the column names and the rows, tab-separated.
type viewResult struct {
	header []string
	rows   [][]string
}

// adminView runs stmt as root@proxysys with the mariadb client and returns
// its header and rows (empty results print nothing in batch mode).
func adminView(t *testing.T, p *testproxy.Proxy, stmt string) viewResult {
	t.Helper()
	out := lines(cli(t, p, "", "-B", "-u", "root@proxysys", "-p"+viewsPass, "-e", stmt))
	var r viewResult
	if len(out) == 0 {
		return r
	}
	r.header = strings.Split(out[0], "\t")
	for _, l := range out[1:] {
		r.rows = append(r.rows, strings.Split(l, "\t"))
	}
	return r
}

// adminViewErr runs stmt as root@proxysys and returns the client's error
// output; the statement must fail.
func adminViewErr(t *testing.T, p *testproxy.Proxy, stmt string) string {
	t.Helper()
	_, errOut, err := cliResult(p, "", "-B", "-u", "root@proxysys", "-p"+viewsPass, "-e", stmt)
	if err == nil {
		t.Fatalf("%s succeeded, want an error", stmt)
	}
	return errOut
}

// col returns row's value in the named column.
func (r viewResult) col(t *testing.T, row []string, name string) string {
	t.Helper()
	i := slices.Index(r.header, name)
	if i < 0 || i >= len(row) {
		t.Fatalf("no column %q in %q / row %q", name, r.header, row)
	}
	return row[i]
}

// find returns the first row whose column name has value.
func (r viewResult) find(t *testing.T, name, value string) []string {
	t.Helper()
	for _, row := range r.rows {
		if r.col(t, row, name) == value {
			return row
		}
	}
	return nil
}

func (r viewResult) checkHeader(t *testing.T, stmt string, want []string) {
	t.Helper()
	if !slices.Equal(r.header, want) {
		t.Errorf("%s: columns %q,\nwant ODP's %q", stmt, r.header, want)
	}
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}

// TestE2EAdminViews runs ODP's diagnostic views through the mariadb
// client as root@proxysys (with a password) while a normal client holds a
// session, and checks each view's columns (ODP's names, in ODP's order)
// and a value that must follow from what the test did.
func TestE2EAdminViews(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)
		p := startProxy(t, mode, "obproxy_sys_password", sha1Hex(viewsPass))
		held := dialClient(t, p, "root", "")
		for range 3 {
			if _, err := held.Query("SELECT 1"); err != nil {
				t.Fatal(err)
			}
		}
		heldID := strconv.FormatUint(uint64(held.ConnectionID()), 10)
		_, heldPort, _ := strings.Cut(held.Conn().LocalAddr().String(), ":")

		t.Run("SHOW PROXYSTAT", func(t *testing.T) {
			stmt := "SHOW PROXYSTAT"
			r := adminView(t, p, stmt)
			r.checkHeader(t, stmt, []string{"stat_name", "value", "persist_type"})
			for name, least := range map[string]int64{"total_query_count": 3, "current_client_connections": 2,
				"total_client_connections": 2, "current_server_connections": 1, "client_request_total_size": 1} {
				row := r.find(t, "stat_name", name)
				if row == nil {
					t.Errorf("%s: no row %s in %q", stmt, name, r.rows)
					continue
				}
				if v := atoi(t, r.col(t, row, "value")); v < least {
					t.Errorf("%s: %s = %d, want at least %d", stmt, name, v, least)
				}
			}
			if row := r.find(t, "stat_name", "total_transaction_count"); row == nil || r.col(t, row, "persist_type") != "PERSISTENT" {
				t.Errorf("%s: total_transaction_count row %q, want persist_type PERSISTENT", stmt, row)
			}
			stmt = "SHOW PROXYSTAT REFRESH LIKE 'current_client%'"
			r = adminView(t, p, stmt)
			if len(r.rows) != 2 || r.rows[0][0] != "current_client_connections" || r.rows[1][0] != "current_client_transactions" {
				t.Errorf("%s: rows %q, want current_client_connections and current_client_transactions", stmt, r.rows)
			}
		})

		t.Run("SHOW PROXYINFO", func(t *testing.T) {
			stmt := "SHOW PROXYINFO BINARY"
			r := adminView(t, p, stmt)
			r.checkHeader(t, stmt, []string{"name", "info"})
			if len(r.rows) != 1 || r.rows[0][0] != "binary info" || !strings.HasPrefix(r.rows[0][1], "obgate-"+testproxy.Version+`\nversion:go`) ||
				!strings.Contains(r.rows[0][1], `\nREVISION:`) || !strings.Contains(r.rows[0][1], `\nBUILD_TIME:`) {
				t.Errorf("%s: rows %q", stmt, r.rows)
			}
			stmt = "SHOW PROXYINFO UPGRADE"
			r = adminView(t, p, stmt)
			r.checkHeader(t, stmt, []string{"name", "info"})
			if len(r.rows) != 1 || r.rows[0][0] != "hot upgrade info" || !strings.Contains(r.rows[0][1], `state:"none"`) {
				t.Errorf("%s: rows %q", stmt, r.rows)
			}
		})

		t.Run("SHOW PROXYMEMORY", func(t *testing.T) {
			stmt := "SHOW PROXYMEMORY"
			r := adminView(t, p, stmt)
			r.checkHeader(t, stmt, []string{"mod_name", "mod_type", "hold", "used", "count", "avg_used",
				"hold bytes, alloc times and backtraces(addr2line -Cfe obproxy 0xXXXX)"})
			heap := r.find(t, "mod_name", "GO_HEAP")
			if heap == nil || atoi(t, r.col(t, heap, "hold")) < atoi(t, r.col(t, heap, "used")) || atoi(t, r.col(t, heap, "used")) <= 0 {
				t.Errorf("%s: GO_HEAP row %q, want 0 < used <= hold", stmt, heap)
			}
			stmt = "SHOW PROXYMEMORY OBJPOOL LIKE 'size_class_%'"
			r = adminView(t, p, stmt)
			r.checkHeader(t, stmt, []string{"free_list_name", "allocated", "in_use", "count", "type_size",
				"chunk_count", "chunk_byte_size", "hold bytes, alloc times and backtraces(addr2line -Cfe obproxy 0xXXXX)"})
			if len(r.rows) == 0 {
				t.Fatalf("%s: no rows", stmt)
			}
			for _, row := range r.rows {
				size, count, inUse := atoi(t, r.col(t, row, "type_size")), atoi(t, r.col(t, row, "count")), atoi(t, r.col(t, row, "in_use"))
				if size <= 0 || inUse != size*count || r.col(t, row, "free_list_name") != "size_class_"+strconv.FormatInt(size, 10) {
					t.Errorf("%s: row %q, want in_use = count × type_size", stmt, row)
				}
			}
		})

		t.Run("SHOW PROXYNET", func(t *testing.T) {
			stmt := "SHOW PROXYNET THREAD"
			r := adminView(t, p, stmt)
			r.checkHeader(t, stmt, []string{"net_thread_id", "current_connection_count", "current_client_connection_count",
				"global_current_client_connection_count", "global_current_connection_count", "global_current_do_accept_count",
				"total_epoll_wait", "last_epoll_size", "total_cop_lock_failure", "total_lru_timeout_count",
				"total_lru_timeout_time-sec", "total_set_default_inactive", "total_calls_read_from_net", "total_calls_read",
				"total_calls_read_nodata", "total_read_bytes", "total_calls_write_to_net", "total_calls_write",
				"total_calls_write_nodata", "total_write_bytes", "protected_queue_al_size", "protected_queue_local_size",
				"priority_queue_size"})
			if len(r.rows) != 1 || r.rows[0][0] != "0" || atoi(t, r.col(t, r.rows[0], "current_client_connection_count")) < 2 ||
				atoi(t, r.col(t, r.rows[0], "current_connection_count")) < 3 || atoi(t, r.col(t, r.rows[0], "total_read_bytes")) <= 0 {
				t.Errorf("%s: rows %q, want thread 0 with the held client, its server session and the admin", stmt, r.rows)
			}

			stmt = "SHOW PROXYNET CONNECTION"
			r = adminView(t, p, stmt)
			r.checkHeader(t, stmt, []string{"thread_id", "connect_id", "socket_fd", "type", "src_ip", "src_port", "dst_ip",
				"dst_port", "virtual_ip", "virtual_port", "virtual_vid", "bind_style", "read_enabled", "read_nbytes",
				"read_ndone", "write_enabled", "write_nbyte", "write_ndone", "alive_time(sec)", "activity_timeout_in(sec)",
				"inactivity_timeout_in(sec)", "timeout_close_in(sec)", "last_error_no", "shutdown", "comments"})
			i := slices.IndexFunc(r.rows, func(row []string) bool {
				return r.col(t, row, "type") == "accepted" && r.col(t, row, "connect_id") == heldID
			})
			if i < 0 {
				t.Fatalf("%s: no accepted connection %s in %q", stmt, heldID, r.rows)
			}
			row := r.rows[i]
			if r.col(t, row, "src_port") != heldPort || r.col(t, row, "src_ip") != "127.0.0.1" ||
				r.col(t, row, "dst_port") != strings.Split(p.Addr, ":")[1] || atoi(t, r.col(t, row, "socket_fd")) < 0 {
				t.Errorf("%s: held client's row %q, want src port %s, dst %s and a descriptor", stmt, row, heldPort, p.Addr)
			}
			if i+1 >= len(r.rows) || r.col(t, r.rows[i+1], "type") != "connected" ||
				r.col(t, r.rows[i+1], "dst_ip")+":"+r.col(t, r.rows[i+1], "dst_port") != maria(t).Addr() {
				t.Errorf("%s: the held client's row is not followed by its server session to %s: %q", stmt, maria(t).Addr(), r.rows)
			}
			heldFD := r.col(t, row, "socket_fd")

			stmt = "SHOW PROXYNET CONNECTION 0 LIMIT 1"
			if r := adminView(t, p, stmt); len(r.rows) != 1 {
				t.Errorf("%s: %d rows, want 1", stmt, len(r.rows))
			}
			stmt = "SHOW PROXYNET CONNECTION 0 LIMIT 1,2"
			if r := adminView(t, p, stmt); len(r.rows) != 2 {
				t.Errorf("%s: %d rows, want 2", stmt, len(r.rows))
			}
			if r := adminView(t, p, "SHOW PROXYNET CONNECTION 7"); len(r.rows) != 0 {
				t.Errorf("SHOW PROXYNET CONNECTION 7: rows %q, want none (obgate's one net thread is 0)", r.rows)
			}

			// SHOW PROXYSESSION's tid is the client socket's descriptor.
			stmt = "SHOW PROXYSESSION"
			r = adminView(t, p, stmt)
			r.checkHeader(t, stmt, []string{"proxy_sessid", "Id", "Cluster", "Tenant", "User", "Host", "db", "trans_count",
				"svr_session_count", "state", "tid", "pid", "using_ssl"})
			if s := r.find(t, "Id", heldID); s == nil || r.col(t, s, "tid") != heldFD {
				t.Errorf("%s: held session's row %q, want tid %s (its socket_fd)", stmt, s, heldFD)
			}
		})

		t.Run("SHOW WARNLOG", func(t *testing.T) {
			stmt := "SHOW WARNLOG"
			before := adminView(t, p, stmt)
			// A client that breaks the protocol ends its session with a warning.
			c := loginRaw(t, p, "root", "")
			if err := c.WritePacket(3, append([]byte{byte(mysqlproto.ComQuery)}, "SELECT 1"...)); err != nil {
				t.Fatal(err)
			}
			expectERRThenClose(t, c, mysqlproto.ERNetPacketsOutOfOrder)
			var r viewResult
			testkit.Eventually(t, hangLimit, func() bool {
				r = adminView(t, p, stmt)
				return len(r.rows) > len(before.rows)
			}, "SHOW WARNLOG lists no new record after a protocol error")
			r.checkHeader(t, stmt, []string{"log_id", "thread_id", "time", "log"})
			last := r.rows[len(r.rows)-1]
			if log := r.col(t, last, "log"); !strings.HasPrefix(log, "WARN session ended") || !strings.Contains(log, "reason=client_protocol") || r.col(t, last, "thread_id") != "0" || len(r.col(t, last, "time")) != len("2006-01-02 15:04:05.000000") {
				t.Errorf("%s: last row %q", stmt, last)
			}
			id := r.col(t, last, "log_id")
			if got := adminView(t, p, "SHOW WARNLOG "+id); len(got.rows) != 1 || got.rows[0][0] != id {
				t.Errorf("SHOW WARNLOG %s: rows %q, want only record %s", id, got.rows, id)
			}
			if got := adminView(t, p, "SHOW WARNLOG 0, 0, '2000-01-01 00:00:00'"); len(got.rows) != len(r.rows) {
				t.Errorf("SHOW WARNLOG 0, 0, '2000-01-01 00:00:00': %d rows, want %d", len(got.rows), len(r.rows))
			}
			if got := adminView(t, p, "SHOW WARNLOG 0, 0, '2999-01-01 00:00:00'"); len(got.rows) != 0 {
				t.Errorf("SHOW WARNLOG after the year 2999: rows %q", got.rows)
			}
			// ODP's answer to a time it cannot read is ERR 5010, which the
			// mariadb client (10.11 here) reports as a malformed packet:
			// checked with obgate's client.
			adm := dialClient(t, p, "root@proxysys", viewsPass)
			_, err := adm.Query("SHOW WARNLOG 0, 0, 'yesterday'")
			if se, ok := mysqlproto.AsSQLError(err); !ok || se.Code != 5010 || se.State != "21000" {
				t.Errorf("SHOW WARNLOG with a bad time: %v, want ERR 5010 (21000) Unknown operator", err)
			}
		})

		t.Run("KILL PROXYSESSION cs ss", func(t *testing.T) {
			c := dialClient(t, p, "root", "")
			if _, err := c.Query("SELECT 1"); err != nil {
				t.Fatal(err)
			}
			cs := c.ConnectionID()
			stmt := fmt.Sprintf("SHOW PROXYSESSION ATTRIBUTE %d LIKE 'server_sessid'", cs)
			r := adminView(t, p, stmt)
			if len(r.rows) != 1 {
				t.Fatalf("%s: rows %q", stmt, r.rows)
			}
			ss := r.rows[0][1]
			direct := directDB(t)
			onServer := func(id string) int64 {
				return queryInt(t, direct, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = "+id)
			}
			if onServer(ss) != 1 {
				t.Fatalf("server session %s is not on MariaDB", ss)
			}
			if r := adminView(t, p, fmt.Sprintf("KILL PROXYSESSION %d %s", cs, ss)); len(r.rows) != 0 {
				t.Errorf("KILL PROXYSESSION printed %q, want an OK", r.rows)
			}
			testkit.Eventually(t, hangLimit, func() bool { return onServer(ss) == 0 },
				"MariaDB still has server session %s after KILL PROXYSESSION %d %s", ss, cs, ss)
			// The client session lives on with a new server session.
			res, err := c.Query("SELECT 1")
			if err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != "1" {
				t.Fatalf("the client's next statement: %v, %v", res, err)
			}
			if r := adminView(t, p, stmt); len(r.rows) != 1 || r.rows[0][1] == ss {
				t.Errorf("after the kill, server_sessid rows %q, want a new server session", r.rows)
			}
			if _, ok := p.Server.Session(cs); !ok {
				t.Error("KILL PROXYSESSION cs ss ended the client session")
			}
			// Inside a transaction the kill breaks it: the next statement fails.
			if _, err := c.Query("BEGIN"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Query("SELECT 1"); err != nil {
				t.Fatal(err)
			}
			inTxn := p.Server.Sessions()
			var ssTxn uint32
			for _, s := range inTxn {
				if s.ID == cs {
					ssTxn = s.ServerID
				}
			}
			adminView(t, p, fmt.Sprintf("KILL PROXYSESSION %d %d", cs, ssTxn))
			if _, err := c.Query("SELECT 1"); err == nil {
				t.Error("a statement of a transaction whose server session was killed succeeded")
			}
			for _, bad := range []string{fmt.Sprintf("KILL PROXYSESSION %d 4000000000", cs), "KILL PROXYSESSION 4000000000 1",
				fmt.Sprintf("KILL PROXYSESSION %d %s", cs, ss)} {
				if e := adminViewErr(t, p, bad); !strings.Contains(e, "1094") {
					t.Errorf("%s: %q, want ERROR 1094", bad, e)
				}
			}
		})

		t.Run("internal_cmd_mem_limited", func(t *testing.T) {
			adm := dialClient(t, p, "root@proxysys", viewsPass)
			if _, err := adm.Exec("ALTER PROXYCONFIG SET internal_cmd_mem_limited = 1"); err != nil {
				t.Fatal(err)
			}
			_, err := adm.Query("SHOW PROXYCONFIG")
			if se, ok := mysqlproto.AsSQLError(err); !ok || se.Code != 4024 || se.State != "HY000" {
				t.Errorf("SHOW PROXYCONFIG over the limit: %v, want ERR 4024 (HY000) Buffer not enough", err)
			}
			if e := adminViewErr(t, p, "SHOW PROXYSTAT"); !strings.Contains(e, "4024") {
				t.Errorf("SHOW PROXYSTAT through the client over the limit: %q, want ERROR 4024", e)
			}
			if _, err := adm.Exec("ALTER PROXYCONFIG SET internal_cmd_mem_limited = 0"); err != nil {
				t.Fatal(err)
			}
			if res, err := adm.Query("SHOW PROXYCONFIG"); err != nil || len(res.Rows) < 10 {
				t.Errorf("SHOW PROXYCONFIG without a limit: %v", err)
			}
			if _, err := adm.Exec("ALTER PROXYCONFIG SET internal_cmd_mem_limited = '16M'"); err != nil {
				t.Fatal(err)
			}
		})
	})
}
