package reactor_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/mysqlproto"
	"obgate/tools/obsim"
)

// obDial logs in through obgate with mysqlproto's client (whose
// ConnectionID is obgate's connection id).
func obDial(p *testproxy.Proxy, user, pass, db string) (*mysqlproto.Client, error) {
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	return mysqlproto.Dial(ctx, p.Addr, mysqlproto.ClientOptions{User: user, Password: pass, Database: db})
}

func mustOBDial(t *testing.T, p *testproxy.Proxy, user, pass, db string) *mysqlproto.Client {
	t.Helper()
	cl, err := obDial(p, user, pass, db)
	if err != nil {
		t.Fatalf("login as %s: %v", user, err)
	}
	t.Cleanup(func() { cl.Conn().Close() })
	return cl
}

// TestOBLoginErrors checks what a client gets when its login cannot
// succeed, and that obgate tries another server after the login errors
// ODP retries.
func TestOBLoginErrors(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		p := startOBProxy(t, c, mode)

		t.Run("wrong password", func(t *testing.T) {
			resetOBSim(t, c)
			_, err := obDial(p, obFullUser, obPass+"x", obDB)
			if code := sqlCode(err); code != mysqlproto.ERAccessDenied {
				t.Errorf("wrong password: %v, want ERR 1045", err)
			}
		})

		t.Run("unknown tenant", func(t *testing.T) {
			resetOBSim(t, c)
			_, err := obDial(p, obUser+"@nosuch#"+obClusterName, obPass, "")
			se, ok := mysqlproto.AsSQLError(err)
			if !ok {
				t.Fatalf("unknown tenant: %v, want an ERR packet", err)
			}
			// The ERR is the server's: a login for the tenant reached a node.
			var reached bool
			for _, e := range c.Log() {
				if e.Command == "login" && e.Client == "proxy" && e.Tenant == "nosuch" && e.Result == "error" && e.Code == se.Code {
					reached = true
				}
			}
			if !reached {
				t.Errorf("unknown tenant: obgate answered %v itself; want the server's ERR forwarded (no server saw a login for tenant nosuch)", err)
			}
		})

		t.Run("unknown cluster", func(t *testing.T) {
			resetOBSim(t, c)
			_, err := obDial(p, obUser+"@"+obTenant+"#nosuch", obPass, "")
			if code := sqlCode(err); code != mysqlproto.OBClusterNotExist {
				t.Errorf("unknown cluster: %v, want ERR 4669", err)
			}
		})

		t.Run("unknown database", func(t *testing.T) {
			resetOBSim(t, c)
			_, err := obDial(p, obFullUser, obPass, "nosuchdb")
			if code := sqlCode(err); code != 1049 {
				t.Errorf("unknown database: %v, want the server's ERR 1049", err)
			}
		})

		t.Run("cluster id", func(t *testing.T) {
			resetOBSim(t, c)
			for _, name := range []string{obFullUser + ":11", obClusterName + ":" + obTenant + ":" + obUser + ":11"} {
				cl, err := obDial(p, name, obPass, "")
				if err != nil {
					t.Errorf("login as %s (the right cluster id): %v", name, err)
				} else {
					cl.Close()
				}
			}
			_, err := obDial(p, obFullUser+":99", obPass, "")
			if code := sqlCode(err); code != mysqlproto.OBClusterNoMatch {
				t.Errorf("login with cluster id 99: %v, want ERR 4666", err)
			}
		})

		t.Run("8001 on login is retried elsewhere", func(t *testing.T) {
			resetOBSim(t, c)
			nodes := c.Nodes()
			good := nodes[2].Name()
			for _, n := range nodes[:2] {
				if _, err := c.InjectError(obsim.ErrorRule{Node: n.Name(), Login: true, Code: mysqlproto.OBServerIsInit}); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 12 {
				cl, err := obDial(p, obFullUser, obPass, obDB)
				if err != nil {
					t.Fatalf("login %d with 8001 on two of three nodes: %v", i, err)
				}
				res, err := cl.Query("SELECT 'ok' AS r")
				cl.Close()
				if err != nil || res.String(0, "r") != "ok" {
					t.Fatalf("login %d: first statement: %v", i, err)
				}
			}
			fired := 0
			for _, r := range c.ErrorRules() {
				fired += r.Fired
			}
			if fired == 0 {
				t.Errorf("no login met the injected 8001: the test proved nothing")
			}
			for _, e := range c.Log() {
				if e.Command == "login" && e.Client == "proxy" && e.Result == "ok" && e.Node != good {
					t.Errorf("a login succeeded on %s, which answers 8001", e.Node)
				}
			}
		})

		t.Run("8001 everywhere", func(t *testing.T) {
			resetOBSim(t, c)
			if _, err := c.InjectError(obsim.ErrorRule{Login: true, Code: mysqlproto.OBServerIsInit}); err != nil {
				t.Fatal(err)
			}
			_, err := obDial(p, obFullUser, obPass, obDB)
			if code := sqlCode(err); code != mysqlproto.OBServerIsInit {
				t.Errorf("login with every node answering 8001: %v, want ERR 8001", err)
			}
		})
	})
}

