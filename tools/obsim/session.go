package obsim

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"obgate/mysqlproto"
)

// session is one client connection to a node and its MariaDB connection.
// One goroutine runs it (run); kill may be called from any goroutine.
type session struct {
	n    *Node
	c    *Cluster
	conn net.Conn
	// stream is what the login and the framing read and write: conn, or
	// its TLS layer once the client asked for TLS. kill closes conn.
	stream net.Conn
	// cipher is the TLS cipher suite's name; empty in plain text.
	cipher string
	id     uint32

	// timeZone is the session's time_zone (the cluster's until a SET
	// changes it), in which TIMESTAMP partition keys are read; nil when
	// it is SYSTEM. pendingTZ is a SET's new value until the SET succeeds.
	timeZone  *time.Location
	pendingTZ *string

	done     chan struct{}
	killOnce sync.Once

	br       *bufio.Reader
	pio      *mysqlproto.PacketIO
	out      clientOut
	protocol string // mysql, ob20, compressed
	scramble []byte

	caps       mysqlproto.Capability // negotiated with the client
	obCaps     mysqlproto.OBCapability
	clientType string // proxy or direct
	obClient   bool   // ODP or an OceanBase driver: gets user variables in OKs
	user       string // MariaDB user
	tenant     *tenantModel
	db         string
	status     mysqlproto.ServerStatus
	vars       map[string]string
	userVars   map[string]string // user variable → literal last reported
	lastHit    bool

	// Ids as an OBServer gives them (procs.go): the client session id
	// (when hasClientID) and the proxy's __proxy_connection_id.
	clientID    uint32
	hasClientID bool
	proxySessID uint64
	proc        procInfo

	mu   sync.Mutex // guards be for kill
	be   *mysqlproto.Client
	beRd *bufio.Reader
	beW  []byte
	rbuf []byte

	scanner  mysqlproto.ResponseScanner
	stmts    map[uint32]*prepared // prepared.go
	lastStmt uint32               // the id prepared last
}

func newSession(n *Node, conn net.Conn) *session {
	return &session{n: n, c: n.c, conn: conn, stream: conn, id: n.c.nextSessionID(), done: make(chan struct{}), timeZone: n.c.defaultTimeZone(),
		protocol: "mysql", clientType: "direct", vars: map[string]string{}, userVars: map[string]string{}, lastHit: true,
		stmts: map[uint32]*prepared{}}
}

// kill ends the session: both connections are closed and blocked waits
// return.
func (s *session) kill() {
	s.killOnce.Do(func() {
		close(s.done)
		s.conn.Close()
		s.mu.Lock()
		if s.be != nil {
			s.be.Conn().Close()
		}
		s.mu.Unlock()
	})
}

// killed reports whether kill ran: a killed session is gone for every
// other session at once, even before its goroutine has finished.
func (s *session) killed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func (s *session) run() {
	defer s.kill()
	if !s.n.gate(s.done, false) {
		return
	}
	if err := s.login(); err != nil {
		s.c.logger.Debug("login failed", "node", s.n.name, "session", s.id, "err", err)
		return
	}
	for {
		s.pio.ResetSequence()
		pkt, err := s.pio.ReadPacket()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.c.logger.Debug("read", "node", s.n.name, "session", s.id, "err", err)
			}
			return
		}
		if len(pkt) == 0 {
			return
		}
		if !s.n.gate(s.done, true) {
			return
		}
		if err := s.dispatch(pkt); err != nil {
			if !errors.Is(err, errQuit) {
				s.c.logger.Debug("session ends", "node", s.n.name, "session", s.id, "err", err)
			}
			return
		}
	}
}

var errQuit = errors.New("client quit")

// serverCapabilities are the flags a node offers: what obsim can carry to
// MariaDB unchanged, plus compression, which the node handles itself, and
// TLS when Config.TLS is set (the node ends it). No MariaDB extensions
// (ClientMySQL stays set).
const serverCapabilities = (mysqlproto.ProxyCapabilities & 0xffffffff) | mysqlproto.ClientCompress | mysqlproto.ClientLongPassword

// backendCapabilities are the client flags copied to the MariaDB login, so
// that MariaDB's answers have the layout the client expects.
const backendCapabilities = mysqlproto.ClientLongPassword | mysqlproto.ClientFoundRows | mysqlproto.ClientLongFlag |
	mysqlproto.ClientNoSchema | mysqlproto.ClientODBC | mysqlproto.ClientLocalFiles | mysqlproto.ClientIgnoreSpace |
	mysqlproto.ClientProtocol41 | mysqlproto.ClientInteractive | mysqlproto.ClientIgnoreSIGPIPE |
	mysqlproto.ClientTransactions | mysqlproto.ClientReserved | mysqlproto.ClientSecureConnection |
	mysqlproto.ClientMultiStatements | mysqlproto.ClientMultiResults | mysqlproto.ClientPSMultiResults |
	mysqlproto.ClientPluginAuth | mysqlproto.ClientPluginAuthLenEncData |
	mysqlproto.ClientCanHandleExpiredPasswords | mysqlproto.ClientSessionTrack | mysqlproto.ClientDeprecateEOF

