package obsim

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"obgate/mysqlproto"
)

// obClient is a small test client speaking the way ODP speaks to an
// OBServer: it logs in with ODP's connect attributes (fixed or XOR proxy
// scramble), asks for OB capabilities and, when granted, continues in OB20
// frames (or compressed frames) built with mysqlproto's framers.
type obClient struct {
	t       *testing.T
	conn    net.Conn
	br      *bufio.Reader
	pio     *mysqlproto.PacketIO
	ob20    *mysqlproto.OB20Framer
	comp    *mysqlproto.CompressedFramer
	caps    mysqlproto.Capability
	granted mysqlproto.OBCapability
	connID  uint32
	loginOK mysqlproto.OK
	// scramble is the node's handshake scramble.
	scramble []byte
}

type obLogin struct {
	user, password string
	db             string
	obCaps         mysqlproto.OBCapability // 0: do not send __proxy_capability_flag
	proxy          bool                    // __mysql_client_type=__ob_proxy
	proxyScramble  []byte                  // non-nil: send __proxy_scramble (XOR)
	clusterName    string
	caps           mysqlproto.Capability // 0: defaults
	// With proxy: __client_session_id and __proxy_connection_id when not
	// empty.
	clientSessionID, proxyConnID string
	charset                      byte // 0: utf8mb4_general_ci
}

// dialOB logs in; on an ERR it returns the SQL error.
func dialOB(t *testing.T, addr string, l obLogin) (*obClient, error) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	c := &obClient{t: t, conn: conn, br: bufio.NewReader(conn)}
	c.pio = mysqlproto.NewPacketIO(c.br, conn)
	greeting, err := c.pio.ReadPacket()
	if err != nil {
		conn.Close()
		return nil, err
	}
	hs, err := mysqlproto.ParseHandshake(greeting)
	if err != nil {
		conn.Close()
		return nil, err
	}
	c.connID = hs.ConnectionID
	c.scramble = hs.AuthData
	caps := l.caps
	if caps == 0 {
		caps = mysqlproto.DefaultClientCapability
	}
	c.caps = caps & (hs.Capability | mysqlproto.ClientMySQL)
	scramble := hs.AuthData
	var attrs []mysqlproto.ConnAttr
	if l.proxy {
		attrs = append(attrs, mysqlproto.ConnAttr{Key: mysqlproto.AttrMySQLClientType, Value: mysqlproto.ClientTypeOBProxy},
			mysqlproto.ConnAttr{Key: mysqlproto.AttrConnectionID, Value: fmt.Sprint(hs.ConnectionID)})
		if l.proxyConnID != "" {
			attrs = append(attrs, mysqlproto.ConnAttr{Key: mysqlproto.AttrProxyConnectionID, Value: l.proxyConnID})
		}
		if l.clientSessionID != "" {
			attrs = append(attrs, mysqlproto.ConnAttr{Key: mysqlproto.AttrClientSessionID, Value: l.clientSessionID})
		}
		scramble = []byte(mysqlproto.OBProxyScramble)
		if l.proxyScramble != nil {
			x := make([]byte, len(l.proxyScramble))
			for i := range x {
				x[i] = l.proxyScramble[i] ^ hs.AuthData[i]
			}
			attrs = append(attrs, mysqlproto.ConnAttr{Key: mysqlproto.AttrProxyScramble, Value: string(x)})
			scramble = l.proxyScramble
		}
	}
	if l.clusterName != "" {
		attrs = append(attrs, mysqlproto.ConnAttr{Key: mysqlproto.AttrClusterName, Value: l.clusterName})
	}
	if l.obCaps != 0 {
		attrs = append(attrs, mysqlproto.ConnAttr{Key: mysqlproto.AttrProxyCapabilityFlag, Value: mysqlproto.FormatOBCapability(l.obCaps)})
	}
	charset := l.charset
	if charset == 0 {
		charset = byte(mysqlproto.CharsetUTF8MB4)
	}
	resp := &mysqlproto.HandshakeResponse{Capability: c.caps, MaxPacketSize: 1 << 24, Charset: charset, User: l.user,
		AuthResponse: mysqlproto.NativeToken(scramble, []byte(l.password)), Database: l.db,
		AuthPlugin: mysqlproto.AuthNativePassword, Attrs: attrs}
	if err := c.pio.WritePacketFlush(resp.Append(nil)); err != nil {
		conn.Close()
		return nil, err
	}
	p, err := c.pio.ReadPacket()
	if err != nil {
		conn.Close()
		return nil, err
	}
	if p[0] == mysqlproto.ERRHeader {
		conn.Close()
		e, _ := mysqlproto.ParseERR(p)
		return nil, mysqlproto.SQLErrorFromERR(e)
	}
	ok, good := mysqlproto.ParseOK(p, c.caps)
	if !good {
		conn.Close()
		return nil, fmt.Errorf("bad login OK %x", p)
	}
	ok.SessionState = append([]byte(nil), ok.SessionState...)
	c.loginOK = ok
	if v, found := sessionVar(ok.SessionState, mysqlproto.OBCapabilityFlagVar); found {
		c.granted, _ = mysqlproto.ParseOBCapability(v)
	}
	switch {
	case c.granted.Has(mysqlproto.OBCapProtocolV2):
		c.ob20 = mysqlproto.NewOB20Framer(c.br, conn, mysqlproto.FramerClient, c.connID)
		c.ob20.SetNextRequestID(0x8B45D4)
		c.pio = mysqlproto.NewPacketIO(c.ob20, c.ob20)
	case c.granted.Has(mysqlproto.OBCapChecksum):
		c.comp = mysqlproto.NewCompressedFramer(c.br, conn, mysqlproto.FramerClient, mysqlproto.CompressStored)
		c.pio = mysqlproto.NewPacketIO(c.comp, c.comp)
	}
	_ = conn.SetDeadline(time.Time{})
	t.Cleanup(func() { conn.Close() })
	return c, nil
}

