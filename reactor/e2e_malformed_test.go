package reactor_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"net"
	"testing"

	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/mysqlproto"
)

// loginRaw logs in through obgate packet by packet.
func loginRaw(t *testing.T, p *testproxy.Proxy, user, pass string) *testkit.RawConn {
	t.Helper()
	c, err := testkit.DialRaw(p.Addr, hangLimit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Login(user, pass, testDB, hangLimit); err != nil {
		t.Fatalf("login as %s: %v", user, err)
	}
	return c
}

// checkHealthy logs in anew and runs a statement, then waits until obgate
// has no client connection left: the bad one is gone too.
func checkHealthy(t *testing.T, p *testproxy.Proxy) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	c, err := mysqlproto.Dial(ctx, p.Addr, mysqlproto.ClientOptions{User: "root", Database: testDB})
	if err != nil {
		t.Fatalf("a new connection fails: %v", err)
	}
	res, err := c.Query("SELECT COUNT(*) AS n FROM seq_1_to_100")
	c.Close()
	if err != nil || res.String(0, "n") != "100" {
		t.Fatalf("a new connection cannot query: %v", err)
	}
	waitNoClients(t, p)
}

// expectERRThenClose reads an ERR with the code and then the close.
func expectERRThenClose(t *testing.T, c *testkit.RawConn, code uint16) {
	t.Helper()
	e, err := c.ReadERR(hangLimit)
	if err != nil {
		t.Fatalf("want ERR %d: %v", code, err)
	}
	if e.Code != code {
		t.Errorf("got %v, want ERR %d", e, code)
	}
	if rest, err := c.WaitClosed(hangLimit); err != nil || len(rest) != 0 {
		t.Errorf("after the ERR: %d more bytes, %v; want the connection closed", len(rest), err)
	}
}

