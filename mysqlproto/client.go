package mysqlproto

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// ClientOptions configure a Client login.
type ClientOptions struct {
	User string
	// Password is the plaintext password. PasswordStage1 (SHA1 of the
	// password) may be given instead for mysql_native_password, which is
	// how obgate logs in with ODP-style SHA1-hex password settings.
	Password       string
	PasswordStage1 []byte
	Database       string
	Attrs          []ConnAttr
	// Capability is what the client asks for; zero means DefaultClientCapability.
	Capability Capability
	Charset    byte
	// TLS, when set, upgrades the connection with an SSLRequest; a server
	// that offers no TLS is refused, unless TLSOptional.
	TLS *tls.Config
	// TLSOptional goes on in clear with a server that offers no TLS
	// (enable_server_ssl's "try best" without server_ssl_verify).
	TLSOptional bool
	// OnHandshake may inspect the server's greeting and change the response
	// before it is sent (for example to add connect attributes that depend
	// on the server's connection id).
	OnHandshake func(h *Handshake, r *HandshakeResponse)
	// MaxPacket bounds packets read from the server (DefaultMaxPacket if 0).
	MaxPacket int
}

// ErrServerNoTLS: the server offers no TLS, and the client requires it.
var ErrServerNoTLS = errors.New("mysqlproto: server does not support TLS")

// DefaultClientCapability is what the internal client asks for.
const DefaultClientCapability = ClientLongPassword | ClientLongFlag | ClientProtocol41 |
	ClientTransactions | ClientSecureConnection | ClientMultiResults |
	ClientPSMultiResults | ClientPluginAuth | ClientPluginAuthLenEncData |
	ClientConnectAttrs | ClientSessionTrack | ClientFoundRows

// Client is a minimal MySQL client for obgate's internal SQL (cluster
// metadata, probes), the simulator and tests. It reads whole result sets into
// memory, so it is meant for small results. A Client is used by one
// goroutine at a time.
type Client struct {
	conn      net.Conn
	br        *bufio.Reader
	pio       *PacketIO
	Handshake *Handshake
	// Caps are the capabilities in force (client's request & server's offer).
	Caps   Capability
	Status ServerStatus
	// LoginOK is the OK packet that ended the login (SessionState copied).
	LoginOK OK
}

