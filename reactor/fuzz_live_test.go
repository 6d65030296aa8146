package reactor_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"testing"
	"time"

	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/mysqlproto"
)

// FuzzLiveSession sends random and mutated client packets to a live
// obgate (mysql routing mode, in front of the package's MariaDB) on a
// freshly logged-in connection, then says that nothing more comes (a
// half-close) and reads until obgate closes. Whatever the input, obgate
// must neither crash nor hang: the connection ends within hangLimit, the
// session is torn down, a new connection still runs SELECT 1, and when
// the fuzz target ends no goroutine is left.
//
// Input layout: the first byte is the mode; bit 0 set sends the rest as
// raw bytes, clear frames it as packets, each written as [sequence id]
// [length] [payload...] (a short last record takes what is left); bit 1
// picks the client transport (clear: netpoll, set: net). The session logs
// in as the fuzz user, who may only read obtest and whose statements
// MariaDB stops after a few seconds, so no input can change the server
// for other tests or keep a session busy for long.
func FuzzLiveSession(f *testing.F) {
	testkit.CheckLeaks(f)
	proxies := make([]*testproxy.Proxy, len(ioModes))
	for i, mode := range ioModes {
		cfg, err := testproxy.Config(maria(f).Addr(), mode)
		if err != nil {
			f.Fatal(err)
		}
		proxies[i] = testproxy.Start(f, cfg)
	}
	for _, s := range liveSeeds() {
		for transport := range byte(len(ioModes)) {
			f.Add(append([]byte{s.mode | transport<<1}, s.body...))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		p := proxies[int(data[0]>>1)&1]
		wire := data[1:]
		if data[0]&1 == 0 {
			wire = framePackets(wire)
		}
		c, err := testkit.DialRaw(p.Addr, hangLimit)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer c.Close()
		if err := c.Login(fuzzUser, fuzzPass, testDB, hangLimit); err != nil {
			t.Fatalf("login: %v", err)
		}
		// obgate may close the connection before all of it was written.
		_ = c.Write(wire)
		_ = c.Conn.(*net.TCPConn).CloseWrite()
		if _, err := c.WaitClosed(hangLimit); err != nil && !errors.Is(err, net.ErrClosed) && !testkit.IsClosedError(err) {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("obgate neither finished nor closed the connection within %v after input %x", hangLimit, abbrevBytes(data))
			}
			t.Fatalf("reading obgate's answer: %v", err)
		}
		c.Close()
		liveHealthy(t, p)
	})
}

// liveHealthy checks that obgate serves a new connection and tore down
// every earlier session.
func liveHealthy(t *testing.T, p *testproxy.Proxy) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	c, err := mysqlproto.Dial(ctx, p.Addr, mysqlproto.ClientOptions{User: fuzzUser, Password: fuzzPass, Database: testDB})
	if err != nil {
		t.Fatalf("a new connection fails: %v", err)
	}
	_ = c.Conn().SetDeadline(time.Now().Add(hangLimit))
	res, err := c.Query("SELECT 1 AS one")
	c.Close()
	if err != nil || res.String(0, "one") != "1" {
		t.Fatalf("a new connection cannot run SELECT 1: %v", err)
	}
	waitNoClients(t, p)
}

// framePackets turns [seq][len][payload] records into MySQL packets with
// those sequence ids and lengths.
func framePackets(b []byte) []byte {
	var out []byte
	for len(b) > 0 {
		seq := b[0]
		b = b[1:]
		n := 0
		if len(b) > 0 {
			n = min(int(b[0]), len(b)-1)
			b = b[1:]
		}
		out, _ = mysqlproto.AppendPacket(out, seq, b[:n])
		b = b[n:]
	}
	return out
}

// liveSeed is one seed input before the transport bit is added.
type liveSeed struct {
	mode byte // 0: packets, 1: raw
	body []byte
}

// rec is one [seq][len][payload] record of packet mode.
func seedRec(seq byte, payload ...byte) []byte {
	if len(payload) > 255 {
		panic("rec: payload over 255 bytes")
	}
	return append([]byte{seq, byte(len(payload))}, payload...)
}

func seedCmd(c mysqlproto.Command, body ...byte) []byte { return append([]byte{byte(c)}, body...) }

func seedQuery(sql string) []byte { return seedCmd(mysqlproto.ComQuery, []byte(sql)...) }

func seedU32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

func seedCat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func seedPackets(recs ...[]byte) liveSeed { return liveSeed{0, seedCat(recs...)} }

func seedRaw(b ...[]byte) liveSeed { return liveSeed{1, seedCat(b...)} }