// TestE2EMalformed sends broken packets and checks that obgate answers
// with an ERR or closes the connection, never hangs or panics, stays
// healthy for other clients and leaks no goroutine.
func TestE2EMalformed(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)
		p := startProxy(t, mode, "max_packet_size", "1MB", "client_handshake_timeout", "1s")

		t.Run("wrong sequence id", func(t *testing.T) {
			testkit.CheckLeaks(t)
			c := loginRaw(t, p, "root", "")
			if err := c.WritePacket(3, append([]byte{byte(mysqlproto.ComQuery)}, "SELECT 1"...)); err != nil {
				t.Fatal(err)
			}
			expectERRThenClose(t, c, mysqlproto.ERNetPacketsOutOfOrder)
			checkHealthy(t, p)
		})

		t.Run("empty packet", func(t *testing.T) {
			testkit.CheckLeaks(t)
			c := loginRaw(t, p, "root", "")
			if err := c.WritePacket(0, nil); err != nil {
				t.Fatal(err)
			}
			expectERRThenClose(t, c, mysqlproto.ERUnknownComError)
			checkHealthy(t, p)
		})

		t.Run("packet over max_packet_size", func(t *testing.T) {
			testkit.CheckLeaks(t)
			c := loginRaw(t, p, "root", "")
			q := append([]byte{byte(mysqlproto.ComQuery)}, "SELECT '"...)
			q = append(q, bytes.Repeat([]byte{'a'}, 2<<20)...)
			q = append(q, '\'')
			// Write while obgate may already be answering and closing.
			go func() { _ = c.WritePacket(0, q) }()
			expectERRThenClose(t, c, mysqlproto.ERNetPacketTooLarge)
			checkHealthy(t, p)
		})

		t.Run("packet over max_packet_size in continuation packets", func(t *testing.T) {
			testkit.CheckLeaks(t)
			// Every physical packet is under the limit; together they are not.
			p := startProxy(t, mode, "max_packet_size", "20MB")
			c := loginRaw(t, p, "root", "")
			q := append([]byte{byte(mysqlproto.ComQuery)}, "SELECT '"...)
			q = append(q, bytes.Repeat([]byte{'a'}, 24<<20)...)
			q = append(q, '\'')
			go func() { _ = c.WritePacket(0, q) }()
			expectERRThenClose(t, c, mysqlproto.ERNetPacketTooLarge)
			checkHealthy(t, p)
		})

		t.Run("truncated packet then close", func(t *testing.T) {
			testkit.CheckLeaks(t)
			c := loginRaw(t, p, "root", "")
			b := []byte{100, 0, 0, 0, byte(mysqlproto.ComQuery)}
			b = append(b, "SELECT 1 /* the rest never comes"...)
			if err := c.Write(b); err != nil {
				t.Fatal(err)
			}
			c.Close()
			checkHealthy(t, p)
		})

		t.Run("header promising more than ever comes", func(t *testing.T) {
			testkit.CheckLeaks(t)
			// obgate's read timeout for the rest of a packet (30s) is not
			// configurable; while the session waits, others are served, and
			// when the client goes the session goes too.
			for _, n := range []int{1000, 100000} {
				c := loginRaw(t, p, "root", "")
				b := []byte{byte(n), byte(n >> 8), byte(n >> 16), 0, byte(mysqlproto.ComQuery)}
				b = append(b, "SELECT 1"...)
				if err := c.Write(b); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
				other, err := mysqlproto.Dial(ctx, p.Addr, mysqlproto.ClientOptions{User: "root"})
				cancel()
				if err != nil {
					t.Fatalf("a new connection fails while one waits for a packet: %v", err)
				}
				if _, err := other.Query("SELECT 1"); err != nil {
					t.Fatalf("a new connection cannot query while one waits for a packet: %v", err)
				}
				other.Close()
				c.Close()
			}
			checkHealthy(t, p)
		})

		t.Run("header promising more than ever comes during login", func(t *testing.T) {
			testkit.CheckLeaks(t)
			c, err := testkit.DialRaw(p.Addr, hangLimit)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.Write([]byte{200, 0, 0, 1, 0x85, 0xa6}); err != nil {
				t.Fatal(err)
			}
			// client_handshake_timeout is 1s on this obgate.
			if _, err := c.WaitClosed(hangLimit); err != nil {
				t.Errorf("a login that never completes its packet: %v, want the connection closed", err)
			}
			checkHealthy(t, p)
		})

		t.Run("garbage login", func(t *testing.T) {
			testkit.CheckLeaks(t)
			r := rand.New(rand.NewPCG(3, 4))
			noisy := make([]byte, 200)
			for i := range noisy {
				noisy[i] = byte(r.Uint32())
			}
			// Claims protocol 4.1 and then stops in the middle of the fixed part.
			short41 := binary.LittleEndian.AppendUint32(nil, uint32(mysqlproto.ClientProtocol41))
			// Claims protocol 4.1, user name without its NUL.
			noNUL := append(binary.LittleEndian.AppendUint32(nil, uint32(mysqlproto.ClientProtocol41|mysqlproto.ClientSecureConnection)),
				make([]byte, 28)...)
			noNUL = append(noNUL, "root"...)
			// A lenenc auth response longer than the packet.
			longAuth := append(binary.LittleEndian.AppendUint32(nil, uint32(mysqlproto.ClientProtocol41|mysqlproto.ClientPluginAuthLenEncData)),
				make([]byte, 28)...)
			longAuth = append(longAuth, "root\x00\xfc\xff\xff"...)
			for name, payload := range map[string][]byte{
				"three bytes": {1, 2, 3}, "noise": noisy, "short 4.1": short41,
				"user without NUL": noNUL, "auth longer than packet": longAuth, "empty": {},
			} {
				c, err := testkit.DialRaw(p.Addr, hangLimit)
				if err != nil {
					t.Fatal(err)
				}
				if err := c.WritePacket(1, payload); err != nil {
					t.Fatal(err)
				}
				got, err := c.WaitClosed(hangLimit)
				c.Close()
				if err != nil {
					t.Errorf("%s: %v, want the connection closed", name, err)
					continue
				}
				// An ERR 1043 may come before the close.
				if len(got) > 0 {
					n, _ := mysqlproto.ParseHeader(got)
					pkt := got[mysqlproto.HeaderLen:]
					e, ok := mysqlproto.ParseERR(pkt)
					if len(got) < mysqlproto.HeaderLen || n != len(pkt) || !ok || (e.Code != mysqlproto.ERHandshakeError && e.Code != mysqlproto.ERAccessDenied) {
						t.Errorf("%s: got %x before the close, want nothing or ERR 1043", name, got)
					}
				}
			}
			checkHealthy(t, p)
		})

		t.Run("random bytes after login", func(t *testing.T) {
			testkit.CheckLeaks(t)
			r := rand.New(rand.NewPCG(20240601, uint64(len(mode))))
			const rounds = 150
			for i := range rounds {
				c := loginRaw(t, p, fuzzUser, fuzzPass)
				var b []byte
				switch i % 3 {
				case 0: // anything at all, half of it with sequence id 0
					b = make([]byte, 1+r.IntN(64))
					for k := range b {
						b[k] = byte(r.Uint32())
					}
					if len(b) >= 4 && i%2 == 0 {
						b[3] = 0
					}
				case 1: // a well-framed packet with a random command and body
					body := make([]byte, r.IntN(40))
					for k := range body {
						body[k] = byte(r.Uint32())
					}
					b, _ = mysqlproto.AppendPacket(nil, 0, append([]byte{byte(r.IntN(0x20))}, body...))
				case 2: // a valid statement followed by random bytes
					b, _ = mysqlproto.AppendPacket(nil, 0, append([]byte{byte(mysqlproto.ComQuery)}, "SELECT 1"...))
					for range 1 + r.IntN(16) {
						b = append(b, byte(r.Uint32()))
					}
				}
				if err := c.Write(b); err != nil {
					t.Fatalf("round %d: %v", i, err)
				}
				// Say that nothing more comes, then expect obgate to close.
				_ = c.Conn.(*net.TCPConn).CloseWrite()
				if _, err := c.WaitClosed(hangLimit); err != nil {
					t.Fatalf("round %d: sent %x: %v, want the connection closed", i, b, err)
				}
				c.Close()
				if i%25 == 24 {
					checkHealthy(t, p)
				}
			}
			checkHealthy(t, p)
		})
	})
}
