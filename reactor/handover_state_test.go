package reactor

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
)

func sampleHandoverState() *handoverState {
	return &handoverState{
		Mode: handoverModeMySQL, SessionID: 0x80a00003, Caps: 0x1_0000_a685, Status: 0x0002,
		User: "app@t1#c1", DB: "shop", ConnectedAt: 1764700000000000000, LastActive: 1764700001000000000,
		TransCount: 7, StmtCount: 99, BytesIn: 1234, BytesOut: 56789, StmtLast: 12,
		Stmts: []handoverStmt{
			{ID: 11, SQL: []byte("SELECT c FROM t WHERE id = ?"), Params: 1, Columns: 1, Types: []byte{8, 0}},
			{ID: 12, SQL: []byte("INSERT INTO t VALUES (?, ?)"), Params: 2, Home: true},
		},
		Servers: []handoverServer{{Addr: "127.0.0.1:3306", ThreadID: 42, Status: 0x0002, LastUsed: 5,
			Stmts: []handoverServerStmt{{Client: 11, Server: 3, Bound: true}, {Client: 12, Server: 4}}}},
		Move: &handoverMove{Scramble: []byte("01234567890123456789"), Login: []byte{1, 2, 3}, Stage1: []byte{},
			Caps: 0xa685, Stateful: true},
		OB: &handoverOB{Cluster: "c1", Tenant: "t1", IdentityUser: "app", ClusterID: -1, Login: []byte{4, 5},
			Scramble: []byte("aaaaaaaabbbbbbbbbbbb"), DB: "shop",
			Sys:  []handoverVar{{"sql_mode", "STRICT_TRANS_TABLES"}, {"time_zone", "+08:00"}},
			User: []handoverVar{{"proxy_route_policy", "'follower_first'"}},
			Hot:  []handoverHot{{0, "1"}, {1, "10000000"}}, MultiStmtSet: true, MultiStmt: true},
	}
}

// TestHandoverStateRoundTrip: every field survives the encoding.
func TestHandoverStateRoundTrip(t *testing.T) {
	want := sampleHandoverState()
	got, err := decodeHandoverState(want.encode())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", got, want)
	}
	// A session that cannot move has no move record, and keeps none.
	want.Move = nil
	if got, err = decodeHandoverState(want.encode()); err != nil || got.Move != nil {
		t.Fatalf("without a move record: %+v, %v", got.Move, err)
	}
}

// TestHandoverStateVersions: a reader skips an optional field it does
// not know (a newer writer's detail) and refuses a required one, a
// different version, and a state without its required fields.
func TestHandoverStateVersions(t *testing.T) {
	base := sampleHandoverState().encode()
	field := func(tag uint16, v []byte) []byte {
		b := binary.LittleEndian.AppendUint16(nil, tag)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
		return append(b, v...)
	}
	withOptional := append(bytes.Clone(base), field(handoverOptional|0x777, []byte("later"))...)
	if _, err := decodeHandoverState(withOptional); err != nil {
		t.Errorf("an unknown optional field: %v", err)
	}
	withRequired := append(bytes.Clone(base), field(0x777, []byte("needed"))...)
	if _, err := decodeHandoverState(withRequired); !errors.Is(err, errHandoverState) {
		t.Errorf("an unknown required field: %v", err)
	}
	newer := bytes.Clone(base)
	binary.LittleEndian.PutUint16(newer[4:], handoverVersion+1)
	if _, err := decodeHandoverState(newer); !errors.Is(err, errHandoverState) {
		t.Errorf("version %d: %v", handoverVersion+1, err)
	}
	bare := append([]byte(handoverMagic), 0, 0)
	binary.LittleEndian.PutUint16(bare[4:], handoverVersion)
	if _, err := decodeHandoverState(append(bare, field(tagMode, []byte{handoverModeMySQL})...)); !errors.Is(err, errHandoverState) {
		t.Errorf("no session id or user: %v", err)
	}
}

// TestHandoverStateTruncated: every prefix of a good state is refused
// or read without a panic.
func TestHandoverStateTruncated(t *testing.T) {
	b := sampleHandoverState().encode()
	for n := range len(b) {
		if _, err := decodeHandoverState(b[:n]); err == nil && n < 6 {
			t.Fatalf("a %d-byte prefix was accepted", n)
		}
	}
}

// FuzzHandoverState: no input panics the decoder, and whatever it
// accepts encodes to a state that decodes the same.
func FuzzHandoverState(f *testing.F) {
	f.Add(sampleHandoverState().encode())
	s := sampleHandoverState()
	s.Move, s.Stmts = nil, nil
	f.Add(s.encode())
	f.Add([]byte("OBGS\x01\x00"))
	f.Add([]byte("OBGS\x01\x00\x01\x00\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := decodeHandoverState(b)
		if err != nil {
			return
		}
		again, err := decodeHandoverState(h.encode())
		if err != nil {
			t.Fatalf("re-encoded state refused: %v", err)
		}
		if !reflect.DeepEqual(normalizedState(again), normalizedState(h)) {
			t.Fatalf("re-encoded state differs:\n%+v\n%+v", again, h)
		}
	})
}

// normalizedState maps empty and nil byte slices alike, which the
// encoding does not tell apart.
func normalizedState(h *handoverState) *handoverState {
	c := *h
	c.Stmts = append([]handoverStmt(nil), h.Stmts...)
	for i := range c.Stmts {
		if len(c.Stmts[i].SQL) == 0 {
			c.Stmts[i].SQL = nil
		}
		if len(c.Stmts[i].Types) == 0 {
			c.Stmts[i].Types = nil
		}
	}
	if h.Move != nil {
		m := *h.Move
		for _, b := range []*[]byte{&m.Scramble, &m.Login, &m.Stage1} {
			if len(*b) == 0 {
				*b = nil
			}
		}
		c.Move = &m
	}
	if h.OB != nil {
		o := *h.OB
		for _, b := range []*[]byte{&o.Login, &o.Scramble} {
			if len(*b) == 0 {
				*b = nil
			}
		}
		c.OB = &o
	}
	return &c
}
