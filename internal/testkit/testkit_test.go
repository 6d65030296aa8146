package testkit

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"obgate/mysqlproto"
)

func TestWriteSelfSignedCert(t *testing.T) {
	certFile, keyFile, err := WriteSelfSignedCert(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatalf("LoadX509KeyPair: %v", err)
	}
	pemBytes, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		t.Fatal("certificate PEM does not parse")
	}
	// A verifying client accepts the certificate for 127.0.0.1.
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	srvErr := make(chan error, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			srvErr <- err
			return
		}
		defer conn.Close()
		srvErr <- conn.(*tls.Conn).Handshake()
	}()
	c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatalf("client handshake: %v", err)
	}
	c.Close()
	if err := <-srvErr; err != nil {
		t.Fatalf("server handshake: %v", err)
	}
}

func TestMetricSum(t *testing.T) {
	text := `# HELP x
odp_sql_request_total{sqlType="SELECT",sqlResult="success",app="a"} 3
odp_sql_request_total{sqlType="SELECT",sqlResult="fail",app="a"} 1
odp_sql_request_total{sqlType="INSERT",sqlResult="success",app="a"} 5
odp_new_client_connections{connectionResult="success"} 2
odp_new_client_connections_other 7
`
	tests := []struct {
		family string
		labels []string
		want   float64
		found  bool
	}{
		{"odp_sql_request_total", nil, 9, true},
		{"odp_sql_request_total", []string{"sqlType", "SELECT"}, 4, true},
		{"odp_sql_request_total", []string{"sqlType", "SELECT", "sqlResult", "success"}, 3, true},
		{"odp_sql_request_total", []string{"sqlType", "UPDATE"}, 0, false},
		{"odp_new_client_connections", nil, 2, true},
		{"odp_missing", nil, 0, false},
	}
	for _, tt := range tests {
		got, found := MetricSum(text, tt.family, tt.labels...)
		if got != tt.want || found != tt.found {
			t.Errorf("MetricSum(%s, %q) = %v, %v; want %v, %v", tt.family, tt.labels, got, found, tt.want, tt.found)
		}
	}
}

func TestFreePort(t *testing.T) {
	port := FreePort(t)
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("port %d is not free: %v", port, err)
	}
	ln.Close()
}

func TestProxyConfigRejectsBadPairs(t *testing.T) {
	if _, err := ProxyConfig("127.0.0.1:1", "net", "client_io_mode"); err == nil {
		t.Error("odd argument count accepted")
	}
	if _, err := ProxyConfig("127.0.0.1:1", "net", "no_such_item", "1"); err == nil {
		t.Error("unknown item accepted")
	}
	cfg, err := ProxyConfig("127.0.0.1:1", "net", "max_packet_size", "1MB")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ServerRoutingMode != "mysql" || cfg.ClientIOMode != "net" || cfg.MaxPacketSize != 1<<20 {
		t.Errorf("got mode %q io %q max_packet_size %d", cfg.ServerRoutingMode, cfg.ClientIOMode, cfg.MaxPacketSize)
	}
}

// TestProxyRelaysToFakeServer runs StartProxy, RawConn and CheckLeaks
// against a minimal fake MySQL server, in both client I/O modes.
func TestProxyRelaysToFakeServer(t *testing.T) {
	for _, mode := range []string{"netpoll", "net"} {
		t.Run(mode, func(t *testing.T) {
			CheckLeaks(t)
			fake := startFakeServer(t)
			cfg, err := ProxyConfig(fake.addr, mode)
			if err != nil {
				t.Fatal(err)
			}
			p := StartProxy(t, cfg)
			c, err := DialRaw(p.Addr, 10*time.Second)
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
