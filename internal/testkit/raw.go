package testkit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"obgate/mysqlproto"
)

// RawConn is a client connection driven one packet at a time, for tests
// that send what no driver would: wrong sequence ids, empty or oversized
// packets, garbage logins. Its methods take a limit that guards against a
// hang; reaching it is an error, never an expected outcome.
type RawConn struct {
	Conn net.Conn
	// Greeting is the server's initial handshake.
	Greeting *mysqlproto.Handshake
	// Caps are the capabilities the login asked for (after Login).
	Caps mysqlproto.Capability
	r    *bufio.Reader
}

// DialRaw connects to addr and reads the greeting. A server that answers
// with an ERR instead (too many connections, shutting down) gives a
// *mysqlproto.SQLError.
func DialRaw(addr string, limit time.Duration) (*RawConn, error) {
	conn, err := net.DialTimeout("tcp", addr, limit)
	if err != nil {
		return nil, err
	}
	return RawOver(conn, limit)
}

// RawOver is DialRaw on a connection the caller opened (from a chosen
// local address, say); it closes conn when the greeting cannot be read.
func RawOver(conn net.Conn, limit time.Duration) (*RawConn, error) {
	c := &RawConn{Conn: conn, r: bufio.NewReader(conn)}
	p, _, err := c.ReadPacket(limit)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("read greeting: %w", err)
	}
	if len(p) > 0 && p[0] == mysqlproto.ERRHeader {
		conn.Close()
		e, _ := mysqlproto.ParseERR(p)
		return nil, mysqlproto.SQLErrorFromERR(e)
	}
	if c.Greeting, err = mysqlproto.ParseHandshake(p); err != nil {
		conn.Close()
		return nil, err
	}
	return c, nil
}

// LoginPacket builds the HandshakeResponse41 payload Login sends, with
// mysql_native_password, so tests can send it changed.
func (c *RawConn) LoginPacket(user, password, db string) []byte {
	c.Caps = mysqlproto.DefaultClientCapability & (c.Greeting.Capability | mysqlproto.ClientMySQL)
	if !c.Greeting.Capability.Has(mysqlproto.ClientMySQL) {
		c.Caps &^= mysqlproto.ClientMySQL
	}
	if db != "" {
		c.Caps |= mysqlproto.ClientConnectWithDB
	}
	var auth []byte
	if password != "" {
		auth = mysqlproto.NativeToken(c.Greeting.AuthData, []byte(password))
	}
	r := &mysqlproto.HandshakeResponse{
		Capability:    c.Caps,
		MaxPacketSize: 1 << 24,
		Charset:       byte(mysqlproto.CharsetUTF8MB4),
		User:          user,
		AuthResponse:  auth,
		Database:      db,
		AuthPlugin:    mysqlproto.AuthNativePassword,
	}
	return r.Append(nil)
}

// Login logs in with mysql_native_password and reads the outcome: nil
// after an OK, a *mysqlproto.SQLError after an ERR.
func (c *RawConn) Login(user, password, db string, limit time.Duration) error {
	if err := c.WritePacket(1, c.LoginPacket(user, password, db)); err != nil {
		return err
	}
	for range 4 {
		p, seq, err := c.ReadPacket(limit)
		if err != nil {
			return fmt.Errorf("read login result: %w", err)
		}
		if len(p) == 0 {
			return mysqlproto.ErrMalformed
		}
		switch p[0] {
		case mysqlproto.OKHeader:
			return nil
		case mysqlproto.ERRHeader:
			e, _ := mysqlproto.ParseERR(p)
			return mysqlproto.SQLErrorFromERR(e)
		case mysqlproto.AuthSwitchRequestHeader:
			sw, ok := mysqlproto.ParseAuthSwitchRequest(p)
			if !ok || sw.Plugin != mysqlproto.AuthNativePassword {
				return fmt.Errorf("unexpected auth switch to %q", sw.Plugin)
			}
			var auth []byte
			if password != "" {
				auth = mysqlproto.NativeToken(sw.Data, []byte(password))
			}
			if err := c.WritePacket(seq+1, auth); err != nil {
				return err
			}
		default:
			return fmt.Errorf("unexpected login answer %x", p[:min(len(p), 16)])
		}
	}
	return errors.New("login did not finish")
}

