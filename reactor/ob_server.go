package reactor

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"time"

	"obgate/mysqlproto"
	"obgate/reactor/backend"
	"obgate/reactor/sessvars"
)

// proxyCompatVersion is sent as __proxy_version: the ODP release whose wire
// conventions obgate follows. OBServers compare it to decide which proxy
// features they may use.
const proxyCompatVersion = "4.3.1.0"

// obRequestedCaps is the OceanBase capability set obgate asks servers for:
// ODP's default set (odp-behaviour.md §11.3, 10206039 for a plain MySQL
// client) without the features obgate does not implement, so that no
// server relies on them: reroute (12),
// server-side session sync (13, 16, 19), read-stale feedback (17),
// full-link trace (14, 18), compressed OB20 (22) and proxy feedback (23).
// Extra statistics OK packets (9) carry the partition-hit feedback of
// result sets; obgate reads and removes them (dropExtraOK).
const obRequestedCaps = mysqlproto.OBCapPartitionTable | mysqlproto.OBCapChangeUser |
	mysqlproto.OBCapReadWeak | mysqlproto.OBCapSafeWeakRead | mysqlproto.OBCapPLRoute |
	mysqlproto.OBCapLocalFiles | mysqlproto.OBCapExtraOKPacketForStatistics

// openServer opens a server session to addr and logs the client in with
// its saved login. first is the client's own login: it keeps the client's
// database; later server sessions log in without one and are synced
// afterwards. It returns the server's OK payload (copied).
func (o *obSession) openServer(ctx context.Context, addr string, first bool) (*backend.Conn, []byte, error) {
	s := o.s
	cfg := s.cfg
	be, h, pio, err := s.srv.dialer.Dial(ctx, o.cluster.Name(), addr)
	if err != nil {
		return nil, nil, err
	}
	resp := o.serverLogin(h, first)
	p, err := backend.OwnLogin(be, pio, resp, backend.LoginDeadline(ctx, cfg))
	if err != nil {
		return nil, nil, err
	}
	ok, good := mysqlproto.ParseOK(p, resp.Capability)
	if !good {
		be.Close()
		return nil, nil, mysqlproto.ErrMalformed
	}
	granted := grantedOBCaps(ok.SessionState)
	be.OBCaps = granted
	switch {
	case cfg.EnableOBProtocolV2 && granted.Has(mysqlproto.OBCapProtocolV2):
		fr := mysqlproto.NewOB20Framer(be.NetConn, be.NetConn, mysqlproto.FramerClient, h.ConnectionID)
		fr.SetNextRequestID(uint32(time.Now().UnixNano()) & 0xffffff)
		fr.SetMaxPayload(8 << 20)
		be.OB20 = fr
		be.Extra = traceInfo(hostOnly(s.client.addr), granted.Has(mysqlproto.OBCapProxyNewExtraInfo))
	case cfg.EnableCompressionProtocol && granted.Has(mysqlproto.OBCapChecksum):
		be.Comp = mysqlproto.NewCompressedFramer(be.NetConn, be.NetConn, mysqlproto.FramerClient, compressionLevel(cfg.CompressionAlgorithm))
	}
	be.Status = ok.Status
	be.Touch()
	if err := s.st.runInitSQL(be); err != nil {
		be.Close()
		return nil, nil, err
	}
	if !first {
		// A saved login starts with the server's defaults: nothing of the
		// client's state but what the login itself carried.
		be.Sync = sessvars.Synced{}
	}
	s.servers.Add(be)
	s.srv.servers.Add(be, s)
	return be, p, nil
}

