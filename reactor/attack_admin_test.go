package reactor_test

// Adversarial tests of the administrator login (root@proxysys and
// inspector@proxysys): who may reach it, how often a password may be
// tried, and whether a login read off the network can be replayed.

import (
	"bytes"
	"fmt"
	"testing"

	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/mysqlproto"
	"obgate/reactor"
)

// TestAttackAdminLogin: with no password set, the administrator logs in
// from loopback only, not from a private address (what every client looks
// like behind SNAT, a load balancer or Kubernetes); with a password, from
// private addresses, and from public ones only with
// skip_proxy_sys_private_check; failed logins from one address block it.
func TestAttackAdminLogin(t *testing.T) {
	const public, private, guesser = "198.18.38.1", "10.238.38.1", "10.238.38.2"
	for _, ip := range []string{public, private, guesser} {
		hostAddr(t, ip)
	}
	p := startProxy(t, "netpoll")
	onPublic, onPrivate, onGuesser := serveOn(t, p, public), serveOn(t, p, private), serveOn(t, p, guesser)

	t.Run("no password: loopback only", func(t *testing.T) {
		for _, user := range []string{"root@proxysys", "inspector@proxysys"} {
			if code := loginCode(t, dialFrom(t, "127.0.0.1", p.Addr), user, ""); code != 0 {
				t.Errorf("%s from 127.0.0.1 with no password set: ERR %d, want OK", user, code)
			}
			if code := loginCode(t, dialFrom(t, private, onPrivate), user, ""); code != mysqlproto.ERAccessDenied {
				t.Errorf("%s from private %s with no password set: code %d, want ERR 1045", user, private, code)
			}
			if code := loginCode(t, dialFrom(t, public, onPublic), user, ""); code != mysqlproto.ERAccessDenied {
				t.Errorf("%s from public %s with no password set: code %d, want ERR 1045", user, public, code)
			}
		}
	})

	const pw = "s3cret-admin"
	adminSet(t, p, "", "obproxy_sys_password", pw)
	t.Run("password: private addresses", func(t *testing.T) {
		if code := loginCode(t, dialFrom(t, private, onPrivate), "root@proxysys", pw); code != 0 {
			t.Errorf("from private %s with the password: ERR %d, want OK", private, code)
		}
		if code := loginCode(t, dialFrom(t, private, onPrivate), "root@proxysys", ""); code != mysqlproto.ERAccessDenied {
			t.Errorf("from private %s without the password: code %d, want ERR 1045", private, code)
		}
		if code := loginCode(t, dialFrom(t, public, onPublic), "root@proxysys", pw); code != mysqlproto.ERAccessDenied {
			t.Errorf("from public %s with the password: code %d, want ERR 1045 (skip_proxy_sys_private_check is off)", public, code)
		}
		adminSet(t, p, pw, "skip_proxy_sys_private_check", "true")
		if code := loginCode(t, dialFrom(t, public, onPublic), "root@proxysys", pw); code != 0 {
			t.Errorf("from public %s with the password and skip_proxy_sys_private_check: ERR %d, want OK", public, code)
		}
	})

	t.Run("failures block the address", func(t *testing.T) {
		for i := range reactor.AdminFailLimit {
			if code := loginCode(t, dialFrom(t, guesser, onGuesser), "root@proxysys", "guess"); code != mysqlproto.ERAccessDenied {
				t.Fatalf("guess %d: code %d, want ERR 1045", i+1, code)
			}
		}
		if code := loginCode(t, dialFrom(t, guesser, onGuesser), "root@proxysys", pw); code != mysqlproto.ERHostIsBlocked {
			t.Errorf("the right password after %d failures from %s: code %d, want ERR 1129 (blocked)", reactor.AdminFailLimit, guesser, code)
		}
		if code := loginCode(t, dialFrom(t, private, onPrivate), "root@proxysys", pw); code != 0 {
			t.Errorf("another address is not blocked: ERR %d, want OK", code)
		}
		if got, _ := testkit.MetricSum(p.MetricsText(), "obgate_client_refused_total", "reason", "admin_blocked"); got != 1 {
			t.Errorf("obgate_client_refused_total{reason=\"admin_blocked\"} = %v, want 1", got)
		}
	})
}

