package mysqlproto

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrUnexpectedPacket reports a server response that does not follow the
// protocol for the command it answers.
var ErrUnexpectedPacket = errors.New("mysqlproto: unexpected packet in response")

// MaxInspectLen bounds the packets a ResponseScanner must see whole (OK,
// ERR, EOF, column counts, prepare headers, LOCAL INFILE requests). Rows and
// column definitions, whatever their size, are passed through in pieces.
const MaxInspectLen = 1 << 20

// ScanEvent tells the caller of ResponseScanner.Scan what to do next.
type ScanEvent uint8

const (
	// ScanNeedMore: every byte before the returned position is decided and
	// may be forwarded; read more. Want says how many contiguous bytes the
	// scanner needs at the returned position (a header, or a whole packet it
	// must inspect).
	ScanNeedMore ScanEvent = iota
	// ScanTerminator: the packet just consumed ended a result (OK, EOF or
	// ERR); Packet returns it. Done says whether the response is complete.
	ScanTerminator
	// ScanLocalInfile: the server asked for a LOCAL INFILE upload (the 0xfb
	// packet was just consumed). Relay the client's packets up to and
	// including the empty one, then keep scanning server bytes.
	ScanLocalInfile
	// ScanAuthContinue: during COM_CHANGE_USER the server sent an auth
	// switch or more-data packet that the client must answer. Relay one
	// client packet, then keep scanning.
	ScanAuthContinue
	// ScanError: the response breaks the protocol; Err says how. The
	// connection cannot be used any more.
	ScanError
	// ScanPrepared: the OK that opens a COM_STMT_PREPARE response was just
	// consumed; Packet returns it (a proxy may rewrite the statement id in
	// place) and Prepared its fields. Parameter and column definitions
	// may follow; keep scanning.
	ScanPrepared
)

type scanPhase uint8

const (
	phFirst scanPhase = iota
	phColumnDefs
	phColumnsEOF
	phRows
	phPrepareParams
	phPrepareParamsEOF
	phPrepareColumns
	phPrepareColumnsEOF
	phFieldList
	phExtraOK // the OK an OceanBase server sends after a result set's final EOF
	phDone
)

// ResponseScanner follows a server's response to one command through the
// byte stream, deciding packet boundaries without materialising rows, so
// that the response can be streamed to the client in pieces of any size. It
// finds the end of text and binary result sets (with and without
// DEPRECATE_EOF), multi-result sets, prepare responses, cursor opens and
// fetches, LOCAL INFILE requests, COM_FIELD_LIST and COM_STATISTICS
// answers, and the auth exchange of COM_CHANGE_USER.
//
// The zero value is not ready: call Reset before each response. A scanner
// is used by one goroutine; it holds no references to the bytes it is given
// except the packet returned by Packet, which is borrowed from the last
// Scan's input.
type ResponseScanner struct {
	// Fields are ordered to pack: the scanner lives in every session.
	cmd          Command
	deprecateEOF bool
	progress     bool
	phase        scanPhase
	cont         bool // the next physical packet continues a logical packet
	okValid      bool // ok holds the packet behind the last ScanTerminator
	// expectExtraOK: a result set's final EOF is followed by an OK packet
	// (OceanBase's EXTRA_OK_PACKET_FOR_STATISTICS); extraOK says the last
	// terminator was that OK.
	expectExtraOK bool
	extraOK       bool

	remain   int // payload bytes of the current physical packet still to pass
	count    uint64
	want     int
	lastSeq  uint8
	isErr    bool
	status   ServerStatus
	errCode  uint16 // of the ERR that ended the response
	nParams  uint16
	stmtID   uint32
	nColumns uint16
	packet   []byte
	ok       OK // the last terminator decoded as an OK, when okValid
	err      error
}

// Reset prepares the scanner for the response to cmd on a connection with
// the negotiated capabilities caps. status is the last known server status,
// reported by Status until the response carries a new one.
func (s *ResponseScanner) Reset(cmd Command, caps Capability, status ServerStatus) {
	*s = ResponseScanner{
		cmd:          cmd,
		deprecateEOF: caps.Has(ClientDeprecateEOF),
		progress:     caps.Has(MariaDBClientProgress),
		status:       status,
	}
	if cmd == ComStmtFetch {
		s.phase = phRows
	} else if cmd == ComFieldList {
		s.phase = phFieldList
	}
}

