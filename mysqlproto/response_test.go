package mysqlproto

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
)

// wire builds a framed packet stream with consecutive sequence ids.
type wire struct {
	b   []byte
	seq uint8
}

func (w *wire) packet(p []byte) *wire {
	w.b, w.seq = AppendPacket(w.b, w.seq, p)
	return w
}

func (w *wire) ok(status ServerStatus) *wire {
	return w.packet(AppendOK(nil, OK{Status: status}, ClientSessionTrack))
}

func (w *wire) eof(status ServerStatus) *wire { return w.packet(AppendEOF(nil, 0, status)) }

func (w *wire) okEOF(status ServerStatus) *wire {
	return w.packet(AppendOKAsEOF(nil, OK{Status: status}, ClientSessionTrack))
}

func (w *wire) err(code uint16) *wire {
	return w.packet(AppendERR(nil, code, "HY000", "boom"))
}

// resultSet appends a text result set with ncols columns and rows rows.
func (w *wire) resultSet(ncols, rows int, deprecateEOF bool, status ServerStatus, rowPayload []byte) *wire {
	w.packet(AppendLenEncInt(nil, uint64(ncols)))
	for i := range ncols {
		c := VarcharColumn(fmt.Sprintf("c%d", i))
		w.packet(c.Append(nil))
	}
	if !deprecateEOF {
		w.eof(status &^ StatusMoreResultsExists)
	}
	for range rows {
		w.packet(rowPayload)
	}
	if deprecateEOF {
		return w.okEOF(status)
	}
	return w.eof(status)
}

// prepareEvents: under DEPRECATE_EOF a prepare response with columns ends
// with the last column definition, so no terminator event is seen.
func prepareEvents(deprecateEOF bool) []ScanEvent {
	if deprecateEOF {
		return []ScanEvent{ScanPrepared}
	}
	return []ScanEvent{ScanPrepared, ScanTerminator}
}

type scanResult struct {
	events   []ScanEvent
	consumed int
	status   ServerStatus
	done     bool
}

// scanStream drives a scanner the way reactor does: bytes arrive in chunks
// of the given size, decided bytes are dropped, and the undecided tail is
// kept for the next call. After ScanLocalInfile and ScanAuthContinue it just
// continues (the client's packets travel the other way).
func scanStream(t *testing.T, s *ResponseScanner, stream []byte, chunk int) scanResult {
	t.Helper()
	var res scanResult
	var pending []byte
	in := stream
	for {
		n, ev := s.Scan(pending)
		res.consumed += n
		pending = pending[n:]
		switch ev {
		case ScanError:
			t.Fatalf("chunk %d: scan error after %d bytes: %v", chunk, res.consumed, s.Err())
		case ScanNeedMore:
			if len(in) == 0 {
				res.status, res.done = s.Status(), s.Done()
				return res
			}
			k := min(chunk, len(in))
			pending = append(pending, in[:k]...)
			in = in[k:]
			continue
		}
		res.events = append(res.events, ev)
	}
}

