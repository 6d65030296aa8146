package route

import (
	"obgate/internal/obpart"
	"obgate/mysqlproto"
)

// maxExecParams is the number of COM_STMT_EXECUTE parameters ExecParams
// decodes; later ones are unknown.
const maxExecParams = 64

// ExecParams gives the parameters of a COM_STMT_EXECUTE. Reset decodes
// the payload without allocating; the values' bytes are borrowed from it,
// so the payload must stay unchanged while the ExecParams is used.
type ExecParams struct {
	payload []byte
	n       int
	types   []byte
	slot    [maxExecParams]execSlot
}

// execSlot is one decoded parameter.
type execSlot struct {
	kind     ValueKind
	off, len int32 // ValString: the bytes in the payload
	v        int64
}

// MySQL column types of binary-protocol parameters.
const (
	myDecimal    = 0x00
	myTiny       = 0x01
	myShort      = 0x02
	myLong       = 0x03
	myFloat      = 0x04
	myDouble     = 0x05
	myNull       = 0x06
	myTimestamp  = 0x07
	myLongLong   = 0x08
	myInt24      = 0x09
	myDate       = 0x0a
	myTime       = 0x0b
	myDateTime   = 0x0c
	myYear       = 0x0d
	myVarchar    = 0x0f
	myBit        = 0x10
	myJSON       = 0xf5
	myNewDecimal = 0xf6
	myEnum       = 0xf7
	mySet        = 0xf8
	myTinyBlob   = 0xf9
	myMediumBlob = 0xfa
	myLongBlob   = 0xfb
	myBlob       = 0xfc
	myVarString  = 0xfd
	myString     = 0xfe
	myGeometry   = 0xff

	unsignedFlag = 0x80 // in the second type byte
)

// Reset decodes payload, a COM_STMT_EXECUTE after its command byte, of a
// statement with numParams parameters. keptTypes are the parameter types
// (2 bytes each) of an earlier execute of the statement, used when this
// one does not carry them (new-params-bound flag 0); it is borrowed too.
func (p *ExecParams) Reset(payload []byte, numParams int, keptTypes []byte) {
	p.ResetLongData(payload, numParams, keptTypes, 0)
}

// ResetLongData is Reset for an execute whose parameters with bit i of
// long set were sent by COM_STMT_SEND_LONG_DATA: their values are not in
// the payload, and they are unknown.
func (p *ExecParams) ResetLongData(payload []byte, numParams int, keptTypes []byte, long uint64) {
	p.payload, p.n, p.types = payload, 0, nil
	if numParams <= 0 {
		return
	}
	const head = 9 // statement id, flags, iteration count
	nb := (numParams + 7) / 8
	bound := head + nb
	if len(payload) <= bound {
		return
	}
	nulls := payload[head:bound]
	pos := bound + 1
	switch {
	case payload[bound] == 1:
		if len(payload)-pos < 2*numParams {
			return
		}
		p.types = payload[pos : pos+2*numParams]
		pos += 2 * numParams
	case len(keptTypes) >= 2*numParams:
		p.types = keptTypes[:2*numParams]
	default:
		return
	}
	p.n = min(numParams, maxExecParams)
	for i := range p.n {
		s := &p.slot[i]
		*s = execSlot{}
		if nulls[i/8]&(1<<(i%8)) != 0 {
			s.kind = ValNull
			continue
		}
		if long&(1<<i) != 0 {
			continue
		}
		next, ok := p.decode(s, pos, p.types[2*i], p.types[2*i+1]&unsignedFlag != 0)
		if !ok { // a value that cannot be sized: the rest are unknown
			for j := i + 1; j < p.n; j++ {
				p.slot[j] = execSlot{}
			}
			return
		}
		pos = next
	}
}

// decode reads one value of type t at pos into s and returns the
// position after it.
func (p *ExecParams) decode(s *execSlot, pos int, t byte, unsigned bool) (int, bool) {
	b := p.payload
	fixed := func(n int) (int, bool) {
		if len(b)-pos < n {
			return pos, false
		}
		return pos + n, true
	}
	switch t {
	case myNull:
		s.kind = ValNull
		return pos, true
	case myTiny, myShort, myYear, myLong, myInt24, myLongLong:
		size := map8[t]
		next, ok := fixed(size)
		if !ok {
			return pos, false
		}
		var u uint64
		for i := size - 1; i >= 0; i-- {
			u = u<<8 | uint64(b[pos+i])
		}
		s.kind, s.v = ValInt, signExtend(u, size)
		if unsigned {
			s.kind, s.v = ValUint, int64(u)
		}
		return next, true
	case myFloat:
		return fixed(4)
	case myDouble:
		return fixed(8)
	case myTimestamp, myDate, myDateTime:
		if pos >= len(b) {
			return pos, false
		}
		next, ok := fixed(1 + int(b[pos]))
		if ok {
			s.v, ok = binaryTime(b[pos+1 : next])
			if ok {
				s.kind = ValTime
			}
			return next, true
		}
		return next, ok
	case myTime:
		if pos >= len(b) {
			return pos, false
		}
		return fixed(1 + int(b[pos]))
	case myDecimal, myNewDecimal, myVarchar, myJSON, myEnum, mySet, myTinyBlob, myMediumBlob,
		myLongBlob, myBlob, myVarString, myString, myBit, myGeometry:
		n, q, ok := mysqlproto.ReadLenEncInt(b, pos)
		if !ok || n > uint64(len(b)-q) {
			return pos, false
		}
		if t != myBit && t != myGeometry && t != myJSON {
			s.kind, s.off, s.len = ValString, int32(q), int32(n)
		}
		return q + int(n), true
	}
	return pos, false
}

