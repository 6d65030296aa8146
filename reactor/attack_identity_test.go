package reactor_test

// Adversarial tests of who a session is and who may end it: KILL across
// users, servers and logins in progress, COM_CHANGE_USER obgate cannot
// read, user names that look like cluster:tenant:user, and a client that
// names its own address.

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/mysqlproto"
)

// TestAttackKillAcrossServers: in mysql routing mode a KILL of a session
// on another server is decided by that server, with the KILL sent there as
// the killer; an equal login name is not enough (the same name on two
// servers may be two accounts). With no way to log the killer in there,
// the KILL is refused.
func TestAttackKillAcrossServers(t *testing.T) {
	srvA := maria(t).Addr()
	srvB := tcpRelay(t, srvA) // the same MariaDB at a second address
	stage1 := sha1.Sum([]byte(otherPass))
	stage2 := sha1.Sum(stage1[:])
	hashes := otherUser + ":*" + strings.ToUpper(hex.EncodeToString(stage2[:]))
	for _, withHash := range []bool{false, true} {
		t.Run(fmt.Sprintf("mysql_user_hashes=%v", withHash), func(t *testing.T) {
			kv := []string{}
			if withHash {
				kv = append(kv, "mysql_user_hashes", hashes)
			}
			cfg, err := testproxy.Config(srvA+";"+srvB, "netpoll", kv...)
			if err != nil {
				t.Fatal(err)
			}
			p := testproxy.Start(t, cfg)
			victim := dialClient(t, p, otherUser, otherPass)
			vs, _ := p.Server.Session(victim.ConnectionID())
			var killer *mysqlproto.Client
			for range 10 {
				k := dialClient(t, p, otherUser, otherPass)
				if ks, _ := p.Server.Session(k.ConnectionID()); ks.Info().ServerAddr != vs.Info().ServerAddr {
					killer = k
					break
				}
			}
			if killer == nil {
				t.Fatal("no login landed on the other server")
			}
			_, err = killer.Exec(fmt.Sprintf("KILL %d", victim.ConnectionID()))
			if !withHash {
				if code := sqlCode(err); code != mysqlproto.ERKillDenied {
					t.Errorf("KILL of a session on another server with an equal login name: %v, want ERR 1095", err)
				}
				if _, err := victim.Query("SELECT 1"); err != nil {
					t.Errorf("the victim's session broke: %v", err)
				}
				return
			}
			if err != nil {
				t.Errorf("KILL of the user's own session on another server, asked there: %v", err)
			}
			testkit.Eventually(t, hangLimit, func() bool { _, ok := p.Server.Session(victim.ConnectionID()); return !ok },
				"the killed session to go")
		})
	}
}

// TestAttackKillLoggingIn: in OceanBase mode a session still logging in
// (its server login not done, so obgate cannot ask a server) cannot be
// killed by another session: its login has proved nothing yet.
func TestAttackKillLoggingIn(t *testing.T) {
	c := startOBSim(t)
	p := startOBProxy(t, c, "netpoll", "detect_server_timeout", "10s", "short_async_task_timeout", "10s")
	_, killer := obConn(t, p)
	for _, n := range c.Nodes() {
		n.Hang()
	}
	t.Cleanup(func() {
		for _, n := range c.Nodes() {
			n.Unhang()
		}
	})
	v, err := testkit.DialRaw(p.Addr, hangLimit)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if err := v.WritePacket(1, v.LoginPacket(obFullUser, obPass, "")); err != nil {
		t.Fatal(err)
	}
	id := v.Greeting.ConnectionID
	testkit.Eventually(t, hangLimit, func() bool {
		s, ok := p.Server.Session(id)
		return ok && s.Info().Identity.User == obUser
	}, "the victim's login to reach its server login")
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	_, err = killer.ExecContext(ctx, fmt.Sprintf("KILL %d", id))
	if code := sqlErrorCode(err); code != mysqlproto.ERKillDenied {
		t.Errorf("KILL of a session still logging in: %v, want ERR 1095", err)
	}
	if _, ok := p.Server.Session(id); !ok {
		t.Error("the session logging in was closed")
	}
}

