package reactor_test

import (
	"bytes"
	"net"
	"sync"
	"testing"

	"obgate/mysqlproto"
)

// hostileServer is a MySQL server in process that does what a broken or
// hostile server (or one an attacker controls) may do to a proxy's
// clients: ask for the password in clear, ask for a local file the
// client never offered. It records every byte obgate sent it after the
// login packet.
type hostileServer struct {
	fakeListener
	plugin string // the greeting's default auth plugin
	// afterLogin is the server's answer to the login packet, before any
	// OK: an auth switch or more-data request; nil answers OK at once.
	afterLogin []byte
	// onQuery answers every COM_QUERY; nil answers OK.
	onQuery []byte

	mu       sync.Mutex
	received []byte // what obgate sent after each login packet
}

func startHostileServer(tb testing.TB, h *hostileServer) *hostileServer {
	tb.Helper()
	if h.plugin == "" {
		h.plugin = mysqlproto.AuthNativePassword
	}
	listenFake(tb, &h.fakeListener, h.serve)
	return h
}

func (h *hostileServer) got() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]byte(nil), h.received...)
}

func (h *hostileServer) serve(c net.Conn) {
	pio := mysqlproto.NewPacketIO(c, c)
	g := mysqlproto.Handshake{ServerVersion: "8.0.40-hostile", ConnectionID: 99,
		Capability: mysqlproto.ProxyCapabilities | mysqlproto.ClientSSL, Charset: byte(mysqlproto.CharsetUTF8MB4),
		Status: mysqlproto.StatusAutocommit, AuthData: []byte("0123456789abcdefghij"), AuthPlugin: h.plugin}
	if pio.WritePacketFlush(g.Append(nil)) != nil {
		return
	}
	if _, err := pio.ReadPacket(); err != nil {
		return
	}
	if h.afterLogin != nil {
		if pio.WritePacketFlush(h.afterLogin) != nil {
			return
		}
		p, err := pio.ReadPacket()
		if err != nil {
			return
		}
		h.mu.Lock()
		h.received = append(h.received, p...)
		h.mu.Unlock()
	}
	ok := mysqlproto.AppendOK(nil, mysqlproto.OK{Status: mysqlproto.StatusAutocommit}, mysqlproto.ProxyCapabilities)
	if pio.WritePacketFlush(ok) != nil {
		return
	}
	for {
		pio.ResetSequence()
		p, err := pio.ReadPacket()
		if err != nil || len(p) == 0 || mysqlproto.Command(p[0]) == mysqlproto.ComQuit {
			return
		}
		answer := ok
		if mysqlproto.Command(p[0]) == mysqlproto.ComQuery && h.onQuery != nil {
			answer = h.onQuery
		}
		if pio.WritePacketFlush(answer) != nil {
			return
		}
		if bytes.Equal(answer, h.onQuery) && answer[0] == mysqlproto.LocalInfileHeader {
			// The client's file, then its end: record what came.
			for {
				q, err := pio.ReadPacket()
				if err != nil {
					return
				}
				h.mu.Lock()
				h.received = append(h.received, q...)
				h.mu.Unlock()
				if len(q) == 0 {
					break
				}
			}
			if pio.WritePacketFlush(ok) != nil {
				return
			}
		}
	}
}