// binaryTime reads the binary protocol's DATE / DATETIME / TIMESTAMP
// value (year 2 bytes, month, day, then hour, minute, second, then
// microseconds 4 bytes; each group may be left out) as wall-clock
// microseconds since 1970-01-01 00:00:00. A zero or invalid date reports
// false.
func binaryTime(b []byte) (int64, bool) {
	if len(b) != 4 && len(b) != 7 && len(b) != 11 {
		return 0, false
	}
	y, mo, d := int32(b[0])|int32(b[1])<<8, int32(b[2]), int32(b[3])
	if y < 1 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 {
		return 0, false
	}
	first, next := obpart.DayNumber(y, mo, 1), int32(0)
	if mo == 12 {
		next = obpart.DayNumber(y+1, 1, 1)
	} else {
		next = obpart.DayNumber(y, mo+1, 1)
	}
	if d > next-first { // 31 April, 29 February of a common year
		return 0, false
	}
	days := first + d - 1
	us := int64(days) * usecPerDay
	if len(b) >= 7 {
		h, mi, sec := int64(b[4]), int64(b[5]), int64(b[6])
		if h > 23 || mi > 59 || sec > 59 {
			return 0, false
		}
		us += ((h*60+mi)*60 + sec) * 1000000
	}
	if len(b) == 11 {
		frac := int64(b[7]) | int64(b[8])<<8 | int64(b[9])<<16 | int64(b[10])<<24
		if frac > 999999 {
			return 0, false
		}
		us += frac
	}
	return us, true
}

// map8 is the size of each fixed-size integer type.
var map8 = [256]int{myTiny: 1, myShort: 2, myYear: 2, myLong: 4, myInt24: 4, myLongLong: 8}

// signExtend reads the low size bytes of u as a signed integer.
func signExtend(u uint64, size int) int64 {
	shift := 64 - 8*uint(size)
	return int64(u<<shift) >> shift
}

// Param returns parameter i. It implements Params.
func (p *ExecParams) Param(i int) (Value, bool) {
	if i < 0 || i >= p.n {
		return Value{}, false
	}
	s := &p.slot[i]
	switch s.kind {
	case ValUnknown:
		return Value{}, false
	case ValString:
		return Value{Kind: ValString, Str: p.payload[s.off : s.off+s.len]}, true
	}
	return Value{Kind: s.kind, Int: s.v}, true
}

// Types returns the parameter types this execute used (2 bytes per
// parameter), borrowed from the payload or the kept types; nil when it
// had none. A session keeps a copy for later executes.
func (p *ExecParams) Types() []byte { return p.types }

// LiteralParams gives placeholder values from SQL literals, as a session
// knows the user variables of EXECUTE stmt USING @a, @b: '...' and "..."
// strings (with escapes), numbers, NULL, TRUE, FALSE, X'...', 0x...,
// N'...' and _utf8mb4'...'. Anything else is unknown.
type LiteralParams struct {
	vals []Value
	buf  []byte
}

// Reset makes p give the values of lits, one literal's text each. The
// values are copied: lits may change afterwards. p's buffers are reused,
// so Reset allocates only when they must grow.
func (p *LiteralParams) Reset(lits [][]byte) {
	need := 0
	for _, l := range lits {
		need += len(l) + 1
	}
	if cap(p.buf) < need {
		p.buf = make([]byte, 0, need)
	}
	p.buf, p.vals = p.buf[:0], p.vals[:0]
	for _, l := range lits {
		p.vals = append(p.vals, p.parse(l))
	}
}

// parse reads one literal, copying its bytes to p.buf (which does not
// grow: Reset reserved room).
func (p *LiteralParams) parse(text []byte) Value {
	var st calcState
	st.lx = lexer{s: text}
	st.s = text
	st.next()
	l, ls := st.value()
	if ls != litOK || st.tok.kind != tEOF || st.lx.unclosed {
		return Value{}
	}
	v := l.v
	if v.Kind == ValString {
		b := v.Str
		if l.inArena {
			b = st.arena[l.aoff : l.aoff+l.alen]
		}
		start := len(p.buf)
		p.buf = append(p.buf, b...)
		v.Str = p.buf[start:len(p.buf):len(p.buf)]
	}
	return v
}

// Param returns parameter i. It implements Params.
func (p *LiteralParams) Param(i int) (Value, bool) {
	if i < 0 || i >= len(p.vals) || p.vals[i].Kind == ValUnknown {
		return Value{}, false
	}
	return p.vals[i], true
}