// obServerCapabilities are the OceanBase capabilities a node grants when
// asked: OB20 framing with new-format extra info, the compressed
// ("checksum") protocol, partition-table and weak-read awareness, change
// user, LOAD DATA LOCAL and client session ids (procs.go).
const obServerCapabilities = mysqlproto.OBCapPartitionTable | mysqlproto.OBCapChangeUser |
	mysqlproto.OBCapReadWeak | mysqlproto.OBCapChecksum | mysqlproto.OBCapProtocolV2 |
	mysqlproto.OBCapProxyNewExtraInfo | mysqlproto.OBCapLocalFiles | mysqlproto.OBCapClientSessionIDV2 |
	mysqlproto.OBCapExtraOKPacketForStatistics

// identity is a parsed login name.
type identity struct {
	user, tenant, cluster string
	clusterID             int64
	hasClusterID          bool
}

// parseIdentity splits user@tenant#cluster:id; tenant defaults to sys.
func parseIdentity(name string) identity {
	var id identity
	rest := name
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		cl := rest[i+1:]
		rest = rest[:i]
		if j := strings.LastIndexByte(cl, ':'); j >= 0 {
			if v, err := strconv.ParseInt(cl[j+1:], 10, 64); err == nil {
				id.clusterID, id.hasClusterID = v, true
				cl = cl[:j]
			}
		}
		id.cluster = cl
	}
	if i := strings.IndexByte(rest, '@'); i >= 0 {
		id.user, id.tenant = rest[:i], rest[i+1:]
	} else {
		id.user = rest
	}
	if id.tenant == "" {
		id.tenant = "sys"
	}
	return id
}