// serverLogin builds the HandshakeResponse obgate sends a server: the
// client's login with the name user@tenant, the client's auth response
// (verifiable against obgate's scramble, or the scramble recovered from
// __proxy_scramble), and ODP's connection attributes in ODP's order.
func (o *obSession) serverLogin(h *mysqlproto.Handshake, first bool) *mysqlproto.HandshakeResponse {
	s := o.s
	cfg := s.cfg
	r := *o.clientLogin
	r.User = s.identity.User + "@" + o.tenant
	r.Capability = serverLoginCaps(r.Capability)
	if r.AuthPlugin == "" {
		r.AuthPlugin = mysqlproto.AuthNativePassword
	}
	if !first {
		r.Database = ""
		r.Capability &^= mysqlproto.ClientConnectWithDB
	}
	// With the client session id capability the server takes
	// __client_session_id (obgate's cs_id, the same on every server
	// session of the client) as the session's client session id, and
	// answers CONNECTION_ID() and SHOW PROCESSLIST with it and takes it in
	// KILL (oceanbase src/sql/session/ob_sql_session_mgr.cpp
	// create_session); without it CONNECTION_ID() is the server session's
	// own id, which changes whenever a statement goes to another server.
	// ODP asks for it only with client_session_id_version = 2; obgate asks
	// always, so that a client sees one id for its whole life, and
	// client_session_id_version only chooses the id's layout.
	caps := obRequestedCaps | mysqlproto.OBCapClientSessionIDV2
	switch {
	case cfg.EnableOBProtocolV2:
		caps |= mysqlproto.OBCapProtocolV2 | mysqlproto.OBCapProxyNewExtraInfo
	case cfg.EnableCompressionProtocol:
		caps |= mysqlproto.OBCapChecksum
	}
	attrs := make([]mysqlproto.ConnAttr, 0, len(o.clientLogin.Attrs)+14)
	clientIP := hostOnly(s.client.addr)
	for _, a := range o.clientLogin.Attrs {
		// The client's own OceanBase attributes pass, as many as leave
		// room for obgate's within what a server accepts.
		if len(a.Key) >= 11 && a.Key[:11] == "__ob_client" && len(attrs) < mysqlproto.MaxConnectAttrs-obgateAttrs {
			attrs = append(attrs, a)
		}
		// A __client_ip of the client's own would be what the servers'
		// IP allow lists check: taken only from peers trusted to speak for
		// their clients (load balancers, proxies: client_ip_trusted_list).
		if a.Key == mysqlproto.AttrClientIP && cfg.EnableClientIPCheckout && a.Value != "" &&
			cfg.ClientIPTrusted(ipOf(s.client.addr)) {
			clientIP = a.Value
		}
	}
	add := func(k, v string) { attrs = append(attrs, mysqlproto.ConnAttr{Key: k, Value: v}) }
	add(mysqlproto.AttrMySQLClientType, mysqlproto.ClientTypeOBProxy)
	add(mysqlproto.AttrConnectionID, strconv.FormatUint(uint64(h.ConnectionID), 10))
	add(mysqlproto.AttrProxyConnectionID, strconv.FormatUint(o.proxySessID, 10))
	if cfg.EnableClusterCheckout {
		add(mysqlproto.AttrClusterName, o.cluster.Name())
		if id := s.identity.ClusterID; id >= 0 {
			add(mysqlproto.AttrClusterID, strconv.FormatInt(id, 10))
		}
	}
	add(mysqlproto.AttrGlobalVarsVersion, "0")
	add(mysqlproto.AttrProxyCapabilityFlag, mysqlproto.FormatOBCapability(caps))
	// The scramble the client answered decides, not the setting now:
	// enable_proxy_scramble may have changed since the client's greeting.
	if !bytes.Equal(o.scramble, fixedScramble) && len(r.AuthResponse) > 0 {
		mix := make([]byte, len(o.scramble))
		for i := range mix {
			mix[i] = o.scramble[i]
			if i < len(h.AuthData) {
				mix[i] ^= h.AuthData[i]
			}
		}
		add(mysqlproto.AttrProxyScramble, string(mix))
	}
	if cfg.EnableClientIPCheckout {
		add(mysqlproto.AttrClientIP, clientIP)
	}
	add(mysqlproto.AttrProxyVersion, proxyCompatVersion)
	add("__client_addr_port", portOnly(s.client.addr))
	add(mysqlproto.AttrClientSessionID, strconv.FormatUint(uint64(s.id), 10))
	add("__client_connect_time", strconv.FormatInt(s.client.connectedAt.UnixMicro(), 10))
	r.Attrs = attrs
	return &r
}

// obgateAttrs bounds the connection attributes obgate adds to a server
// login (ODP's fourteen, with room to spare).
const obgateAttrs = 32

// serverLoginCaps are the capabilities obgate logs in to servers with: the
// client's, plus what the proxy protocol needs (connect attributes,
// session tracking, plugin auth), less what obgate does not carry to
// servers.
func serverLoginCaps(client mysqlproto.Capability) mysqlproto.Capability {
	c := (client | mysqlproto.ClientConnectAttrs | mysqlproto.ClientSessionTrack | mysqlproto.ClientPluginAuth) &^
		(mysqlproto.ClientSSL | mysqlproto.ClientCompress | mysqlproto.ClientDeprecateEOF |
			mysqlproto.ClientQueryAttributes | mysqlproto.ClientOptionalResultsetMetadata | mysqlproto.ClientZstdCompression)
	return c | mysqlproto.ClientMySQL
}

// grantedOBCaps reads ob_capability_flag from an auth OK's session state.
func grantedOBCaps(raw []byte) mysqlproto.OBCapability {
	it := mysqlproto.SessionStates(raw)
	for {
		typ, data, more := it.Next()
		if !more {
			return 0
		}
		if typ != mysqlproto.SessionTrackSystemVariables {
			continue
		}
		for pos := 0; pos < len(data); {
			name, value, next, ok := mysqlproto.ParseSystemVariable(data, pos)
			if !ok {
				break
			}
			pos = next
			if string(name) == mysqlproto.OBCapabilityFlagVar {
				c, _ := mysqlproto.ParseOBCapability(string(value))
				return c
			}
		}
	}
}

// compressionLevel reads compression_algorithm (zlib:N) for the compressed
// protocol; empty means ODP's default, stored zlib blocks (Adler-32
// integrity without deflate's CPU cost).
func compressionLevel(alg string) int {
	if len(alg) > 5 && alg[:5] == "zlib:" {
		if n, err := strconv.Atoi(alg[5:]); err == nil && n >= 0 && n <= 9 {
			return n
		}
	}
	return mysqlproto.CompressStored
}

// traceInfo builds the OB20 extra-info block obgate sends with each
// request: the client's address as trace info, in the format the server
// granted.
func traceInfo(clientIP string, newFormat bool) []byte {
	v := []byte("client_ip=" + clientIP)
	if newFormat {
		return mysqlproto.AppendOB20ExtraItem(nil, mysqlproto.OB20ExtraTraceInfo, v)
	}
	return mysqlproto.AppendOB20ExtraOldItem(nil, mysqlproto.OB20ExtraKeyTraceInfo, v)
}

func portOnly(hostport string) string {
	if _, p, err := net.SplitHostPort(hostport); err == nil {
		return p
	}
	return ""
}