// Dial connects to addr and logs in.
func Dial(ctx context.Context, addr string, opts ClientOptions) (*Client, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	c, err := NewClient(conn, opts)
	if err != nil {
		conn.Close()
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	return c, nil
}

// NewClient logs in over an established connection. The caller sets any
// deadline on conn.
func NewClient(conn net.Conn, opts ClientOptions) (*Client, error) {
	c := &Client{conn: conn, br: bufio.NewReaderSize(conn, 16<<10)}
	c.pio = NewPacketIO(c.br, conn)
	if opts.MaxPacket > 0 {
		c.pio.SetMaxPacket(opts.MaxPacket)
	}
	if err := c.login(opts); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Client) login(opts ClientOptions) error {
	greeting, err := c.pio.ReadPacket()
	if err != nil {
		return fmt.Errorf("read handshake: %w", err)
	}
	if len(greeting) > 0 && greeting[0] == ERRHeader {
		e, _ := ParseERR(greeting)
		return SQLErrorFromERR(e)
	}
	h, err := ParseHandshake(greeting)
	if err != nil {
		return err
	}
	c.Handshake = h
	want := opts.Capability
	if want == 0 {
		want = DefaultClientCapability
	}
	if opts.Database != "" {
		want |= ClientConnectWithDB
	}
	c.Caps = want & (h.Capability | ClientMySQL)
	if !h.Capability.Has(ClientMySQL) {
		c.Caps &^= ClientMySQL
	}
	charset := opts.Charset
	if charset == 0 {
		charset = byte(CharsetUTF8MB4)
	}
	if opts.TLS != nil && !h.Capability.Has(ClientSSL) && !opts.TLSOptional {
		return ErrServerNoTLS
	}
	if opts.TLS != nil && h.Capability.Has(ClientSSL) {
		c.Caps |= ClientSSL
		if err := c.pio.WritePacketFlush(AppendSSLRequest(nil, c.Caps, 1<<24, charset)); err != nil {
			return err
		}
		tc := tls.Client(c.conn, opts.TLS)
		if err := tc.Handshake(); err != nil {
			return err
		}
		c.conn = tc
		c.br = bufio.NewReaderSize(tc, 16<<10)
		seq := c.pio.Sequence()
		c.pio = NewPacketIO(c.br, tc)
		c.pio.SetSequence(seq)
	}
	plugin := h.AuthPlugin
	if plugin == "" {
		plugin = AuthNativePassword
	}
	auth, err := c.authResponse(plugin, h.AuthData, opts)
	if err != nil {
		return err
	}
	resp := &HandshakeResponse{
		Capability:    c.Caps,
		MaxPacketSize: 1 << 24,
		Charset:       charset,
		User:          opts.User,
		AuthResponse:  auth,
		Database:      opts.Database,
		AuthPlugin:    plugin,
		Attrs:         opts.Attrs,
	}
	if opts.OnHandshake != nil {
		opts.OnHandshake(h, resp)
	}
	if err := c.pio.WritePacketFlush(resp.Append(nil)); err != nil {
		return err
	}
	return c.finishAuth(plugin, h.AuthData, opts)
}

func (c *Client) authResponse(plugin string, scramble []byte, opts ClientOptions) ([]byte, error) {
	switch plugin {
	case AuthNativePassword:
		if len(opts.PasswordStage1) > 0 {
			return NativeTokenFromStage1(scramble, opts.PasswordStage1), nil
		}
		return NativeToken(scramble, []byte(opts.Password)), nil
	case AuthCachingSha2:
		return CachingSha2Token(scramble, []byte(opts.Password)), nil
	case AuthClearPassword:
		return append([]byte(opts.Password), 0), nil
	}
	return nil, fmt.Errorf("mysqlproto: unsupported auth plugin %q", plugin)
}

func (c *Client) finishAuth(plugin string, scramble []byte, opts ClientOptions) error {
	for range 8 {
		p, err := c.pio.ReadPacket()
		if err != nil {
			return fmt.Errorf("read auth result: %w", err)
		}
		if len(p) == 0 {
			return ErrMalformed
		}
		switch p[0] {
		case OKHeader:
			ok, good := ParseOK(p, c.Caps)
			if !good {
				return ErrMalformed
			}
			ok.Info = append([]byte(nil), ok.Info...)
			ok.SessionState = append([]byte(nil), ok.SessionState...)
			c.LoginOK, c.Status = ok, ok.Status
			return nil
		case ERRHeader:
			e, _ := ParseERR(p)
			return SQLErrorFromERR(e)
		case AuthSwitchRequestHeader:
			sw, good := ParseAuthSwitchRequest(p)
			if !good {
				return ErrMalformed
			}
			plugin, scramble = sw.Plugin, append([]byte(nil), sw.Data...)
			auth, err := c.authResponse(plugin, scramble, opts)
			if err != nil {
				return err
			}
			if err := c.pio.WritePacketFlush(auth); err != nil {
				return err
			}
		case AuthMoreDataHeader:
			if plugin != AuthCachingSha2 || len(p) < 2 {
				return ErrMalformed
			}
			switch p[1] {
			case CachingSha2FastAuthOK:
				// OK follows.
			case CachingSha2FullAuth:
				if _, isTLS := c.conn.(*tls.Conn); isTLS {
					err = c.pio.WritePacketFlush(append([]byte(opts.Password), 0))
				} else {
					err = c.pio.WritePacketFlush([]byte{CachingSha2RequestKey})
				}
				if err != nil {
					return err
				}
			default:
				// The server's public key, sent after our request.
				enc, err := EncryptPassword([]byte(opts.Password), scramble, p[1:])
				if err != nil {
					return err
				}
				if err := c.pio.WritePacketFlush(enc); err != nil {
					return err
				}
			}
		default:
			return ErrMalformed
		}
	}
	return errors.New("mysqlproto: authentication did not finish")
}

// Conn returns the underlying connection.
func (c *Client) Conn() net.Conn { return c.conn }

// Reader returns the buffered reader in front of Conn; bytes it holds have
// been read from the connection already.
func (c *Client) Reader() *bufio.Reader { return c.br }

// ConnectionID is the server's id for this session.
func (c *Client) ConnectionID() uint32 { return c.Handshake.ConnectionID }

// Close sends COM_QUIT and closes the connection.
func (c *Client) Close() error {
	c.pio.ResetSequence()
	c.pio.WritePacket([]byte{byte(ComQuit)})
	_ = c.pio.Flush()
	return c.conn.Close()
}

// Result is a materialised query result. A NULL value is a nil slice; an
// empty string is a non-nil empty slice.
type Result struct {
	Columns      []Column
	Rows         [][][]byte
	AffectedRows uint64
	LastInsertID uint64
	Status       ServerStatus
	Warnings     uint16
	// SessionState holds the session-state entries of the final OK, copied.
	SessionState []byte
}

// String returns row i's value of the named column ("" when NULL or missing).
func (r *Result) String(row int, column string) string {
	for i, c := range r.Columns {
		if c.Name == column && row < len(r.Rows) {
			return string(r.Rows[row][i])
		}
	}
	return ""
}

// Query runs one statement and returns its first result; further results of
// a multi-statement query are read and dropped.
func (c *Client) Query(query string) (*Result, error) {
	c.pio.ResetSequence()
	payload := make([]byte, 0, len(query)+1)
	payload = append(payload, byte(ComQuery))
	payload = append(payload, query...)
	if err := c.pio.WritePacketFlush(payload); err != nil {
		return nil, err
	}
	res, err := c.readResult()
	if err != nil {
		return nil, err
	}
	for c.Status.Has(StatusMoreResultsExists) {
		if _, err := c.readResult(); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// Exec runs a statement that returns no rows.
func (c *Client) Exec(query string) (*Result, error) { return c.Query(query) }

// Ping sends COM_PING.
func (c *Client) Ping() error {
	c.pio.ResetSequence()
	if err := c.pio.WritePacketFlush([]byte{byte(ComPing)}); err != nil {
		return err
	}
	_, err := c.readResult()
	return err
}

// readResult reads one result: an OK, an ERR, or a text result set.
func (c *Client) readResult() (*Result, error) {
	p, err := c.pio.ReadPacket()
	if err != nil {
		return nil, err
	}
	if len(p) == 0 {
		return nil, ErrMalformed
	}
	switch p[0] {
	case OKHeader:
		ok, good := ParseOK(p, c.Caps)
		if !good {
			return nil, ErrMalformed
		}
		c.Status = ok.Status
		return &Result{AffectedRows: ok.AffectedRows, LastInsertID: ok.LastInsertID,
			Status: ok.Status, Warnings: ok.Warnings,
			SessionState: append([]byte(nil), ok.SessionState...)}, nil
	case ERRHeader:
		e, _ := ParseERR(p)
		c.Status &^= StatusMoreResultsExists
		return nil, SQLErrorFromERR(e)
	case LocalInfileHeader:
		// Refuse: send an empty file.
		if err := c.pio.WritePacketFlush(nil); err != nil {
			return nil, err
		}
		return c.readResult()
	}
	n, _, good := ReadLenEncInt(p, 0)
	if !good || n == 0 || n > MaxColumns {
		return nil, ErrMalformed
	}
	// The count is a claim until the definitions arrive: the slice grows
	// with them. Later per-row slices of n entries are sized by counted,
	// received definitions.
	res := &Result{Columns: make([]Column, 0, min(n, 64))}
	for range n {
		p, err := c.pio.ReadPacket()
		if err != nil {
			return nil, err
		}
		col, good := ParseColumn(p)
		if !good {
			return nil, ErrMalformed
		}
		res.Columns = append(res.Columns, col)
	}
	if !c.Caps.Has(ClientDeprecateEOF) {
		p, err := c.pio.ReadPacket()
		if err != nil {
			return nil, err
		}
		if !IsEOFPacket(p) {
			return nil, ErrUnexpectedPacket
		}
	}
	nulls := make([]bool, n)
	for {
		p, err := c.pio.ReadPacket()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if len(p) > 0 && IsResultSetTerminator(p[0], len(p), c.Caps.Has(ClientDeprecateEOF)) {
			if p[0] == ERRHeader {
				e, _ := ParseERR(p)
				c.Status &^= StatusMoreResultsExists
				return nil, SQLErrorFromERR(e)
			}
			if c.Caps.Has(ClientDeprecateEOF) {
				ok, _ := ParseOK(p, c.Caps)
				c.Status, res.Warnings = ok.Status, ok.Warnings
			} else {
				eof, _ := ParseEOF(p)
				c.Status, res.Warnings = eof.Status, eof.Warnings
			}
			res.Status = c.Status
			return res, nil
		}
		row := make([][]byte, n)
		if !ReadTextRow(p, row, nulls) {
			return nil, ErrMalformed
		}
		for i := range row {
			if !nulls[i] {
				row[i] = append(make([]byte, 0, len(row[i])), row[i]...)
			}
		}
		res.Rows = append(res.Rows, row)
	}
}