// login runs the handshake, authenticates the client as OceanBase does,
// logs into MariaDB as the same user and switches to the negotiated
// framing.
func (s *session) login() error {
	s.br = bufio.NewReaderSize(s.conn, 16<<10)
	s.pio = mysqlproto.NewPacketIO(s.br, s.conn)
	s.scramble = mysqlproto.NewScramble()
	hs := &mysqlproto.Handshake{
		ServerVersion: "5.7.25-OceanBase_CE-v" + s.c.topo.Version,
		ConnectionID:  s.id,
		Capability:    s.offered(),
		Charset:       byte(mysqlproto.CharsetUTF8MB4),
		Status:        mysqlproto.StatusAutocommit,
		AuthData:      s.scramble,
		AuthPlugin:    mysqlproto.AuthNativePassword,
	}
	if err := s.pio.WritePacketFlush(hs.Append(nil)); err != nil {
		return err
	}
	_ = s.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	raw, err := s.pio.ReadPacket()
	if err != nil {
		return err
	}
	if mysqlproto.IsSSLRequest(raw) {
		if s.c.cfg.TLS == nil {
			return s.loginError(mysqlproto.NewSQLError(mysqlproto.ERHandshakeError, "obsim does not support TLS"), nil)
		}
		if raw, err = s.startTLS(); err != nil {
			return err
		}
	}
	resp, err := mysqlproto.ParseHandshakeResponse(raw)
	if err != nil {
		return s.loginError(mysqlproto.NewSQLError(mysqlproto.ERHandshakeError, "Bad handshake"), nil)
	}
	s.caps = resp.Capability & s.offered()
	token := resp.AuthResponse
	switchedAuth := false
	if s.caps.Has(mysqlproto.ClientPluginAuth) && resp.AuthPlugin != "" && resp.AuthPlugin != mysqlproto.AuthNativePassword {
		sw := mysqlproto.AuthSwitchRequest{Plugin: mysqlproto.AuthNativePassword, Data: s.scramble}
		if err := s.pio.WritePacketFlush(sw.Append(nil)); err != nil {
			return err
		}
		if token, err = s.pio.ReadPacket(); err != nil {
			return err
		}
		token = append([]byte(nil), token...)
		switchedAuth = true
	}
	_ = s.conn.SetReadDeadline(time.Time{})

	id := parseIdentity(resp.User)
	ct, _ := resp.Attr(mysqlproto.AttrMySQLClientType)
	if ct == mysqlproto.ClientTypeOBProxy {
		s.clientType = "proxy"
	}
	s.obClient = isOBClientType(ct)
	s.user = id.user
	// OceanBase clients pass the ids of the connection they serve.
	var attrClientID uint32
	hasAttrClientID := false
	if s.obClient {
		if v, ok := resp.Attr(mysqlproto.AttrProxyConnectionID); ok {
			s.proxySessID, _ = strconv.ParseUint(v, 10, 64)
		}
		if v, ok := resp.Attr(mysqlproto.AttrClientSessionID); ok {
			if cid, err := strconv.ParseUint(v, 10, 32); err == nil {
				attrClientID, hasAttrClientID = uint32(cid), true
			}
		}
	}
	entry := LogEntry{Command: "login", SQL: resp.User, User: id.user, Tenant: id.tenant, Database: resp.Database}
	entry.ClientIP, _ = resp.Attr(mysqlproto.AttrClientIP)
	entry.TLS = s.cipher != ""

	// The scramble the client's token was computed against.
	verifyScramble := s.scramble
	if s.clientType == "proxy" && !switchedAuth {
		verifyScramble = []byte(mysqlproto.OBProxyScramble)
		if xs, ok := resp.Attr(mysqlproto.AttrProxyScramble); ok && len(xs) == mysqlproto.ScrambleLen {
			verifyScramble = make([]byte, mysqlproto.ScrambleLen)
			for i := range verifyScramble {
				verifyScramble[i] = xs[i] ^ s.scramble[i]
			}
		}
	}

	// Cluster checks.
	cluster := id.cluster
	if v, ok := resp.Attr(mysqlproto.AttrClusterName); ok && v != "" {
		cluster = v
	}
	if cluster != "" && cluster != s.c.topo.Cluster {
		return s.loginError(mysqlproto.NewSQLError(mysqlproto.OBClusterNoMatch, "cluster name does not match"), &entry)
	}
	if v, ok := resp.Attr(mysqlproto.AttrClusterID); ok && v != "" {
		if cid, err := strconv.ParseInt(v, 10, 64); err == nil {
			id.clusterID, id.hasClusterID = cid, true
		}
	}
	if id.hasClusterID && id.clusterID != s.c.topo.ClusterID {
		return s.loginError(mysqlproto.NewSQLError(mysqlproto.OBClusterNoMatch, "cluster id does not match"), &entry)
	}
	s.c.mu.Lock()
	s.tenant = s.c.tenantByName(id.tenant)
	s.c.mu.Unlock()
	denied := mysqlproto.NewSQLError(mysqlproto.ERAccessDenied, "Access denied for user '%s'@'%s' (using password: %s)",
		id.user, nodeIP, yesNo(len(token) > 0))
	if s.tenant == nil {
		return s.loginError(denied, &entry)
	}
	entry.Tenant = s.tenant.name
	if !s.tenant.onZone(s.n.zone) {
		return s.loginError(mysqlproto.NewSQLError(mysqlproto.OBTenantNotInServer, "Tenant not in this server"), &entry)
	}
	if e := s.c.faults.match(s.n.name, resp.User, true); e != nil {
		entry.Injected = true
		return s.loginError(e, &entry)
	}
	stage1, ok := s.verifyPassword(id.user, verifyScramble, token)
	if !ok {
		return s.loginError(denied, &entry)
	}
	// As an OBServer keeps it for the connection: COM_CHANGE_USER tokens
	// are checked against the scramble the login's token was.
	s.scramble = verifyScramble

	// Log into MariaDB as the same user.
	want := (resp.Capability & backendCapabilities) | mysqlproto.ClientProtocol41 | mysqlproto.ClientSecureConnection |
		mysqlproto.ClientPluginAuth | mysqlproto.ClientPluginAuthLenEncData | mysqlproto.ClientLongPassword
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	be, err := mysqlproto.Dial(ctx, s.c.mariaAddr, mysqlproto.ClientOptions{User: id.user, PasswordStage1: stage1,
		Database: resp.Database, Capability: want, Charset: resp.Charset})
	cancel()
	if err != nil {
		if se, ok := mysqlproto.AsSQLError(err); ok {
			return s.loginError(se, &entry)
		}
		return s.loginError(mysqlproto.NewSQLError(mysqlproto.ERUnknownError, "obsim: MariaDB: %v", err), &entry)
	}
	s.mu.Lock()
	s.be, s.beRd = be, be.Reader()
	killed := false
	select {
	case <-s.done:
		killed = true
	default:
	}
	s.mu.Unlock()
	if killed {
		be.Conn().Close()
		return net.ErrClosed
	}
	if err := trackSessionState(be); err != nil {
		return s.loginError(mysqlproto.NewSQLError(mysqlproto.ERUnknownError, "obsim: MariaDB: %v", err), &entry)
	}
	s.db = resp.Database
	s.status = be.Status

	// Negotiate OceanBase capabilities.
	var state []byte
	var asked mysqlproto.OBCapability
	if v, ok := resp.Attr(mysqlproto.AttrProxyCapabilityFlag); ok {
		var good bool
		if asked, good = mysqlproto.ParseOBCapability(v); good && s.caps.Has(mysqlproto.ClientSessionTrack) {
			s.obCaps = asked & obServerCapabilities
			if s.obCaps.Has(mysqlproto.OBCapProtocolV2) {
				s.obCaps &^= mysqlproto.OBCapChecksum
			}
			state = mysqlproto.AppendSystemVariableState(state, mysqlproto.OBCapabilityFlagVar, mysqlproto.FormatOBCapability(s.obCaps))
		}
	}
	s.setClientID(asked&obServerCapabilities, attrClientID, hasAttrClientID)
	// The login is logged and the session listed (SHOW PROCESSLIST, KILL)
	// before the client sees the OK, so that it can be found as soon as
	// the client is logged in.
	switch {
	case s.obCaps.Has(mysqlproto.OBCapProtocolV2):
		s.protocol = "ob20"
	case s.obCaps.Has(mysqlproto.OBCapChecksum) || s.caps.Has(mysqlproto.ClientCompress):
		s.protocol = "compressed"
	}
	entry.Result, entry.Local = "ok", true
	s.record(entry, time.Now())
	s.procReady()
	ok2 := mysqlproto.OK{Status: s.status, SessionState: state}
	if err := s.pio.WritePacketFlush(mysqlproto.AppendOK(nil, ok2, s.caps)); err != nil {
		return err
	}
	switch {
	case s.obCaps.Has(mysqlproto.OBCapProtocolV2):
		f := mysqlproto.NewOB20Framer(s.br, corruptWriter{s.stream, s.n}, mysqlproto.FramerServer, s.id)
		s.out.ob20 = f
		s.pio = mysqlproto.NewPacketIO(f, nil)
	case s.obCaps.Has(mysqlproto.OBCapChecksum):
		f := mysqlproto.NewCompressedFramer(s.br, s.stream, mysqlproto.FramerServer, mysqlproto.CompressStored)
		s.out.comp = f
		s.pio = mysqlproto.NewPacketIO(f, nil)
	case s.caps.Has(mysqlproto.ClientCompress):
		f := mysqlproto.NewCompressedFramer(s.br, s.stream, mysqlproto.FramerServer, 6)
		s.out.comp = f
		s.pio = mysqlproto.NewPacketIO(f, nil)
	default:
		s.pio = mysqlproto.NewPacketIO(s.br, nil)
	}
	s.out.w = s.stream
	return nil
}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}

