package reactor_test

// Helpers of the adversarial tests (attack_*_test.go): what an attacker
// sends, from where.

import (
	"context"
	"errors"
	"io"
	"net"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/mysqlproto"
)

// hostAddr puts ip on the loopback interface for the test, so that a
// connection from ip to ip stays on this machine while obgate sees a
// peer that is not a loopback address (a private one such as 10.x is
// what every client looks like behind SNAT or a load balancer). It needs
// root and iproute2, which make deps installs.
func hostAddr(t *testing.T, ip string) {
	t.Helper()
	out, err := exec.Command("ip", "addr", "add", ip+"/32", "dev", "lo").CombinedOutput()
	if err != nil && !strings.Contains(string(out), "File exists") {
		t.Fatalf("ip addr add %s dev lo: %v: %s", ip, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "addr", "del", ip+"/32", "dev", "lo").Run() })
}

// serveOn makes p also accept clients on ip (an address of this machine),
// and returns that listener's address.
func serveOn(t *testing.T, p *testproxy.Proxy, ip string) string {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.Server.Serve(ln) }()
	return ln.Addr().String()
}

// dialFrom connects to addr from the local address ip and reads the
// greeting, as testkit.DialRaw does.
func dialFrom(t *testing.T, ip, addr string) *testkit.RawConn {
	t.Helper()
	d := net.Dialer{Timeout: hangLimit, LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s from %s: %v", addr, ip, err)
	}
	c, err := testkit.RawOver(conn, hangLimit)
	if err != nil {
		t.Fatalf("greeting of %s seen from %s: %v", addr, ip, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// loginCode logs c in and returns the error code of the refusal, 0 for
// a login accepted.
func loginCode(t *testing.T, c *testkit.RawConn, user, password string) uint16 {
	t.Helper()
	err := c.Login(user, password, "", hangLimit)
	if err == nil {
		return 0
	}
	var se *mysqlproto.SQLError
	if !errors.As(err, &se) {
		t.Fatalf("login as %s: %v, want an OK or an ERR", user, err)
	}
	return se.Code
}

// adminSet runs ALTER PROXYCONFIG SET name = value as root@proxysys from
// loopback, with password (empty for none).
func adminSet(t *testing.T, p *testproxy.Proxy, password, name, value string) {
	t.Helper()
	c, err := testkit.DialRaw(p.Addr, hangLimit)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login("root@proxysys", password, "", hangLimit); err != nil {
		t.Fatalf("root@proxysys from loopback: %v", err)
	}
	if err := c.WritePacket(0, append([]byte{byte(mysqlproto.ComQuery)}, "ALTER PROXYCONFIG SET "+name+" = '"+value+"'"...)); err != nil {
		t.Fatal(err)
	}
	pkts, err := c.ReadResponse(hangLimit)
	if err != nil || len(pkts) == 0 || pkts[0][0] != mysqlproto.OKHeader {
		t.Fatalf("ALTER PROXYCONFIG SET %s: %x %v", name, pkts, err)
	}
}

// withDeadline is a context that ends with the test's hang guard.
func withDeadline(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	t.Cleanup(cancel)
	return ctx
}

var _ = time.Second

// tcpRelay forwards every connection made to its address to target: a
// second address of the same server, so that obgate in mysql routing mode
// takes them for two servers.
func tcpRelay(t *testing.T, target string) string {
	t.Helper()
	addr, _ := countingRelay(t, target)
	return addr
}

// countingRelay is tcpRelay that also counts the connections made to it.
func countingRelay(t *testing.T, target string) (string, *atomic.Int64) {
	t.Helper()
	var l fakeListener
	accepted := new(atomic.Int64)
	listenFake(t, &l, func(c net.Conn) {
		accepted.Add(1)
		s, err := net.Dial("tcp", target)
		if err != nil {
			return
		}
		defer s.Close()
		done := make(chan struct{}, 2)
		go func() { _, _ = io.Copy(s, c); done <- struct{}{} }()
		go func() { _, _ = io.Copy(c, s); done <- struct{}{} }()
		<-done
	})
	return l.addr(), accepted
}