// sessionVar finds a system variable in session-state entries.
func sessionVar(state []byte, name string) (string, bool) {
	it := mysqlproto.SessionStates(state)
	found, val := false, ""
	for {
		typ, data, ok := it.Next()
		if !ok {
			break
		}
		if typ != mysqlproto.SessionTrackSystemVariables {
			continue
		}
		for pos := 0; pos < len(data); {
			n, v, next, ok := mysqlproto.ParseSystemVariable(data, pos)
			if !ok {
				break
			}
			if string(n) == name {
				found, val = true, string(v)
			}
			pos = next
		}
	}
	return val, found
}

// obResult is a text result read by obClient.
type obResult struct {
	columns []string
	rows    [][]string
	nulls   [][]bool // per row: which values were NULL (rows has "")
	ok      mysqlproto.OK
	err     *mysqlproto.SQLError
	// extraOK says ok is the extra OK that followed the result set's EOF.
	extraOK bool
}

// query sends COM_QUERY and reads one result (classic EOFs, no
// multi-results).
func (c *obClient) query(sql string) obResult {
	c.t.Helper()
	return c.command(append([]byte{byte(mysqlproto.ComQuery)}, sql...))
}

// command sends a command packet and reads one result as query does.
func (c *obClient) command(pkt []byte) obResult {
	c.t.Helper()
	_ = c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	defer c.conn.SetDeadline(time.Time{})
	if c.ob20 != nil {
		c.ob20.BeginRequest()
	}
	if c.comp != nil {
		c.comp.BeginRequest()
	}
	c.pio.ResetSequence()
	if err := c.pio.WritePacketFlush(pkt); err != nil {
		c.t.Fatal(err)
	}
	var res obResult
	p := c.read()
	switch p[0] {
	case mysqlproto.OKHeader:
		ok, _ := mysqlproto.ParseOK(p, c.caps)
		ok.SessionState = append([]byte(nil), ok.SessionState...)
		res.ok = ok
		return res
	case mysqlproto.ERRHeader:
		e, _ := mysqlproto.ParseERR(p)
		res.err = mysqlproto.SQLErrorFromERR(e)
		return res
	}
	n, _, _ := mysqlproto.ReadLenEncInt(p, 0)
	for range n {
		col, _ := mysqlproto.ParseColumn(c.read())
		res.columns = append(res.columns, col.Name)
	}
	c.read() // EOF
	for {
		p := c.read()
		if mysqlproto.IsEOFPacket(p) {
			cmd := mysqlproto.Command(pkt[0])
			if eof, _ := mysqlproto.ParseEOF(p); (cmd == mysqlproto.ComQuery || cmd == mysqlproto.ComStmtExecute) &&
				c.granted.Has(mysqlproto.OBCapExtraOKPacketForStatistics) &&
				!eof.Status.Has(mysqlproto.StatusMoreResultsExists) && !eof.Status.Has(mysqlproto.StatusCursorExists) {
				// The extra OK with the session state of the result set.
				ok, _ := mysqlproto.ParseOK(c.read(), c.caps)
				ok.SessionState = append([]byte(nil), ok.SessionState...)
				res.ok, res.extraOK = ok, true
			}
			return res
		}
		if p[0] == mysqlproto.ERRHeader {
			e, _ := mysqlproto.ParseERR(p)
			res.err = mysqlproto.SQLErrorFromERR(e)
			return res
		}
		vals := make([][]byte, n)
		nulls := make([]bool, n)
		mysqlproto.ReadTextRow(p, vals, nulls)
		row := make([]string, n)
		for i := range vals {
			row[i] = string(vals[i])
		}
		res.rows = append(res.rows, row)
		res.nulls = append(res.nulls, nulls)
	}
}

func (c *obClient) read() []byte {
	c.t.Helper()
	p, err := c.pio.ReadPacket()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return append([]byte(nil), p...)
}

// closed reports whether the server closed the connection (within d).
func (c *obClient) closed(d time.Duration) bool {
	_ = c.conn.SetReadDeadline(time.Now().Add(d))
	_, err := c.br.ReadByte()
	return err == io.EOF || (err != nil && !isTimeout(err))
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