func TestScannerResponses(t *testing.T) {
	longRow := AppendLenEncString(nil, string(bytes.Repeat([]byte("x"), 70000)))
	shortRow := AppendLenEncString(nil, "v")
	feRow := append(AppendLenEncInt(nil, 1<<24), bytes.Repeat([]byte("y"), 1<<24)...) // starts with 0xfe, not an EOF
	type tc struct {
		name   string
		cmd    Command
		caps   Capability
		stream []byte
		events []ScanEvent
		status ServerStatus
	}
	var cases []tc
	for _, dep := range []bool{false, true} {
		caps := ClientProtocol41 | ClientSessionTrack
		if dep {
			caps |= ClientDeprecateEOF
		}
		name := func(s string) string { return fmt.Sprintf("%s/deprecateEOF=%v", s, dep) }
		cases = append(cases,
			tc{name("ok"), ComQuery, caps, new(wire).ok(StatusAutocommit).b,
				[]ScanEvent{ScanTerminator}, StatusAutocommit},
			tc{name("err"), ComQuery, caps, new(wire).err(1064).b,
				[]ScanEvent{ScanTerminator}, 0},
			tc{name("resultset"), ComQuery, caps,
				new(wire).resultSet(3, 5, dep, StatusInTrans, shortRow).b,
				[]ScanEvent{ScanTerminator}, StatusInTrans},
			tc{name("long rows"), ComQuery, caps,
				new(wire).resultSet(1, 3, dep, StatusAutocommit, longRow).b,
				[]ScanEvent{ScanTerminator}, StatusAutocommit},
			tc{name("empty resultset"), ComQuery, caps,
				new(wire).resultSet(2, 0, dep, StatusAutocommit, nil).b,
				[]ScanEvent{ScanTerminator}, StatusAutocommit},
			tc{name("multi results"), ComQuery, caps,
				new(wire).resultSet(1, 2, dep, StatusMoreResultsExists, shortRow).
					ok(StatusMoreResultsExists).resultSet(2, 1, dep, StatusAutocommit, shortRow).b,
				[]ScanEvent{ScanTerminator, ScanTerminator, ScanTerminator}, StatusAutocommit},
			tc{name("error after rows"), ComQuery, caps,
				func() []byte {
					w := new(wire)
					w.packet([]byte{1})
					c := VarcharColumn("a")
					w.packet(c.Append(nil))
					if !dep {
						w.eof(0)
					}
					return w.packet(shortRow).err(1317).b
				}(),
				[]ScanEvent{ScanTerminator}, 0},
			tc{name("local infile"), ComQuery, caps,
				new(wire).packet(append([]byte{LocalInfileHeader}, "/tmp/x"...)).ok(0).b,
				[]ScanEvent{ScanLocalInfile, ScanTerminator}, 0},
			tc{name("prepare"), ComStmtPrepare, caps,
				func() []byte {
					w := new(wire)
					hdr := []byte{0, 1, 0, 0, 0, 2, 0, 3, 0, 0, 0, 0}
					w.packet(hdr)
					c := VarcharColumn("?")
					for range 3 {
						w.packet(c.Append(nil))
					}
					if !dep {
						w.eof(0)
					}
					for range 2 {
						w.packet(c.Append(nil))
					}
					if !dep {
						w.eof(0)
					}
					return w.b
				}(),
				prepareEvents(dep), 0},
			tc{name("prepare no params no columns"), ComStmtPrepare, caps,
				new(wire).packet([]byte{0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}).b,
				[]ScanEvent{ScanPrepared}, 0},
			tc{name("cursor open"), ComStmtExecute, caps,
				func() []byte {
					w := new(wire)
					w.packet([]byte{1})
					c := VarcharColumn("a")
					w.packet(c.Append(nil))
					if dep {
						return w.okEOF(StatusCursorExists).b
					}
					return w.eof(StatusCursorExists).b
				}(),
				[]ScanEvent{ScanTerminator}, StatusCursorExists},
			tc{name("fetch"), ComStmtFetch, caps,
				func() []byte {
					w := new(wire)
					w.packet([]byte{0, 0, 1, 'a'}).packet([]byte{0, 0, 1, 'b'})
					if dep {
						return w.okEOF(StatusLastRowSent).b
					}
					return w.eof(StatusLastRowSent).b
				}(),
				[]ScanEvent{ScanTerminator}, StatusLastRowSent},
			tc{name("field list"), ComFieldList, caps,
				func() []byte {
					w := new(wire)
					c := VarcharColumn("a")
					w.packet(c.Append(nil)).packet(c.Append(nil))
					if dep {
						return w.okEOF(0).b
					}
					return w.eof(0).b
				}(),
				[]ScanEvent{ScanTerminator}, 0},
			tc{name("statistics"), ComStatistics, caps,
				new(wire).packet([]byte("Uptime: 5  Threads: 1")).b,
				[]ScanEvent{ScanTerminator}, 0},
			tc{name("change user switch"), ComChangeUser, caps,
				func() []byte {
					w := new(wire)
					w.packet(AuthSwitchRequest{Plugin: AuthNativePassword, Data: NewScramble()}.Append(nil))
					w.seq++ // the client's answer
					return w.ok(StatusAutocommit).b
				}(),
				[]ScanEvent{ScanAuthContinue, ScanTerminator}, StatusAutocommit},
			tc{name("change user fast auth"), ComChangeUser, caps,
				new(wire).packet([]byte{AuthMoreDataHeader, CachingSha2FastAuthOK}).ok(0).b,
				[]ScanEvent{ScanTerminator}, 0},
		)
	}
	depCaps := ClientProtocol41 | ClientSessionTrack | ClientDeprecateEOF
	cases = append(cases,
		tc{"row starting with 0xfe", ComQuery, depCaps,
			new(wire).resultSet(1, 1, true, StatusAutocommit, feRow).b,
			[]ScanEvent{ScanTerminator}, StatusAutocommit},
		tc{"mariadb progress", ComQuery, depCaps | MariaDBClientProgress,
			func() []byte {
				w := new(wire)
				prog := []byte{0xff, 0xff, 0xff, 1, 1, 2, 0x10, 0, 0, 4, 's', 't', 'g', '1'}
				return w.packet(prog).packet(prog).ok(0).b
			}(),
			[]ScanEvent{ScanTerminator}, 0},
	)
	for _, c := range cases {
		for _, chunk := range []int{1, 3, 7, 64, 1 << 16, 1 << 26} {
			t.Run(fmt.Sprintf("%s/chunk=%d", c.name, chunk), func(t *testing.T) {
				if chunk < 64 && len(c.stream) > 1<<20 {
					t.Skip("covered by larger chunks")
				}
				var s ResponseScanner
				s.Reset(c.cmd, c.caps, 0)
				res := scanStream(t, &s, c.stream, chunk)
				if res.consumed != len(c.stream) {
					t.Fatalf("consumed %d of %d bytes", res.consumed, len(c.stream))
				}
				if !res.done {
					t.Fatal("response not done")
				}
				if fmt.Sprint(res.events) != fmt.Sprint(c.events) {
					t.Fatalf("events %v, want %v", res.events, c.events)
				}
				if res.status != c.status {
					t.Fatalf("status %v, want %v", res.status, c.status)
				}
			})
		}
	}
}

