package reactor_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"obgate/internal/testkit"
)

// TestOBAdminViews runs the cluster views through the mariadb client in
// OceanBase mode, against an obsim cluster of three zones in IDCs idc1
// and idc2 (region r1) and idc3 (region r2), with proxy_idc_name idc1: SHOW
// PROXYCLUSTER [IDC], SHOW PROXYRESOURCE and SHOW PROXYINFO IDC, each with
// ODP's columns and what the cluster really is; and KILL PROXYSESSION cs
// ss on an OceanBase server session.
func TestOBAdminViews(t *testing.T) {
	maria(t)
	testkit.CheckLeaks(t)
	c := startPartOBSim(t, false)
	p := startOBProxy(t, c, ioModes[0], "proxy_idc_name", "idc1", "obproxy_sys_password", sha1Hex(viewsPass))
	_, conn := obConn(t, p, func(cfg *mysql.Config) { cfg.DBName = partDB })
	execCtx(t, conn, "SELECT 1") // logged in: the cluster is loaded
	var cs uint32
	for _, s := range p.Server.Sessions() {
		if !s.Admin {
			cs = s.ID
		}
	}
	if cs == 0 {
		t.Fatal("the client's session is not listed")
	}

	t.Run("SHOW PROXYCLUSTER", func(t *testing.T) {
		stmt := "SHOW PROXYCLUSTER"
		r := adminView(t, p, stmt)
		r.checkHeader(t, stmt, []string{"cluster_name", "cluster_id", "rs_url", "root_addr", "role", "replica_type"})
		var addrs []string
		for _, row := range r.rows {
			if r.col(t, row, "cluster_name") != c.Name() || r.col(t, row, "cluster_id") != "-1" {
				t.Errorf("%s: row %q, want cluster %s, id -1 (obgate reads no cluster id)", stmt, row, c.Name())
			}
			addrs = append(addrs, r.col(t, row, "root_addr"))
		}
		if strings.Join(addrs, ";") != c.RSList() {
			t.Errorf("%s: root_addr %q, want the rootservice_list %q", stmt, addrs, c.RSList())
		}
		if r := adminView(t, p, "SHOW PROXYCLUSTER LIKE 'no_such%'"); len(r.rows) != 0 {
			t.Errorf("SHOW PROXYCLUSTER LIKE 'no_such%%': rows %q", r.rows)
		}

		stmt = "SHOW PROXYCLUSTER IDC"
		r = adminView(t, p, stmt)
		r.checkHeader(t, stmt, []string{"cluster_name", "cluster_id", "idc_url", "idc", "region"})
		var got []string
		for _, row := range r.rows {
			got = append(got, r.col(t, row, "idc")+"/"+r.col(t, row, "region"))
		}
		if want := []string{"idc1/r1", "idc2/r1", "idc3/r2"}; !slices.Equal(got, want) {
			t.Errorf("%s: idc/region %q, want %q", stmt, got, want)
		}
	})

	t.Run("SHOW PROXYRESOURCE", func(t *testing.T) {
		stmt := fmt.Sprintf("SHOW PROXYRESOURCE LIKE '%s'", c.Name())
		r := adminView(t, p, stmt)
		r.checkHeader(t, stmt, []string{"cluster_name", "cluster_id", "state", "version", "ref_count",
			"last_access_time_ns", "last_access_time", "deleting_completed_thread_num", "fetch_rs_list_task_count",
			"last_fetch_rs_list_time_ns", "last_fetch_rs_list_time", "fetch_idc_list_task_count",
			"last_fetch_idc_list_time_ns", "last_fetch_idc_list_time"})
		if len(r.rows) != 1 {
			t.Fatalf("%s: rows %q, want one", stmt, r.rows)
		}
		row := r.rows[0]
		if r.col(t, row, "state") != "CR_AVAIL" || atoi(t, r.col(t, row, "ref_count")) != 1 ||
			atoi(t, r.col(t, row, "version")) < 1 || atoi(t, r.col(t, row, "last_fetch_rs_list_time_ns")) <= 0 ||
			len(r.col(t, row, "last_fetch_rs_list_time")) != len("2006-01-02 15:04:05") {
			t.Errorf("%s: row %q, want CR_AVAIL, one session, a generation and a fetch time", stmt, row)
		}
	})

	t.Run("SHOW PROXYINFO IDC", func(t *testing.T) {
		stmt := "SHOW PROXYINFO IDC"
		r := adminView(t, p, stmt)
		r.checkHeader(t, stmt, []string{"global_idc_name", "cluster_name", "match_type", "regions_name",
			"same_idc", "same_region", "other_region"})
		want := []string{"idc1", c.Name(), "MATCHED_BY_IDC", `["r1"]`, `["zone1"]`, `["zone2"]`, `["zone3"]`}
		if len(r.rows) != 1 || !slices.Equal(r.rows[0], want) {
			t.Errorf("%s: rows %q, want %q", stmt, r.rows, want)
		}
	})

	t.Run("KILL PROXYSESSION cs ss", func(t *testing.T) {
		attr := fmt.Sprintf("SHOW PROXYSESSION ATTRIBUTE %d LIKE 'server_session[0].server_sessid'", cs)
		r := adminView(t, p, attr)
		if len(r.rows) != 1 {
			t.Fatalf("%s: rows %q", attr, r.rows)
		}
		ss := r.rows[0][1]
		adminView(t, p, fmt.Sprintf("KILL PROXYSESSION %d %s", cs, ss))
		// The server session's connection is closed at once (SHOW PROXYNET
		// CONNECTION lists the open ones); SHOW PROXYSESSION ATTRIBUTE drops
		// it once the session next looks at it.
		if r := adminView(t, p, "SHOW PROXYNET CONNECTION"); r.find(t, "connect_id", ss) != nil {
			t.Errorf("server session %s still open after KILL PROXYSESSION %d %s: %q", ss, cs, ss, r.rows)
		}
		execCtx(t, conn, "SELECT 1") // the client goes on
		if _, ok := p.Server.Session(cs); !ok {
			t.Error("KILL PROXYSESSION cs ss ended the client session")
		}
	})
}
