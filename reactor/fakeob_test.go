package reactor_test

import (
	"net"
	"strings"
	"testing"

	"obgate/mysqlproto"
)

// fakeOB is a one-node OceanBase cluster in process, just enough for
// obgate in OceanBase mode: the metadata queries obgate runs as
// proxyro@sys (plain MySQL protocol) are answered with one zone, one
// server (itself) and tenant fakeOBTenant; any other login is granted OB
// 2.0 and gets, for every COM_QUERY, the same precomputed one-row result
// in one frame, and an OK for anything else. Its statement loop allocates
// nothing, so that allocations measured through obgate are obgate's.
type fakeOB struct {
	fakeListener
	greeting []byte // handshake payload
	response []byte // packets of the result answering any COM_QUERY (seq 1 on)
	ok       []byte // packet of an OK (seq 1)
}

const (
	fakeOBCluster = "fakeob"
	fakeOBTenant  = "test"
	fakeOBConnID  = 7
)

func startFakeOB(tb testing.TB) *fakeOB {
	tb.Helper()
	h := mysqlproto.Handshake{ServerVersion: "5.7.25-OceanBase-v4.2.1.0", ConnectionID: fakeOBConnID, Capability: fwdCaps,
		Charset: byte(mysqlproto.CharsetUTF8MB4), Status: mysqlproto.StatusAutocommit,
		AuthData: []byte("abcdefghijklmnopqrst"), AuthPlugin: mysqlproto.AuthNativePassword}
	f := &fakeOB{}
	f.greeting = h.Append(nil)
	rs := mysqlproto.ResultSet{Columns: []mysqlproto.Column{mysqlproto.BigintColumn("1")}, Rows: [][]any{{1}}}
	f.response, _ = rs.AppendPackets(nil, 1, fwdCaps, mysqlproto.StatusAutocommit)
	f.ok, _ = mysqlproto.AppendPacket(nil, 1, mysqlproto.AppendOK(nil, mysqlproto.OK{Status: mysqlproto.StatusAutocommit}, fwdCaps))
	listenFake(tb, &f.fakeListener, f.serve)
	return f
}

// serve logs a connection in and answers its commands.
func (f *fakeOB) serve(c net.Conn) {
	pio := mysqlproto.NewPacketIO(c, c)
	if err := pio.WritePacketFlush(f.greeting); err != nil {
		return
	}
	raw, err := pio.ReadPacket()
	if err != nil {
		return
	}
	login, err := mysqlproto.ParseHandshakeResponse(raw)
	if err != nil {
		return
	}
	if strings.HasPrefix(login.User, "proxyro@") {
		f.serveMeta(c, pio)
		return
	}
	state := mysqlproto.AppendSystemVariableState(nil, mysqlproto.OBCapabilityFlagVar,
		mysqlproto.FormatOBCapability(mysqlproto.OBCapProtocolV2|mysqlproto.OBCapProxyNewExtraInfo))
	ok := mysqlproto.AppendOK(nil, mysqlproto.OK{Status: mysqlproto.StatusAutocommit | mysqlproto.StatusSessionStateChange,
		SessionState: state}, login.Capability)
	if err := pio.WritePacketFlush(ok); err != nil {
		return
	}
	f.serveOB20(c)
}

// serveOB20 answers OB 2.0 requests. The loop allocates nothing: the
// framer's buffers are reused.
func (f *fakeOB) serveOB20(c net.Conn) {
	fr := mysqlproto.NewOB20Framer(c, c, mysqlproto.FramerServer, fakeOBConnID)
	for {
		_, _, packets, err := fr.ReadFrame()
		if err != nil {
			return
		}
		if len(packets) < mysqlproto.HeaderLen+1 {
			return
		}
		out := f.ok
		switch mysqlproto.Command(packets[mysqlproto.HeaderLen]) {
		case mysqlproto.ComQuit:
			return
		case mysqlproto.ComQuery:
			out = f.response
		}
		if err := fr.WriteFrame(out, nil, mysqlproto.OB20LastPacket); err != nil {
			return
		}
	}
}

// serveMeta answers obgate's metadata queries (route/sql.go) as a
// one-node cluster whose only server is the fake itself.
func (f *fakeOB) serveMeta(c net.Conn, pio *mysqlproto.PacketIO) {
	if err := pio.WritePacketFlush(mysqlproto.AppendOK(nil, mysqlproto.OK{Status: mysqlproto.StatusAutocommit}, fwdCaps)); err != nil {
		return
	}
	host, port, _ := net.SplitHostPort(f.addr())
	for {
		pio.ResetSequence()
		p, err := pio.ReadPacket()
		if err != nil || len(p) == 0 || mysqlproto.Command(p[0]) == mysqlproto.ComQuit {
			return
		}
		q := string(p[1:])
		var rs *mysqlproto.ResultSet
		table := func(cols []string, row ...any) *mysqlproto.ResultSet {
			r := &mysqlproto.ResultSet{Rows: [][]any{row}}
			for _, name := range cols {
				r.Columns = append(r.Columns, mysqlproto.VarcharColumn(name))
			}
			return r
		}
		switch {
		case mysqlproto.Command(p[0]) != mysqlproto.ComQuery:
		case strings.Contains(q, "ob_version()"):
			rs = table([]string{"cluster_version"}, "4.2.1.0")
		case strings.Contains(q, "parameters.value as cluster"):
			rs = table([]string{"cluster", "zone", "zone_status", "server_status", "region", "spare4", "spare5",
				"svr_ip", "svr_port", "rpc_port", "start_service_time", "stop_time"},
				fakeOBCluster, "zone1", "ACTIVE", "ACTIVE", "r1", "zone1", "ReadWrite", host, port, "2882", "1", "0")
		case strings.Contains(q, "DBA_OB_ZONES"):
			rs = table([]string{"zone", "status", "is_merging", "region", "spare4", "spare5"},
				"zone1", "ACTIVE", "0", "r1", "zone1", "ReadWrite")
		case strings.Contains(q, "__all_virtual_proxy_schema"):
			rs = table([]string{"svr_ip", "sql_port", "role", "svr_port"}, host, port, "1", "2882")
		case strings.Contains(q, "DBA_OB_SERVERS"):
			rs = table([]string{"svr_ip", "rpc_port", "svr_port", "zone", "status", "start_service_time", "stop_time"},
				host, "2882", port, "zone1", "ACTIVE", "1", "0")
		case strings.Contains(q, "DBA_OB_TENANTS"):
			rs = table([]string{"tenant_name", "tenant_id", "locality", "previous_locality", "primary_zone", "status"},
				fakeOBTenant, "1002", "FULL{1}@zone1", nil, "RANDOM", "NORMAL")
		}
		var out []byte
		if rs != nil {
			out, _ = rs.AppendPackets(nil, 1, fwdCaps, mysqlproto.StatusAutocommit)
		} else {
			out, _ = mysqlproto.AppendPacket(nil, 1, mysqlproto.AppendERR(nil, 1146, "42S02", "fakeob: no such table"))
		}
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}
