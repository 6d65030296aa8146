package reactor_test

import (
	"context"
	"testing"
	"time"

	"obgate/internal/testproxy"
	"obgate/mysqlproto"
	"obgate/tools/obsim"
)

// TestOBClientProtocolV2 logs in as an OceanBase driver that asks for OB 2.0
// and checks that obgate grants it in the login OK (ob_capability_flag),
// then speaks OB 2.0 frames with it: requests are unframed and answered
// in frames that echo the request id, continue its sequence and end with
// LAST. With enable_ob_protocol_v2_with_client off, or for a plain MySQL
// client, nothing is granted.
func TestOBClientProtocolV2(t *testing.T) {
	cluster := obsim.StartForTest(t, nil)
	for _, mode := range ioModes {
		t.Run(mode, func(t *testing.T) {
			cfg, err := testproxy.OBConfig(cluster.RSList(), cluster.Name(), mode,
				"enable_ob_protocol_v2_with_client", "true")
			if err != nil {
				t.Fatal(err)
			}
			p := testproxy.Start(t, cfg)
			obDriver := []mysqlproto.ConnAttr{
				{Key: mysqlproto.AttrMySQLClientType, Value: mysqlproto.ClientTypeOBLibOBClient},
				{Key: mysqlproto.AttrProxyCapabilityFlag, Value: mysqlproto.FormatOBCapability(
					mysqlproto.OBCapProtocolV2 | mysqlproto.OBCapProxyNewExtraInfo | mysqlproto.OBCapChecksum)},
			}
			ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
			defer cancel()
			cl, err := mysqlproto.Dial(ctx, p.Addr, mysqlproto.ClientOptions{User: "root@test#" + cluster.Name(), Attrs: obDriver})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Conn().Close()
			granted := grantedCaps(t, cl.LoginOK.SessionState)
			if want := mysqlproto.OBCapProtocolV2 | mysqlproto.OBCapProxyNewExtraInfo; granted != want {
				t.Fatalf("granted %v, want %v", granted, want)
			}
			fr := mysqlproto.NewOB20Framer(cl.Reader(), cl.Conn(), mysqlproto.FramerClient, cl.ConnectionID())
			fr.SetNextRequestID(4242)
			for i, q := range []string{"SELECT 40+2", "SELECT COUNT(*) FROM test.orders", "SET @x = 'framed'", "SELECT @x"} {
				fr.BeginRequest()
				pio := mysqlproto.NewPacketIO(fr, fr)
				_ = cl.Conn().SetDeadline(time.Now().Add(hangLimit))
				if err := pio.WritePacketFlush(append([]byte{byte(mysqlproto.ComQuery)}, q...)); err != nil {
					t.Fatal(err)
				}
				rows := readTextResult(t, pio)
				h := fr.Header()
				if !h.Flags.Has(mysqlproto.OB20LastPacket) {
					t.Fatalf("query %d: last response frame lacks LAST (flags %v)", i, h.Flags)
				}
				if h.RequestID != 4242+uint32(i) {
					t.Fatalf("query %d: response request id %d", i, h.RequestID)
				}
				switch q {
				case "SELECT 40+2":
					if len(rows) != 1 || rows[0] != "42" {
						t.Fatalf("%s: %v", q, rows)
					}
				case "SELECT @x":
					if len(rows) != 1 || rows[0] != "framed" {
						t.Fatalf("%s: %v", q, rows)
					}
				}
			}
			info := p.Server.Sessions()
			found := false
			for _, s := range info {
				if s.Transport == mode+"+ob20" {
					found = true
				}
			}
			if !found {
				t.Fatalf("no session with transport %s+ob20 in %+v", mode, info)
			}
		})
	}
	t.Run("not granted", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			option string
			attrs  []mysqlproto.ConnAttr
		}{
			{"option off", "false", []mysqlproto.ConnAttr{{Key: mysqlproto.AttrMySQLClientType, Value: mysqlproto.ClientTypeOBJDBC},
				{Key: mysqlproto.AttrProxyCapabilityFlag, Value: "256"}}},
			{"mysql client", "true", []mysqlproto.ConnAttr{{Key: mysqlproto.AttrProxyCapabilityFlag, Value: "256"}}},
			{"no v2 bit", "true", []mysqlproto.ConnAttr{{Key: mysqlproto.AttrMySQLClientType, Value: mysqlproto.ClientTypeOBJDBC},
				{Key: mysqlproto.AttrProxyCapabilityFlag, Value: "32768"}}},
		} {
			cfg, err := testproxy.OBConfig(cluster.RSList(), cluster.Name(), "net", "enable_ob_protocol_v2_with_client", tc.option)
			if err != nil {
				t.Fatal(err)
			}
			p := testproxy.Start(t, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
			cl, err := mysqlproto.Dial(ctx, p.Addr, mysqlproto.ClientOptions{User: "root@test#" + cluster.Name(), Attrs: tc.attrs})
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			if g := grantedCaps(t, cl.LoginOK.SessionState); g != 0 {
				t.Errorf("%s: granted %v", tc.name, g)
			}
			if r, err := cl.Query("SELECT 1"); err != nil || string(r.Rows[0][0]) != "1" {
				t.Errorf("%s: plain query after login: %v", tc.name, err)
			}
			cl.Close()
		}
	})
}

// grantedCaps reads ob_capability_flag from a login OK's session state.
func grantedCaps(t *testing.T, raw []byte) mysqlproto.OBCapability {
	t.Helper()
	it := mysqlproto.SessionStates(raw)
	for {
		typ, data, more := it.Next()
		if !more {
			return 0
		}
		if typ != mysqlproto.SessionTrackSystemVariables {
			continue
		}
		name, value, _, ok := mysqlproto.ParseSystemVariable(data, 0)
		if ok && string(name) == mysqlproto.OBCapabilityFlagVar {
			c, _ := mysqlproto.ParseOBCapability(string(value))
			return c
		}
	}
}

// readTextResult reads an OK or a one-column text result set and returns
// the column's values.
func readTextResult(t *testing.T, pio *mysqlproto.PacketIO) []string {
	t.Helper()
	p, err := pio.ReadPacket()
	if err != nil {
		t.Fatal(err)
	}
	switch p[0] {
	case mysqlproto.OKHeader:
		return nil
	case mysqlproto.ERRHeader:
		e, _ := mysqlproto.ParseERR(p)
		t.Fatalf("ERR %d %s", e.Code, e.Message)
	}
	n, _, _ := mysqlproto.ReadLenEncInt(p, 0)
	for range n + 1 { // definitions and their EOF
		if _, err := pio.ReadPacket(); err != nil {
			t.Fatal(err)
		}
	}
	var vals []string
	for {
		p, err := pio.ReadPacket()
		if err != nil {
			t.Fatal(err)
		}
		if mysqlproto.IsEOFPacket(p) {
			return vals
		}
		v, _, _ := mysqlproto.ReadLenEncString(p, 0)
		vals = append(vals, string(v))
	}
}