func TestScannerPreparedCounts(t *testing.T) {
	var s ResponseScanner
	s.Reset(ComStmtPrepare, ClientProtocol41|ClientDeprecateEOF, 0)
	hdr := []byte{0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.LittleEndian.PutUint16(hdr[5:], 0)
	stream := new(wire).packet(hdr).b
	res := scanStream(t, &s, stream, 100)
	if !res.done {
		t.Fatal("not done")
	}
	id, cols, params := s.Prepared()
	if id != 9 || cols != 0 || params != 0 {
		t.Fatalf("prepared %d %d %d", id, cols, params)
	}
}

func TestScannerRejects(t *testing.T) {
	bad := map[string][]byte{
		"trailing bytes":     append(new(wire).ok(0).b, 1, 0, 0, 1, 0),
		"empty packet":       {0, 0, 0, 0, 0},
		"zero column count":  new(wire).packet([]byte{0xfb, 1}).b,
		"huge inspect":       {0xff, 0xff, 0x7f, 0, 0},
		"infile not a query": new(wire).packet([]byte{0xfb, 'x'}).b,
	}
	for name, stream := range bad {
		t.Run(name, func(t *testing.T) {
			var s ResponseScanner
			cmd := ComQuery
			if name == "infile not a query" || name == "zero column count" {
				cmd = ComStmtExecute
			}
			s.Reset(cmd, ClientProtocol41, 0)
			pending := stream
			for range 10 {
				n, ev := s.Scan(pending)
				pending = pending[n:]
				if ev == ScanError {
					return
				}
				if ev == ScanNeedMore && n == 0 && (s.Want() == 0 || s.Want() > len(pending)) {
					if name == "huge inspect" {
						t.Fatalf("huge packet asked for %d bytes instead of failing", s.Want())
					}
					break
				}
			}
			t.Fatalf("no error for %s", name)
		})
	}
}

// TestScannerKeepsDecodedOK: the OK behind a terminator is handed out as
// the scanner decoded it (session state included), and only for an OK.
func TestScannerKeepsDecodedOK(t *testing.T) {
	state := AppendSystemVariableState(nil, "autocommit", "OFF")
	ok := OK{AffectedRows: 3, LastInsertID: 7, Status: StatusAutocommit | StatusSessionStateChange,
		Warnings: 1, Info: []byte("Rows matched: 3"), SessionState: state}
	for _, tc := range []struct {
		name   string
		stream []byte
		want   *OK
	}{
		{"ok", (&wire{seq: 1}).packet(AppendOK(nil, ok, ClientSessionTrack)).b, &ok},
		{"err", (&wire{seq: 1}).err(1064).b, nil},
		{"classic eof", (&wire{seq: 1}).resultSet(1, 1, false, StatusAutocommit, []byte{1, 'x'}).b, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sc ResponseScanner
			sc.Reset(ComQuery, ClientProtocol41|ClientSessionTrack, 0)
			b := tc.stream
			for {
				n, ev := sc.Scan(b)
				b = b[n:]
				if ev == ScanTerminator {
					break
				}
				if ev != ScanNeedMore || len(b) == 0 {
					t.Fatalf("event %d with %d bytes left", ev, len(b))
				}
			}
			got, good := sc.OK()
			if tc.want == nil {
				if good {
					t.Fatalf("OK() = %+v, true after a non-OK terminator", got)
				}
				return
			}
			if !good || got.AffectedRows != ok.AffectedRows || got.LastInsertID != ok.LastInsertID ||
				got.Status != ok.Status || got.Warnings != ok.Warnings ||
				!bytes.Equal(got.Info, ok.Info) || !bytes.Equal(got.SessionState, ok.SessionState) {
				t.Fatalf("OK() = %+v, %v; want %+v", got, good, ok)
			}
		})
	}
}