// liveSeeds are the corpus FuzzLiveSession starts from; `go test` runs
// each of them on both transports.
func liveSeeds() []liveSeed {
	r := rand.New(rand.NewPCG(7, 11))
	junk := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	hdr := func(n int, seq byte) []byte { return []byte{byte(n), byte(n >> 8), byte(n >> 16), seq} }
	return []liveSeed{
		// Valid statements, one and pipelined.
		seedPackets(seedRec(0, seedQuery("SELECT 1")...)),
		seedPackets(seedRec(0, seedQuery("SELECT seq FROM seq_1_to_2000")...)),
		seedPackets(seedRec(0, seedQuery("SELECT 1")...), seedRec(0, seedQuery("SELECT 2")...), seedRec(0, seedQuery("DO 3")...)),
		// Prepared statements with ids that were never prepared.
		seedPackets(seedRec(0, seedCmd(mysqlproto.ComStmtPrepare, []byte("SELECT ?")...)...),
			seedRec(0, seedCat(seedCmd(mysqlproto.ComStmtExecute), seedU32(0xdeadbeef), []byte{0, 1, 0, 0, 0})...),
			seedRec(0, seedCat(seedCmd(mysqlproto.ComStmtExecute), seedU32(1), []byte{0, 1, 0, 0, 0, 0, 1, 0xfe, 0})...)),
		seedPackets(seedRec(0, seedCat(seedCmd(mysqlproto.ComStmtExecute), seedU32(0))...)),
		seedPackets(seedRec(0, seedCat(seedCmd(mysqlproto.ComStmtFetch), seedU32(77), seedU32(10))...),
			seedRec(0, seedCat(seedCmd(mysqlproto.ComStmtReset), seedU32(78))...),
			seedRec(0, seedCat(seedCmd(mysqlproto.ComStmtSendLongData), seedU32(79), []byte{0, 0}, []byte("data"))...),
			seedRec(0, seedCat(seedCmd(mysqlproto.ComStmtClose), seedU32(80))...),
			seedRec(0, seedQuery("SELECT 1")...)),
		seedPackets(seedRec(0, seedCat(seedCmd(mysqlproto.ComStmtBulkExecute), seedU32(5), []byte{0x80, 0})...)),
		// Wrong sequence ids, before and after a good command.
		seedPackets(seedRec(5, seedQuery("SELECT 1")...)),
		seedPackets(seedRec(0, seedQuery("SELECT 1")...), seedRec(1, seedQuery("SELECT 1")...)),
		// Zero-length packets.
		seedPackets(seedRec(0)),
		seedPackets(seedRec(0, seedQuery("SELECT 1")...), seedRec(0), seedRec(0)),
		// A header at the 16 MiB boundary: continuation packets that never come.
		seedRaw(hdr(mysqlproto.MaxPayloadLen, 0), seedQuery("SELECT 1")),
		seedRaw(hdr(mysqlproto.MaxPayloadLen, 0), seedQuery("SELECT '"), hdr(3, 1), []byte("ab'")),
		seedRaw(hdr(mysqlproto.MaxPayloadLen-1, 0), seedQuery("SELECT 1")),
		// COM_CHANGE_USER: garbage, an unknown user, a truncated one.
		seedPackets(seedRec(0, seedCmd(mysqlproto.ComChangeUser, junk(40)...)...)),
		seedPackets(seedRec(0, seedCmd(mysqlproto.ComChangeUser, []byte("nosuchuser\x00\x00obtest\x00")...)...)),
		seedPackets(seedRec(0, seedCmd(mysqlproto.ComChangeUser, []byte("fuzz")...)...)),
		// COM_SET_OPTION: on, off, unknown, short.
		seedPackets(seedRec(0, seedCmd(mysqlproto.ComSetOption, 0, 0)...), seedRec(0, seedQuery("SELECT 1; SELECT 2")...)),
		seedPackets(seedRec(0, seedCmd(mysqlproto.ComSetOption, 1, 0)...)),
		seedPackets(seedRec(0, seedCmd(mysqlproto.ComSetOption, 0xff, 0xff)...)),
		seedPackets(seedRec(0, seedCmd(mysqlproto.ComSetOption)...)),
		// Truncated packets.
		seedRaw(hdr(100, 0), seedQuery("SELECT 1")),
		seedRaw(hdr(5, 0), []byte{byte(mysqlproto.ComQuery)}),
		seedRaw([]byte{9, 0}),
		// KILL of ids nobody has, as SQL and as COM_PROCESS_KILL.
		seedPackets(seedRec(0, seedQuery("KILL 987654")...)),
		seedPackets(seedRec(0, seedQuery("KILL QUERY 4242")...), seedRec(0, seedQuery("SELECT 1")...)),
		seedPackets(seedRec(0, seedCat(seedCmd(mysqlproto.ComProcessKill), seedU32(r.Uint32()))...)),
		seedPackets(seedRec(0, seedCmd(mysqlproto.ComProcessKill, 1)...)),
		// Other commands, with and without sensible arguments.
		seedPackets(seedRec(0, seedCmd(mysqlproto.ComPing)...), seedRec(0, seedCmd(mysqlproto.ComStatistics)...),
			seedRec(0, seedCmd(mysqlproto.ComInitDB, []byte("obtest")...)...), seedRec(0, seedCmd(mysqlproto.ComResetConnection)...)),
		seedPackets(seedRec(0, seedCmd(mysqlproto.ComInitDB, junk(12)...)...)),
		seedPackets(seedRec(0, seedCmd(mysqlproto.ComFieldList, []byte("seq_1_to_3\x00")...)...)),
		seedPackets(seedRec(0, seedCmd(mysqlproto.ComProcessInfo)...), seedRec(0, seedCmd(mysqlproto.ComDebug)...)),
		seedPackets(seedRec(0, seedCmd(mysqlproto.ComBinlogDump, junk(10)...)...)),
		seedPackets(seedRec(0, seedCmd(mysqlproto.ComQuit)...), seedRec(0, seedQuery("SELECT 1")...)),
		seedPackets(seedRec(0, seedQuery("LOAD DATA LOCAL INFILE '/nonexistent' INTO TABLE t")...)),
		// Statements obgate answers itself.
		seedPackets(seedRec(0, seedQuery("SELECT PROXY_VERSION()")...), seedRec(0, seedQuery("SHOW PROXYSESSION")...)),
		// Binary junk, framed and raw.
		seedPackets(seedRec(0, junk(60)...), seedRec(0, junk(7)...)),
		seedRaw(junk(64)),
		seedRaw(junk(200)),
	}
}

func abbrevBytes(b []byte) []byte { return b[:min(len(b), 64)] }
