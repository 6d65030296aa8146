package testproxy

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"obgate/internal/testkit"
	"obgate/mysqlproto"
)

func TestConfigRejectsBadPairs(t *testing.T) {
	if _, err := Config("127.0.0.1:1", "net", "client_io_mode"); err == nil {
		t.Error("odd argument count accepted")
	}
	if _, err := Config("127.0.0.1:1", "net", "no_such_item", "1"); err == nil {
		t.Error("unknown item accepted")
	}
	cfg, err := Config("127.0.0.1:1", "net", "max_packet_size", "1MB")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ServerRoutingMode != "mysql" || cfg.ClientIOMode != "net" || cfg.MaxPacketSize != 1<<20 {
		t.Errorf("got mode %q io %q max_packet_size %d", cfg.ServerRoutingMode, cfg.ClientIOMode, cfg.MaxPacketSize)
	}
}

// TestProxyRelaysToFakeServer runs Start, RawConn and CheckLeaks
// against a minimal fake MySQL server, in both client I/O modes.
func TestProxyRelaysToFakeServer(t *testing.T) {
	for _, mode := range []string{"netpoll", "net"} {
		t.Run(mode, func(t *testing.T) {
			testkit.CheckLeaks(t)
			fake := startFakeServer(t)
			cfg, err := Config(fake.addr, mode)
			if err != nil {
				t.Fatal(err)
			}
			p := Start(t, cfg)
			c, err := testkit.DialRaw(p.Addr, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Greeting.ServerVersion != fakeVersion {
				t.Errorf("greeting version %q, want the server's %q", c.Greeting.ServerVersion, fakeVersion)
			}
			if c.Greeting.ConnectionID == fakeConnID {
				t.Errorf("greeting carries the server's connection id %d, want obgate's", fakeConnID)
			}
			if err := c.Login("alice", "", "", 10*time.Second); err != nil {
				t.Fatalf("login: %v", err)
			}
			if err := c.WritePacket(0, []byte{byte(mysqlproto.ComPing)}); err != nil {
				t.Fatal(err)
			}
			p1, seq, err := c.ReadPacket(10 * time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if len(p1) == 0 || p1[0] != mysqlproto.OKHeader || seq != 1 {
				t.Fatalf("COM_PING answer %x seq %d, want OK seq 1", p1, seq)
			}
			if got := fake.user(); got != "alice" {
				t.Errorf("server saw user %q, want alice", got)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := p.Shutdown(ctx); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
			if _, err := c.WaitClosed(10 * time.Second); err != nil {
				t.Errorf("idle session not closed by Shutdown: %v", err)
			}
		})
	}
}

const (
	fakeVersion = "5.7.99-fake"
	fakeConnID  = 4242
)

type fakeServer struct {
	addr string
	ln   net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	seen string
}

func (f *fakeServer) user() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seen
}

// startFakeServer accepts connections, logs anyone in and answers
// COM_PING with OK until the client leaves.
func startFakeServer(t *testing.T) *fakeServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{addr: ln.Addr().String(), ln: ln}
	var conns sync.Map
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Store(conn, true)
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				defer conn.Close()
				f.serve(conn)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		conns.Range(func(k, _ any) bool { k.(net.Conn).Close(); return true })
		f.wg.Wait()
	})
	return f
}

func (f *fakeServer) serve(conn net.Conn) {
	pio := mysqlproto.NewPacketIO(conn, conn)
	h := mysqlproto.Handshake{
		ServerVersion: fakeVersion, ConnectionID: fakeConnID,
		Capability: mysqlproto.ProxyCapabilities | mysqlproto.ClientMySQL,
		Charset:    byte(mysqlproto.CharsetUTF8MB4), Status: mysqlproto.StatusAutocommit,
		AuthData: []byte("01234567890123456789"), AuthPlugin: mysqlproto.AuthNativePassword,
	}
	if err := pio.WritePacketFlush(h.Append(nil)); err != nil {
		return
	}
	p, err := pio.ReadPacket()
	if err != nil {
		return
	}
	resp, err := mysqlproto.ParseHandshakeResponse(p)
	if err != nil {
		return
	}
	f.mu.Lock()
	f.seen = resp.User
	f.mu.Unlock()
	caps := resp.Capability
	if err := pio.WritePacketFlush(mysqlproto.AppendOK(nil, mysqlproto.OK{Status: mysqlproto.StatusAutocommit}, caps)); err != nil {
		return
	}
	for {
		pio.ResetSequence()
		p, err := pio.ReadPacket()
		if err != nil {
			return // the client (obgate) went away
		}
		if len(p) == 0 || mysqlproto.Command(p[0]) == mysqlproto.ComQuit {
			return
		}
		var out []byte
		if mysqlproto.Command(p[0]) == mysqlproto.ComPing {
			out = mysqlproto.AppendOK(nil, mysqlproto.OK{Status: mysqlproto.StatusAutocommit}, caps)
		} else {
			out = mysqlproto.NewSQLError(mysqlproto.ERUnknownComError, "fake server: unknown command").AppendPacket(nil)
		}
		if err := pio.WritePacketFlush(out); err != nil {
			return
		}
	}
}