// WritePacket frames payload as one logical packet starting at sequence
// id seq (split at 16 MiB - 1, with the trailing empty packet when needed)
// and writes it.
func (c *RawConn) WritePacket(seq uint8, payload []byte) error {
	b, _ := mysqlproto.AppendPacket(nil, seq, payload)
	return c.Write(b)
}

// Write writes b as it is.
func (c *RawConn) Write(b []byte) error {
	_ = c.Conn.SetWriteDeadline(time.Now().Add(time.Minute))
	_, err := c.Conn.Write(b)
	return err
}

// ReadPacket reads one logical packet (joining continuation packets) and
// returns its payload and the sequence id of its first physical packet.
func (c *RawConn) ReadPacket(limit time.Duration) ([]byte, uint8, error) {
	_ = c.Conn.SetReadDeadline(time.Now().Add(limit))
	var out []byte
	var first uint8
	for i := 0; ; i++ {
		var hdr [mysqlproto.HeaderLen]byte
		if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
			return nil, 0, err
		}
		n, seq := mysqlproto.ParseHeader(hdr[:])
		if i == 0 {
			first = seq
		}
		start := len(out)
		out = append(out, make([]byte, n)...)
		if _, err := io.ReadFull(c.r, out[start:]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, 0, err
		}
		if n < mysqlproto.MaxPayloadLen {
			return out, first, nil
		}
	}
}

// ReadERR reads one packet and returns it as an SQL error; anything else
// is an error.
func (c *RawConn) ReadERR(limit time.Duration) (*mysqlproto.SQLError, error) {
	p, _, err := c.ReadPacket(limit)
	if err != nil {
		return nil, err
	}
	if len(p) == 0 || p[0] != mysqlproto.ERRHeader {
		return nil, fmt.Errorf("want an ERR packet, got %x", p[:min(len(p), 32)])
	}
	e, ok := mysqlproto.ParseERR(p)
	if !ok {
		return nil, fmt.Errorf("malformed ERR packet %x", p)
	}
	return mysqlproto.SQLErrorFromERR(e), nil
}

// ReadResponse reads one complete answer to a command (OK, ERR, a lone
// EOF as MySQL answers COM_SET_OPTION, or a text result set up to its
// terminating EOF/ERR) and returns its packets. It knows nothing of
// multi-results.
func (c *RawConn) ReadResponse(limit time.Duration) ([][]byte, error) {
	p, _, err := c.ReadPacket(limit)
	if err != nil {
		return nil, err
	}
	out := [][]byte{p}
	if len(p) == 0 || p[0] == mysqlproto.OKHeader || p[0] == mysqlproto.ERRHeader || mysqlproto.IsEOFPacket(p) {
		return out, nil
	}
	// Column count, columns, EOF, rows, EOF or ERR.
	eofs := 0
	for eofs < 2 {
		p, _, err := c.ReadPacket(limit)
		if err != nil {
			return out, err
		}
		out = append(out, p)
		switch {
		case mysqlproto.IsEOFPacket(p):
			eofs++
		case len(p) > 0 && p[0] == mysqlproto.ERRHeader && eofs == 1:
			return out, nil
		}
	}
	return out, nil
}

// WaitClosed reads and discards until the server closes the connection.
// It returns the bytes that came before the close, and an error if the
// connection was still open after limit.
func (c *RawConn) WaitClosed(limit time.Duration) ([]byte, error) {
	_ = c.Conn.SetReadDeadline(time.Now().Add(limit))
	var got []byte
	buf := make([]byte, 32<<10)
	for {
		n, err := c.r.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			if IsClosedError(err) {
				return got, nil
			}
			return got, err
		}
	}
}

// Close closes the connection without saying goodbye.
func (c *RawConn) Close() error { return c.Conn.Close() }

// IsClosedError reports whether err means the peer closed the connection:
// EOF or a reset.
func IsClosedError(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