// ExpectExtraOK tells the scanner, after Reset, that the server follows
// the EOF that ends the rows of the response's last result set with one
// more OK packet carrying session state, as an OceanBase server does for a
// proxy that negotiated EXTRA_OK_PACKET_FOR_STATISTICS. The scanner reports
// that OK as a terminator of its own (ExtraOK true); the caller decides
// whether the client sees it.
func (s *ResponseScanner) ExpectExtraOK() {
	if !s.deprecateEOF && (s.cmd == ComQuery || s.cmd == ComStmtExecute) {
		s.expectExtraOK = true
	}
}

// ExtraOK reports whether the last terminator was the extra OK packet of
// ExpectExtraOK.
func (s *ResponseScanner) ExtraOK() bool { return s.extraOK }

// Done reports whether the response is complete. Check it after every
// Scan: a prepare response under DEPRECATE_EOF ends with a column
// definition, not with a terminator packet.
func (s *ResponseScanner) Done() bool { return s.phase == phDone && s.remain == 0 && !s.cont }

// Want is the number of contiguous bytes the scanner needs at the position
// Scan returned with ScanNeedMore.
func (s *ResponseScanner) Want() int { return s.want }

// Status is the server status of the last OK or EOF seen (or the one given
// to Reset).
func (s *ResponseScanner) Status() ServerStatus { return s.status }

// IsErr reports whether the last terminator was an ERR packet.
func (s *ResponseScanner) IsErr() bool { return s.isErr }

// ErrCode is the error code of the ERR that ended the response (0 when it
// did not end with one). Unlike Packet it stays valid after the buffer
// the response was scanned from is reused.
func (s *ResponseScanner) ErrCode() uint16 {
	if !s.isErr {
		return 0
	}
	return s.errCode
}

// OK returns the packet behind the last ScanTerminator decoded as an OK,
// with session-state tracking (the layout OceanBase servers and obgate's
// server sessions use), and true, when it was an OK or the OK-style EOF of
// DEPRECATE_EOF; its slices are borrowed like Packet's. The scanner decodes
// it anyway for the server status, so a caller that needs more of it does
// not decode it again.
func (s *ResponseScanner) OK() (OK, bool) { return s.ok, s.okValid }

// Packet returns the payload of the packet behind the last ScanTerminator,
// ScanLocalInfile or ScanAuthContinue event, borrowed from Scan's input.
func (s *ResponseScanner) Packet() []byte { return s.packet }

// LastSequence is the sequence id of the last packet header consumed.
func (s *ResponseScanner) LastSequence() uint8 { return s.lastSeq }

// Prepared returns the statement id and counts of a COM_STMT_PREPARE OK.
func (s *ResponseScanner) Prepared() (stmtID uint32, columns, params uint16) {
	return s.stmtID, s.nColumns, s.nParams
}

// Err returns the reason for ScanError.
func (s *ResponseScanner) Err() error { return s.err }

// Scan consumes as much of b as it can decide on and returns the number of
// bytes consumed and what happened. Bytes before the returned position are
// final: they may be forwarded and discarded. After ScanNeedMore, the caller
// keeps b[n:], appends newly read bytes to it and calls Scan again.
func (s *ResponseScanner) Scan(b []byte) (int, ScanEvent) {
	pos := 0
	s.want = 0
	for {
		if s.remain > 0 {
			k := min(s.remain, len(b)-pos)
			pos += k
			s.remain -= k
			if s.remain > 0 {
				return pos, ScanNeedMore
			}
		}
		if s.phase == phDone {
			if pos < len(b) {
				return s.fail(pos, errors.New("mysqlproto: server sent bytes after the end of a response"))
			}
			return pos, ScanNeedMore
		}
		if len(b)-pos < HeaderLen+1 {
			if len(b)-pos == HeaderLen && b[pos] == 0 && b[pos+1] == 0 && b[pos+2] == 0 {
				// An empty packet: only legal as the end of a continued one.
				if !s.cont {
					return s.fail(pos, ErrUnexpectedPacket)
				}
				s.lastSeq = b[pos+3]
				s.cont = false
				pos += HeaderLen
				continue
			}
			s.want = HeaderLen + 1
			return pos, ScanNeedMore
		}
		n, seq := ParseHeader(b[pos:])
		if s.cont {
			// The rest of a logical packet that was inspected or passed.
			s.lastSeq = seq
			s.cont = n == MaxPayloadLen
			s.remain = n
			pos += HeaderLen
			continue
		}
		if n == 0 {
			return s.fail(pos, ErrUnexpectedPacket)
		}
		if !s.needsWhole(b[pos+HeaderLen], n) {
			s.lastSeq = seq
			s.countPacket()
			s.cont = n == MaxPayloadLen
			s.remain = n
			pos += HeaderLen
			continue
		}
		if n > MaxInspectLen {
			return s.fail(pos, ErrUnexpectedPacket)
		}
		if len(b)-pos < HeaderLen+n {
			s.want = HeaderLen + n
			return pos, ScanNeedMore
		}
		s.lastSeq = seq
		payload := b[pos+HeaderLen : pos+HeaderLen+n]
		pos += HeaderLen + n
		if ev, stop := s.inspect(payload); stop {
			if ev == ScanError {
				return pos, ScanError
			}
			return pos, ev
		}
	}
}