func TestScannerErrCode(t *testing.T) {
	var sc ResponseScanner
	sc.Reset(ComQuery, ClientProtocol41, 0)
	pkt, _ := AppendPacket(nil, 1, NewSQLError(ERNoSuchThread, "Unknown thread id: 5").AppendPacket(nil))
	if _, ev := sc.Scan(pkt); ev != ScanTerminator || !sc.IsErr() {
		t.Fatalf("ERR packet: event %v, IsErr %v", ev, sc.IsErr())
	}
	for i := range pkt {
		pkt[i] = 0 // the buffer is reused; the code must not come from it
	}
	if sc.ErrCode() != ERNoSuchThread {
		t.Fatalf("ErrCode() = %d, want %d", sc.ErrCode(), ERNoSuchThread)
	}
	sc.Reset(ComPing, ClientProtocol41, 0)
	ok, _ := AppendPacket(nil, 1, AppendOK(nil, OK{}, ClientProtocol41))
	sc.Scan(ok)
	if sc.ErrCode() != 0 {
		t.Fatalf("ErrCode() after an OK = %d, want 0", sc.ErrCode())
	}
}

// TestScannerExtraOK follows OceanBase's EXTRA_OK_PACKET_FOR_STATISTICS:
// the final EOF of a result set is followed by an OK, reported as a
// terminator of its own; multi-result EOFs, cursors and responses without
// rows are not.
func TestScannerExtraOK(t *testing.T) {
	state := AppendSystemVariableState(nil, "ob_proxy_partition_hit", "1")
	extra := AppendOK(nil, OK{Status: StatusAutocommit | StatusSessionStateChange, SessionState: state}, ClientSessionTrack)
	for _, chunk := range []int{1, 7, 4096} {
		w := (&wire{seq: 1}).resultSet(2, 3, false, StatusAutocommit, []byte{1, 'x', 1, 'y'}).packet(extra)
		var sc ResponseScanner
		sc.Reset(ComQuery, ClientProtocol41|ClientSessionTrack, 0)
		sc.ExpectExtraOK()
		res := scanStream(t, &sc, w.b, chunk)
		if !res.done || res.consumed != len(w.b) || len(res.events) != 2 || !sc.ExtraOK() {
			t.Fatalf("chunk %d: %+v, extra OK %v", chunk, res, sc.ExtraOK())
		}
		if ok, good := sc.OK(); !good || !bytes.Equal(ok.SessionState, state) {
			t.Fatalf("chunk %d: extra OK %+v", chunk, ok)
		}
	}
	// Two result sets: only the last EOF is followed by the OK.
	w := (&wire{seq: 1}).resultSet(1, 1, false, StatusMoreResultsExists, []byte{1, 'a'}).
		resultSet(1, 1, false, 0, []byte{1, 'b'}).packet(extra)
	var sc ResponseScanner
	sc.Reset(ComQuery, ClientProtocol41|ClientSessionTrack, 0)
	sc.ExpectExtraOK()
	if res := scanStream(t, &sc, w.b, 5); !res.done || len(res.events) != 3 {
		t.Fatalf("multi-result: %+v", res)
	}
	// A plain OK answer has no extra OK; under DEPRECATE_EOF there is none.
	for _, caps := range []Capability{ClientProtocol41, ClientProtocol41 | ClientDeprecateEOF} {
		w = (&wire{seq: 1}).ok(0)
		sc.Reset(ComQuery, caps, 0)
		sc.ExpectExtraOK()
		if res := scanStream(t, &sc, w.b, 64); !res.done || sc.ExtraOK() {
			t.Fatalf("OK answer, caps %v: %+v", caps, res)
		}
	}
	// Something else where the extra OK belongs is a protocol error.
	w = (&wire{seq: 1}).resultSet(1, 1, false, 0, []byte{1, 'a'}).packet([]byte{1, 'z'})
	sc.Reset(ComQuery, ClientProtocol41, 0)
	sc.ExpectExtraOK()
	b := w.b
	for {
		n, ev := sc.Scan(b)
		b = b[n:]
		if ev == ScanError {
			break
		}
		if ev == ScanNeedMore && len(b) == 0 {
			t.Fatal("a row where the extra OK belongs was accepted")
		}
	}
}