// loginError answers the handshake response with an ERR and logs it.
func (s *session) loginError(e *mysqlproto.SQLError, entry *LogEntry) error {
	// Logged first: whoever sees the ERR may read the log at once.
	if entry != nil {
		entry.Result, entry.Code = "error", e.Code
		s.record(*entry, time.Now())
	}
	_ = s.pio.WritePacketFlush(e.AppendPacket(nil))
	return e
}

// verifyPassword checks a mysql_native_password token against the hash
// MariaDB stores for user and returns SHA1(password) for the MariaDB login.
func (s *session) verifyPassword(user string, scramble, token []byte) ([]byte, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var plugin, hash string
	err := s.c.admin.QueryRowContext(ctx, `SELECT plugin, IF(authentication_string <> '', authentication_string, Password)
		FROM mysql.user WHERE User = ? AND Host IN ('127.0.0.1', '%') ORDER BY Host = '127.0.0.1' DESC LIMIT 1`, user).Scan(&plugin, &hash)
	if err != nil {
		if !errors.Is(err, sql.ErrNoRows) {
			s.c.logger.Warn("password lookup", "user", user, "err", err)
		}
		return nil, false
	}
	if plugin != "" && plugin != mysqlproto.AuthNativePassword {
		return nil, false
	}
	if hash == "" {
		return nil, len(token) == 0
	}
	stage2, err := hex.DecodeString(strings.TrimPrefix(hash, "*"))
	if err != nil {
		return nil, false
	}
	return mysqlproto.RecoverNativeStage1(scramble, token, stage2)
}

// record adds an entry to the node's statement log.
func (s *session) record(e LogEntry, start time.Time) {
	e.Time = start
	e.Duration = time.Since(start)
	e.Node = s.n.name
	e.Session = s.id
	e.Client = s.clientType
	if e.User == "" {
		e.User = s.user
	}
	if e.Tenant == "" && s.tenant != nil {
		e.Tenant = s.tenant.name
	}
	if e.Database == "" {
		e.Database = s.db
	}
	e.Protocol = s.protocol
	s.n.log.add(e)
}