func (s *ResponseScanner) fail(pos int, err error) (int, ScanEvent) {
	s.err = err
	s.phase = phDone
	return pos, ScanError
}

// needsWhole reports whether the packet starting with first and carrying n
// payload bytes must be inspected whole in the current phase.
func (s *ResponseScanner) needsWhole(first byte, n int) bool {
	switch s.phase {
	case phFirst, phColumnsEOF, phPrepareParamsEOF, phPrepareColumnsEOF, phExtraOK:
		return true
	case phRows, phFieldList:
		return IsResultSetTerminator(first, n, s.deprecateEOF)
	default: // column and parameter definitions
		return false
	}
}

// countPacket advances definition counters after a definition packet.
func (s *ResponseScanner) countPacket() {
	switch s.phase {
	case phColumnDefs:
		s.count--
		if s.count == 0 {
			if s.deprecateEOF {
				s.phase = phRows
			} else {
				s.phase = phColumnsEOF
			}
		}
	case phPrepareParams:
		s.count--
		if s.count == 0 {
			if s.deprecateEOF {
				s.afterPrepareParams()
			} else {
				s.phase = phPrepareParamsEOF
			}
		}
	case phPrepareColumns:
		s.count--
		if s.count == 0 {
			if s.deprecateEOF {
				s.phase = phDone
			} else {
				s.phase = phPrepareColumnsEOF
			}
		}
	}
}

func (s *ResponseScanner) afterPrepareParams() {
	if s.nColumns > 0 {
		s.phase, s.count = phPrepareColumns, uint64(s.nColumns)
	} else {
		s.phase = phDone
	}
}

// inspect handles a packet that was seen whole. stop reports whether Scan
// must return ev to its caller.
func (s *ResponseScanner) inspect(p []byte) (ev ScanEvent, stop bool) {
	first := p[0]
	if first == ERRHeader && s.isProgress(p) {
		return 0, false
	}
	switch s.phase {
	case phFirst:
		return s.inspectFirst(p)
	case phColumnsEOF:
		if first == ERRHeader {
			return s.terminate(p, true)
		}
		eof, ok := ParseEOF(p)
		if !ok {
			s.err = ErrUnexpectedPacket
			return ScanError, true
		}
		s.status = eof.Status
		if s.cmd == ComStmtExecute && eof.Status.Has(StatusCursorExists) {
			// A cursor was opened: rows come with COM_STMT_FETCH.
			return s.terminate(p, false)
		}
		s.phase = phRows
		return 0, false
	case phRows, phFieldList:
		ev, stop := s.terminate(p, first == ERRHeader)
		if s.expectExtraOK && s.phase == phDone && first == EOFHeader && s.cmd != ComFieldList {
			s.phase = phExtraOK
		}
		return ev, stop
	case phExtraOK:
		ok, good := ParseOK(p, ClientSessionTrack|ClientProtocol41)
		if first != OKHeader || !good {
			s.err = ErrUnexpectedPacket
			return ScanError, true
		}
		s.packet, s.isErr, s.extraOK = p, false, true
		s.ok, s.okValid = ok, true
		s.phase = phDone
		return ScanTerminator, true
	case phPrepareParamsEOF, phPrepareColumnsEOF:
		if !IsEOFPacket(p) {
			s.err = ErrUnexpectedPacket
			return ScanError, true
		}
		if s.phase == phPrepareParamsEOF {
			s.afterPrepareParams()
		} else {
			s.phase = phDone
		}
		if s.phase == phDone {
			s.packet, s.isErr = p, false
			s.ok, s.okValid = OK{}, false
			return ScanTerminator, true
		}
		return 0, false
	}
	s.err = ErrUnexpectedPacket
	return ScanError, true
}