// TestAttackChangeUserUnread: in mysql routing mode obgate reads the user
// of every COM_CHANGE_USER it relays, also one larger than it reads to
// classify a command (request_buffer_length), and refuses one it cannot
// parse rather than leave the old user on record.
func TestAttackChangeUserUnread(t *testing.T) {
	p := startProxy(t, "netpoll")
	c, err := testkit.DialRaw(p.Addr, hangLimit)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login("root", "", "", hangLimit); err != nil {
		t.Fatal(err)
	}
	pkt := changeUserPacket(otherUser, otherPass, testDB, c.Greeting.AuthData)
	// Replace the empty attribute list with 6 KB of attributes.
	attrs := mysqlproto.AppendLenEncString(nil, "_padding")
	attrs = mysqlproto.AppendLenEncString(attrs, strings.Repeat("p", 6000))
	pkt = append(mysqlproto.AppendLenEncInt(pkt[:len(pkt)-1], uint64(len(attrs))), attrs...)
	changeUserExchange(t, c, pkt, otherPass)
	s, _ := p.Server.Session(c.Greeting.ConnectionID)
	if info := s.Info(); info.User != otherUser {
		t.Errorf("after a 6 KB COM_CHANGE_USER to %s obgate has the session as %q", otherUser, info.User)
	}

	// A COM_CHANGE_USER whose user name never ends.
	if err := c.WritePacket(0, append([]byte{byte(mysqlproto.ComChangeUser)}, "root"...)); err != nil {
		t.Fatal(err)
	}
	if e, err := c.ReadERR(hangLimit); err != nil || e.Code != mysqlproto.ERHandshakeError {
		t.Errorf("unreadable COM_CHANGE_USER: %v %v, want ERR 1043", e, err)
	}
	if info := s.Info(); info.User != otherUser {
		t.Errorf("after the refused COM_CHANGE_USER obgate has the session as %q, want %q still", info.User, otherUser)
	}
}

// TestAttackMySQLUserNames: in mysql routing mode a login name is a MySQL
// user name, sent as it is: svc-app-admin is not cluster svc, tenant app,
// user admin.
func TestAttackMySQLUserNames(t *testing.T) {
	direct := directDB(t)
	for _, name := range []string{"svc-app-admin", "a.b.c", "app@tenant#cluster"} {
		mustExec(t, direct, fmt.Sprintf("CREATE USER IF NOT EXISTS '%s'@'%%' IDENTIFIED BY 'pw-1'", name))
	}
	p := startProxy(t, "netpoll")
	for _, name := range []string{"svc-app-admin", "a.b.c", "app@tenant#cluster"} {
		ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
		c, err := mysqlproto.Dial(ctx, p.Addr, mysqlproto.ClientOptions{User: name, Password: "pw-1"})
		cancel()
		if err != nil {
			t.Errorf("login as %s: %v", name, err)
			continue
		}
		defer c.Close()
		res, err := c.Query("SELECT CURRENT_USER() AS u")
		if err != nil || res.String(0, "u") != name+"@%" {
			t.Errorf("login as %s: CURRENT_USER() = %q, %v; want %s@%%", name, res.String(0, "u"), err, name)
		}
	}
}

// TestAttackClientIPAttribute: the __client_ip connection attribute is
// what the servers' IP allow lists check; obgate passes a client's own
// only from client_ip_trusted_list, and otherwise the client's address.
func TestAttackClientIPAttribute(t *testing.T) {
	c := startOBSim(t)
	for _, trusted := range []string{"", "127.0.0.0/8"} {
		t.Run("trusted="+trusted, func(t *testing.T) {
			resetOBSim(t, c)
			p := startOBProxy(t, c, "netpoll", "client_ip_trusted_list", trusted)
			ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
			defer cancel()
			cl, err := mysqlproto.Dial(ctx, p.Addr, mysqlproto.ClientOptions{User: obFullUser, Password: obPass,
				Attrs: []mysqlproto.ConnAttr{{Key: mysqlproto.AttrClientIP, Value: "203.0.113.9"}}})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			want := "127.0.0.1"
			if trusted != "" {
				want = "203.0.113.9"
			}
			var got []string
			for _, e := range c.Log() {
				if e.Command == "login" && e.Client == "proxy" && e.User == obUser {
					got = append(got, e.ClientIP)
				}
			}
			if len(got) == 0 || got[len(got)-1] != want {
				t.Errorf("the server was told the client is at %q, want %q", got, want)
			}
		})
	}
}

var _ = time.Second