// TestOBKill runs KILL QUERY and KILL with obgate's connection ids in
// OceanBase mode.
func TestOBKill(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, mode)
		for _, query := range []bool{true, false} {
			name := "KILL"
			if query {
				name = "KILL QUERY"
			}
			t.Run(name, func(t *testing.T) {
				victim := mustOBDial(t, p, obFullUser, obPass, obDB)
				killer := mustOBDial(t, p, obFullUser, obPass, obDB)
				id := victim.ConnectionID()
				if sess, ok := p.Server.Session(id); !ok || sess.Info().ServerID == id {
					t.Fatalf("obgate session %d: cannot tell obgate's id from the server's", id)
				}
				mk := newMarker("kill")
				done := make(chan queryResult, 1)
				go func() {
					res, err := victim.Query(fmt.Sprintf("SELECT SLEEP(30) AS s /* %s */", mk))
					done <- queryResult{res, err}
				}()
				waitSleeping(t, c, mk)
				if _, err := killer.Exec(fmt.Sprintf("%s %d", name, id)); err != nil {
					t.Fatalf("%s %d: %v", name, id, err)
				}
				r := waitResult(t, done)
				if !query {
					if r.err == nil {
						t.Errorf("the killed session's SLEEP returned %q, want an error", r.res.String(0, "s"))
					}
					_, err := victim.Query("SELECT 1")
					if err == nil {
						t.Errorf("the killed connection still works")
					}
					return
				}
				switch {
				case r.err != nil && sqlCode(r.err) != mysqlproto.ERQueryInterrupted:
					t.Errorf("killed SLEEP failed with %v, want ERR 1317 or 1", r.err)
				case r.err == nil && r.res.String(0, "s") != "1":
					t.Errorf("killed SLEEP returned %q, want 1 (interrupted)", r.res.String(0, "s"))
				}
				res, err := victim.Query("SELECT 'alive' AS a")
				if err != nil || res.String(0, "a") != "alive" {
					t.Errorf("after KILL QUERY the session fails: %v", err)
				}
			})
		}
	})
}

// waitSleeping waits until MariaDB runs the SLEEP whose text has marker.
func waitSleeping(t *testing.T, c *obsim.Cluster, marker string) {
	t.Helper()
	testkit.Eventually(t, hangLimit, func() bool {
		var n int
		// The pattern does not match this query's own text.
		err := c.Admin().QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE ?", "SELECT SLEEP(%"+marker+"%").Scan(&n)
		return err == nil && n == 1
	}, "the SLEEP does not run")
}

// TestOBAdmin checks root@proxysys in OceanBase mode: internal commands
// work and SHOW PROXYSESSION lists client sessions with their cluster and
// tenant.
func TestOBAdmin(t *testing.T) {
	testkit.CheckLeaks(t)
	c := startOBSim(t)
	forEachMode(t, func(t *testing.T, mode string) {
		resetOBSim(t, c)
		p := startOBProxy(t, c, mode)
		app := mustOBDial(t, p, obFullUser, obPass, obDB)
		sep := mustOBDial(t, p, obClusterName+":"+obTenant+":"+obUser, obPass, "")
		adm := mustOBDial(t, p, "root@proxysys", "", "")
		res, err := adm.Query("SELECT PROXY_VERSION()")
		if err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != testproxy.Version {
			t.Fatalf("root@proxysys SELECT PROXY_VERSION(): %v", err)
		}
		res, err = adm.Query("SHOW PROXYSESSION")
		if err != nil {
			t.Fatalf("SHOW PROXYSESSION: %v", err)
		}
		found := 0
		for i := range res.Rows {
			id := res.String(i, "Id")
			if id != fmt.Sprint(app.ConnectionID()) && id != fmt.Sprint(sep.ConnectionID()) {
				continue
			}
			found++
			cl, ten, user := res.String(i, "Cluster"), res.String(i, "Tenant"), res.String(i, "User")
			if cl != obClusterName || ten != obTenant || user != obUser {
				t.Errorf("session %s: Cluster %q Tenant %q User %q, want %s %s %s", id, cl, ten, user, obClusterName, obTenant, obUser)
			}
			if n := res.String(i, "svr_session_count"); n == "0" {
				t.Errorf("session %s: svr_session_count %s", id, n)
			}
			if id == fmt.Sprint(app.ConnectionID()) && res.String(i, "db") != obDB {
				t.Errorf("session %s: db %q, want %s", id, res.String(i, "db"), obDB)
			}
		}
		if found != 2 {
			t.Errorf("SHOW PROXYSESSION lists %d of the 2 OceanBase sessions:\n%s", found, resultText(res))
		}
		if got := configValue(t, adm, "server_routing_mode"); !strings.EqualFold(got, "oceanbase") {
			t.Errorf("SHOW PROXYCONFIG: server_routing_mode is %q", got)
		}
	})
}

func resultText(r *mysqlproto.Result) string {
	var sb strings.Builder
	for _, row := range r.Rows {
		for j, v := range row {
			if j > 0 {
				sb.WriteByte('\t')
			}
			sb.Write(v)
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}
