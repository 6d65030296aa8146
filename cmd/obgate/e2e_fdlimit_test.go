package main_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"obgate/internal/testkit"
	"obgate/mysqlproto"
)

// fdLimit is the RLIMIT_NOFILE obgate runs under in TestFDExhaustion:
// room for a handful of clients after what obgate itself holds.
const fdLimit = 40

// fdGuard bounds waits that only end early when something is broken.
const fdGuard = time.Minute

// refusal says at which step a client was refused: "greeting" (accept had
// no descriptor: the reserved one answered in place of the greeting) or
// "login" (the server connection could not be opened).
type refusal string

// tryClient opens a logged-in connection through obgate, or reports the
// ERR that refused it and at which step; any other failure fails the test.
func tryClient(t *testing.T, addr string) (*testkit.RawConn, refusal) {
	t.Helper()
	c, err := testkit.DialRaw(addr, fdGuard)
	if err != nil {
		checkTooMany(t, "greeting", err)
		return nil, "greeting"
	}
	if err := c.Login("root", "", "", fdGuard); err != nil {
		c.Close()
		checkTooMany(t, "login", err)
		return nil, "login"
	}
	return c, ""
}

func checkTooMany(t *testing.T, step string, err error) {
	t.Helper()
	se, ok := mysqlproto.AsSQLError(err)
	if !ok || se.Code != mysqlproto.ERConCountError || se.Message != "Too many connections" {
		t.Fatalf("refused at %s with %v, want ERR 1040 Too many connections", step, err)
	}
}

// selectOne runs SELECT 1 on c and fails the test unless a result comes.
func selectOne(t *testing.T, c *testkit.RawConn) {
	t.Helper()
	if err := c.WritePacket(0, append([]byte{byte(mysqlproto.ComQuery)}, "SELECT 1"...)); err != nil {
		t.Fatal(err)
	}
	pkts, err := c.ReadResponse(fdGuard)
	if err != nil {
		t.Fatal(err)
	}
	if p := pkts[0]; len(p) == 0 || p[0] == mysqlproto.ERRHeader || p[0] == mysqlproto.OKHeader {
		t.Fatalf("SELECT 1 answered %x, want a result set", p)
	}
}

// openFDs counts obgate's open descriptors, for the log.
func openFDs(pid int) int {
	ents, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	return len(ents)
}

// scrape returns the metric family's sum from obgate's /metrics.
func scrape(t *testing.T, p *obgateProc, family string, labels ...string) float64 {
	t.Helper()
	cl := &http.Client{Timeout: fdGuard, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := cl.Get(p.metricsURL())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := testkit.MetricSum(string(b), family, labels...)
	return v
}

// netDial opens an HTTP connection to obgate's metrics port and keeps it
// open after one answered request, so that obgate holds a descriptor for
// it.
func netDial(p *obgateProc) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p.mport)), fdGuard)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(fdGuard))
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: obgate\r\n\r\n"); err != nil {
		c.Close()
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	_ = c.SetDeadline(time.Time{})
	return c, nil
}

// TestFDExhaustion runs obgate with a low descriptor limit and fills it
// with clients: obgate warns at startup that the limit is too low, then
// refuses the client that does not fit with ERR 1040 (at greeting time
// when accept itself has no descriptor, after the login when the server
// connection cannot be opened), keeps running and serving the clients it
// holds, and serves new clients again once they are gone. Two rounds, the
// second with one more descriptor taken (an idle metrics connection), so
// that both ways of running out are met.
func TestFDExhaustion(t *testing.T) {
	for _, mode := range clientIOModes {
		t.Run(mode, func(t *testing.T) {
			p := startObgateUnder(t, []string{"prlimit", fmt.Sprintf("--nofile=%d:%d", fdLimit, fdLimit), "--"}, "",
				"-o", "client_io_mode="+mode)
			if log := p.log(); !strings.Contains(log, "file descriptor limit (RLIMIT_NOFILE) is too low") ||
				!strings.Contains(log, "limit="+strconv.Itoa(fdLimit)) {
				t.Errorf("no startup warning about the descriptor limit in the log:\n%s", tail(log, 20))
			}
			seen := map[refusal]int{}
			total := 0
			for round := range 2 {
				if round == 1 {
					// An idle HTTP connection holds one more descriptor.
					c, err := netDial(p)
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
				}
				var held []*testkit.RawConn
				var first refusal
				for first == "" {
					if len(held) > fdLimit {
						t.Fatalf("round %d: %d clients held under a limit of %d descriptors and none refused", round, len(held), fdLimit)
					}
					c, r := tryClient(t, p.addr())
					if c != nil {
						held = append(held, c)
					}
					first = r
				}
				seen[first]++
				total++
				// Further clients meet the same: refused, one by one.
				for range 5 {
					c, r := tryClient(t, p.addr())
					if c != nil {
						c.Close()
						t.Fatalf("round %d: a client got in after one was refused and none left", round)
					}
					seen[r]++
					total++
				}
				t.Logf("%s round %d: %d clients held, then refused at %s; obgate has %d descriptors open", mode, round, len(held), first, openFDs(p.pid()))
				select {
				case <-p.exited:
					t.Fatalf("obgate exited: %v", p.waitErr)
				default:
				}
				for _, c := range held {
					selectOne(t, c)
					c.Close()
				}
				// Serves again once the held sessions are gone.
				deadline := time.Now().Add(fdGuard)
				for {
					c, _ := tryClient(t, p.addr())
					if c != nil {
						selectOne(t, c)
						c.Close()
						break
					}
					total++
					if time.Now().After(deadline) {
						t.Fatalf("round %d: obgate still refuses clients after every held one closed", round)
					}
					time.Sleep(10 * time.Millisecond)
				}
				testkit.Eventually(t, fdGuard, func() bool {
					return scrape(t, p, "odp_current_session", "sessionType", "client") == 0
				}, "client sessions left open")
			}
			if seen["greeting"] == 0 || seen["login"] == 0 {
				t.Errorf("refusals by step %v, want both greeting and login", seen)
			}
			if got := scrape(t, p, "obgate_client_refused_total", "reason", "fd_exhausted"); got != float64(total) {
				t.Errorf("obgate_client_refused_total = %v, want the %d refusals the clients saw", got, total)
			}
			if !strings.Contains(p.log(), "refusing new clients with ERR 1040") {
				t.Errorf("no warning about refused clients in the log:\n%s", tail(p.log(), 20))
			}
			if code := p.stop(fdGuard); code != 0 {
				t.Errorf("obgate exited %d after SIGTERM, want 0", code)
			}
		})
	}
}