// TestAttackAdminReplay: greetings carry a scramble of their own
// (enable_proxy_scramble, on by default), and with ODP's fixed scramble
// configured an administrator is still asked again with a fresh one, so
// a token read off the network does not log anybody in again.
func TestAttackAdminReplay(t *testing.T) {
	cfg, err := testproxy.OBConfig("127.0.0.1:1", "nowhere", "netpoll")
	if err != nil {
		t.Fatal(err)
	}
	p := testproxy.Start(t, cfg)
	a, b := dialFrom(t, "127.0.0.1", p.Addr), dialFrom(t, "127.0.0.1", p.Addr)
	if bytes.Equal(a.Greeting.AuthData, b.Greeting.AuthData) || bytes.Equal(a.Greeting.AuthData, reactor.FixedScramble) {
		t.Errorf("greeting scrambles %q and %q: want one of its own per session", a.Greeting.AuthData, b.Greeting.AuthData)
	}

	cfg, err = testproxy.OBConfig("127.0.0.1:1", "nowhere", "netpoll", "enable_proxy_scramble", "false")
	if err != nil {
		t.Fatal(err)
	}
	p = testproxy.Start(t, cfg)
	const pw = "s3cret-admin"
	adminSet(t, p, "", "obproxy_sys_password", pw)
	// What a listener saw of an earlier login: the token for the fixed
	// scramble.
	stolen := mysqlproto.NativeToken(reactor.FixedScramble, []byte(pw))
	c := dialFrom(t, "127.0.0.1", p.Addr)
	if !bytes.Equal(c.Greeting.AuthData, reactor.FixedScramble) {
		t.Fatalf("greeting scramble %q with enable_proxy_scramble off; want ODP's fixed one", c.Greeting.AuthData)
	}
	login := &mysqlproto.HandshakeResponse{Capability: mysqlproto.DefaultClientCapability & c.Greeting.Capability,
		MaxPacketSize: 1 << 24, Charset: byte(mysqlproto.CharsetUTF8MB4), User: "root@proxysys",
		AuthResponse: stolen, AuthPlugin: mysqlproto.AuthNativePassword}
	if err := c.WritePacket(1, login.Append(nil)); err != nil {
		t.Fatal(err)
	}
	sw, seq, err := c.ReadPacket(hangLimit)
	if err != nil {
		t.Fatal(err)
	}
	req, ok := mysqlproto.ParseAuthSwitchRequest(sw)
	if !ok || bytes.Equal(req.Data, reactor.FixedScramble) || len(req.Data) != mysqlproto.ScrambleLen {
		t.Fatalf("answer to an administrator login with the fixed scramble: %x, want an auth switch with a fresh scramble", sw)
	}
	if err := c.WritePacket(seq+1, stolen); err != nil { // the replay
		t.Fatal(err)
	}
	if e, err := c.ReadERR(hangLimit); err != nil || e.Code != mysqlproto.ERAccessDenied {
		t.Errorf("replayed token: %v %v, want ERR 1045", e, err)
	}
	// The real administrator, who answers the new scramble, gets in.
	if code := loginCode(t, dialFrom(t, "127.0.0.1", p.Addr), "root@proxysys", pw); code != 0 {
		t.Errorf("the administrator with the password: ERR %d, want OK", code)
	}
}

// TestAttackRootSysOtherCluster: root@sys of one cluster administers its
// own cluster's sessions only, and changes obgate's configuration (which
// applies to every cluster's server sessions: init_sql) only when obgate
// serves that one cluster.
func TestAttackRootSysOtherCluster(t *testing.T) {
	c := startOBSim(t)
	fake := startFakeOB(t)
	p := startOBProxy(t, c, "netpoll", "cluster_rootservice_list", fakeOBCluster+"="+fake.addr())
	ctx := withDeadline(t)
	dial := func(user string) *mysqlproto.Client {
		t.Helper()
		cl, err := mysqlproto.Dial(ctx, p.Addr, mysqlproto.ClientOptions{User: user})
		if err != nil {
			t.Fatalf("login as %s: %v", user, err)
		}
		t.Cleanup(func() { cl.Close() })
		return cl
	}
	sysAdmin := dial("root@sys#" + obClusterName)
	ownVictim := dial("root@" + obTenant + "#" + obClusterName)
	otherVictim := dial("app@" + fakeOBTenant + "#" + fakeOBCluster)

	if _, err := sysAdmin.Exec("ALTER PROXYCONFIG SET init_sql = 'DO 1'"); sqlCode(err) != mysqlproto.ERSpecificAccessDenied {
		t.Errorf("root@sys of %s sets init_sql for every cluster: %v, want ERR 1227", obClusterName, err)
	}
	if v := p.Store.Load().InitSQL; v != "" {
		t.Errorf("init_sql is %q after the refusal", v)
	}
	if _, err := sysAdmin.Exec(fmt.Sprintf("KILL PROXYSESSION %d", otherVictim.ConnectionID())); sqlCode(err) != mysqlproto.ERNoSuchThread {
		t.Errorf("root@sys of %s kills a session of cluster %s: %v, want ERR 1094", obClusterName, fakeOBCluster, err)
	}
	if _, ok := p.Server.Session(otherVictim.ConnectionID()); !ok {
		t.Error("the other cluster's session was closed")
	}
	if _, err := sysAdmin.Exec(fmt.Sprintf("KILL PROXYSESSION %d", ownVictim.ConnectionID())); err != nil {
		t.Errorf("root@sys kills a session of its own cluster: %v", err)
	}
	adm := dial("root@proxysys")
	if _, err := adm.Exec(fmt.Sprintf("KILL PROXYSESSION %d", otherVictim.ConnectionID())); err != nil {
		t.Errorf("root@proxysys kills any session: %v", err)
	}
}