func (s *ResponseScanner) inspectFirst(p []byte) (ScanEvent, bool) {
	first := p[0]
	switch {
	case first == ERRHeader:
		return s.terminate(p, true)
	case s.cmd == ComChangeUser && (first == AuthSwitchRequestHeader || first == AuthMoreDataHeader):
		s.packet = p
		if first == AuthMoreDataHeader && len(p) == 2 && p[1] == CachingSha2FastAuthOK {
			return 0, false // the server sends OK next without client input
		}
		return ScanAuthContinue, true
	case s.cmd == ComStmtPrepare && first == OKHeader:
		return s.inspectPrepareOK(p)
	case first == OKHeader || first == EOFHeader:
		return s.terminate(p, false)
	case s.cmd == ComStatistics || s.cmd == ComChangeUser:
		// COM_STATISTICS answers with one plain string packet.
		if s.cmd == ComStatistics {
			return s.terminate(p, false)
		}
		s.err = ErrUnexpectedPacket
		return ScanError, true
	case first == LocalInfileHeader:
		if s.cmd != ComQuery {
			s.err = ErrUnexpectedPacket
			return ScanError, true
		}
		s.packet = p
		// After the upload the server answers with OK or ERR, which may
		// announce further results of a multi-statement query.
		return ScanLocalInfile, true
	}
	n, _, ok := ReadLenEncInt(p, 0)
	if !ok || n == 0 || len(p) != LenEncIntSize(n) {
		s.err = ErrUnexpectedPacket
		return ScanError, true
	}
	if n > MaxColumns {
		s.err = fmt.Errorf("%w: column count %d over %d", ErrUnexpectedPacket, n, MaxColumns)
		return ScanError, true
	}
	s.phase, s.count = phColumnDefs, n
	return 0, false
}

func (s *ResponseScanner) inspectPrepareOK(p []byte) (ScanEvent, bool) {
	if len(p) < 12 {
		s.err = ErrUnexpectedPacket
		return ScanError, true
	}
	s.stmtID = binary.LittleEndian.Uint32(p[1:])
	s.nColumns = binary.LittleEndian.Uint16(p[5:])
	s.nParams = binary.LittleEndian.Uint16(p[7:])
	switch {
	case s.nParams > 0:
		s.phase, s.count = phPrepareParams, uint64(s.nParams)
	case s.nColumns > 0:
		s.phase, s.count = phPrepareColumns, uint64(s.nColumns)
	default:
		s.phase = phDone
	}
	s.packet, s.isErr = p, false
	return ScanPrepared, true
}

// terminate handles an OK, EOF or ERR that ends a result.
func (s *ResponseScanner) terminate(p []byte, isErr bool) (ScanEvent, bool) {
	s.packet, s.isErr = p, isErr
	s.ok, s.okValid = OK{}, false
	s.phase = phDone
	if isErr {
		if len(p) >= 3 {
			s.errCode = uint16(p[1]) | uint16(p[2])<<8
		}
		return ScanTerminator, true
	}
	switch {
	case p[0] == OKHeader || (p[0] == EOFHeader && s.deprecateEOF && len(p) >= 7):
		if ok, good := ParseOK(p, ClientSessionTrack|ClientProtocol41); good {
			s.status = ok.Status
			s.ok, s.okValid = ok, true
		}
	case p[0] == EOFHeader:
		if eof, good := ParseEOF(p); good {
			s.status = eof.Status
		}
	}
	if s.status.Has(StatusMoreResultsExists) && s.cmd != ComFieldList && s.cmd != ComStatistics && p[0] != ERRHeader {
		s.phase = phFirst
	}
	return ScanTerminator, true
}

// isProgress reports whether an 0xff packet is a MariaDB progress report.
func (s *ResponseScanner) isProgress(p []byte) bool {
	return s.progress && len(p) >= 3 && binary.LittleEndian.Uint16(p[1:]) == MariaDBProgressCode
}
