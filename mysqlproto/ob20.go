package mysqlproto

import (
	"encoding/binary"
	"errors"
)

// OceanBase 2.0 protocol (OB20) framing.
//
// Every OB20 frame is a MySQL compressed-protocol frame whose uncompressed
// length is 0, holding a 24-byte OB20 header, the payload and a 4-byte
// trailer:
//
//	offset size field
//	  0     3   compressed length = 24 + payload length + 4
//	  3     1   compressed sequence (writers copy the OB20 sequence here)
//	  4     3   uncompressed length, always 0
//	  7     2   magic 0x20AB
//	  9     2   version 20
//	 11     4   connection id
//	 15     3   request id
//	 18     1   sequence
//	 19     4   payload length
//	 23     4   flags
//	 27     2   reserved
//	 29     2   header checksum: CRC16 over bytes [0, 29)
//	 31     P   payload: [extra-info length(4) extra info] MySQL packets
//	 31+P   4   payload checksum: CRC32C over the payload
//
// All integers are little-endian. A checksum of 0 means "not computed" and
// is accepted by readers; writers always fill both.

// OB20 frame constants.
const (
	OB20Magic   = 0x20AB
	OB20Version = 20
	// OB20HeaderLen is the size of the OB20 header proper (after the
	// 7-byte compressed-protocol header).
	OB20HeaderLen = 24
	// OB20TrailerLen is the size of the payload checksum.
	OB20TrailerLen = 4
	// OB20FrameHeaderLen is everything before the payload.
	OB20FrameHeaderLen = CompressedHeaderLen + OB20HeaderLen
	// OB20FrameOverhead is what a frame adds around its payload.
	OB20FrameOverhead = OB20FrameHeaderLen + OB20TrailerLen
	// OB20MaxPayload is the largest payload one frame may carry: the
	// compressed length field must stay at or below 0xFFFFFE.
	OB20MaxPayload = 0xFFFFFE - OB20HeaderLen - OB20TrailerLen
	// ob20ChecksummedLen is how many frame bytes the header checksum covers.
	ob20ChecksummedLen = OB20FrameHeaderLen - 2
)

// OB20Flags is the flags field of an OB20 header.
type OB20Flags uint32

// OB20 header flags.
const (
	// OB20ExtraInfoExist: the payload starts with a 4-byte extra-info length
	// and the extra-info block.
	OB20ExtraInfoExist OB20Flags = 1 << 0
	// OB20LastPacket marks the final frame of a request or response.
	OB20LastPacket OB20Flags = 1 << 1
	// OB20ProxyReroute: a proxy tells the server it may answer with a
	// reroute hint.
	OB20ProxyReroute OB20Flags = 1 << 2
	// OB20NewExtraInfo: the extra info uses the type/length/value format
	// rather than ObObj key/value pairs.
	OB20NewExtraInfo OB20Flags = 1 << 3
	// OB20WeakRead: the statement is a weak-consistency read.
	OB20WeakRead OB20Flags = 1 << 4
	// OB20TransInternalRouting: transaction internal routing ("txn free
	// route"), set by the proxy and echoed by the server.
	OB20TransInternalRouting OB20Flags = 1 << 5
	// OB20ProxySwitchRoute: the request went to another server than the
	// previous one.
	OB20ProxySwitchRoute OB20Flags = 1 << 6
)

var ob20FlagNames = []string{"EXTRA_INFO_EXIST", "LAST_PACKET", "PROXY_REROUTE",
	"NEW_EXTRA_INFO", "WEAK_READ", "TRANS_INTERNAL_ROUTING", "PROXY_SWITCH_ROUTE"}

// Has reports whether every flag of g is set in f.
func (f OB20Flags) Has(g OB20Flags) bool { return f&g == g }

// String lists the set flags, e.g. "EXTRA_INFO_EXIST|LAST_PACKET".
func (f OB20Flags) String() string {
	if f == 0 {
		return "0"
	}
	return flagNames(uint64(f), ob20FlagNames)
}

// OB20Header is a decoded frame header: the compressed-protocol header and
// the OB20 header that follows it.
type OB20Header struct {
	// CompressedSeq is the compressed-protocol sequence byte. Writers set it
	// to Seq; readers do not rely on it.
	CompressedSeq uint8
	ConnectionID  uint32
	// RequestID is a 24-bit id chosen by the requester and echoed in every
	// frame of the response.
	RequestID uint32
	// Seq counts frames: 0 for the first frame of a request, continuing
	// through the response.
	Seq        uint8
	PayloadLen uint32
	Flags      OB20Flags
	// HeaderChecksum is the checksum found on the wire; encoders compute
	// their own and ignore this field.
	HeaderChecksum uint16
}

// FrameLen is the number of bytes the whole frame takes on the wire.
func (h *OB20Header) FrameLen() int { return OB20FrameOverhead + int(h.PayloadLen) }

// OB20 decoding errors. Each one means the peer is broken or the stream is
// corrupt: the connection cannot be used afterwards.
var (
	ErrOB20Malformed       = errors.New("mysqlproto: malformed OB20 frame")
	ErrOB20HeaderChecksum  = errors.New("mysqlproto: OB20 header checksum mismatch")
	ErrOB20PayloadChecksum = errors.New("mysqlproto: OB20 payload checksum mismatch")
	// ErrOB20Compressed reports a frame with a non-zero uncompressed
	// length: zlib-compressed OB20, which this package does not decode.
	ErrOB20Compressed = errors.New("mysqlproto: zlib-compressed OB20 frames are not supported")
	// ErrOB20Truncated reports a buffer that ends before the frame does.
	ErrOB20Truncated = errors.New("mysqlproto: OB20 frame truncated")
)

// OB20FrameLen returns the length of the frame starting at b, read from the
// compressed-protocol header. It needs only the first 3 bytes and reports
// false when b is shorter.
func OB20FrameLen(b []byte) (int, bool) {
	if len(b) < 3 {
		return 0, false
	}
	return CompressedHeaderLen + (int(b[0]) | int(b[1])<<8 | int(b[2])<<16), true
}

// ParseOB20Header decodes the 31 bytes of frame header at the start of b.
// It checks the magic, the version, the uncompressed length and the length
// fields against each other, and the header checksum unless it is 0.
func ParseOB20Header(b []byte) (OB20Header, error) {
	var h OB20Header
	if len(b) < OB20FrameHeaderLen {
		return h, ErrOB20Truncated
	}
	compLen := int(b[0]) | int(b[1])<<8 | int(b[2])<<16
	h.CompressedSeq = b[3]
	if b[4] != 0 || b[5] != 0 || b[6] != 0 {
		return h, ErrOB20Compressed
	}
	if binary.LittleEndian.Uint16(b[7:]) != OB20Magic || binary.LittleEndian.Uint16(b[9:]) != OB20Version {
		return h, ErrOB20Malformed
	}
	h.ConnectionID = binary.LittleEndian.Uint32(b[11:])
	h.RequestID = uint32(b[15]) | uint32(b[16])<<8 | uint32(b[17])<<16
	h.Seq = b[18]
	h.PayloadLen = binary.LittleEndian.Uint32(b[19:])
	h.Flags = OB20Flags(binary.LittleEndian.Uint32(b[23:]))
	h.HeaderChecksum = binary.LittleEndian.Uint16(b[29:])
	if uint64(compLen) != uint64(h.PayloadLen)+OB20HeaderLen+OB20TrailerLen {
		return h, ErrOB20Malformed
	}
	if h.HeaderChecksum != 0 && h.HeaderChecksum != CRC16(0, b[:ob20ChecksummedLen]) {
		return h, ErrOB20HeaderChecksum
	}
	return h, nil
}

// ParseOB20Frame decodes the whole frame at the start of b and verifies
// both checksums (a checksum of 0 is not checked). The payload is borrowed
// from b. n is the number of bytes the frame occupies. When b holds only
// part of the frame the error is ErrOB20Truncated; OB20FrameLen tells how
// much is needed.
func ParseOB20Frame(b []byte) (h OB20Header, payload []byte, n int, err error) {
	if h, err = ParseOB20Header(b); err != nil {
		return h, nil, 0, err
	}
	n = h.FrameLen()
	if len(b) < n {
		return h, nil, 0, ErrOB20Truncated
	}
	payload = b[OB20FrameHeaderLen : n-OB20TrailerLen]
	if err = checkOB20Payload(b[:n], payload); err != nil {
		return h, nil, 0, err
	}
	return h, payload, n, nil
}

// checkOB20Payload verifies the trailer of frame (exactly one frame)
// against its payload, unless the trailer is 0.
func checkOB20Payload(frame, payload []byte) error {
	if sum := binary.LittleEndian.Uint32(frame[len(frame)-OB20TrailerLen:]); sum != 0 && sum != CRC32C(0, payload) {
		return ErrOB20PayloadChecksum
	}
	return nil
}

// SplitOB20Payload separates a frame's payload into the extra-info block
// (without its length prefix; nil when the flags say there is none) and the
// MySQL packet bytes. Both are borrowed from payload. It reports false when
// the extra-info length runs past the payload.
func SplitOB20Payload(flags OB20Flags, payload []byte) (extra, packets []byte, ok bool) {
	if !flags.Has(OB20ExtraInfoExist) {
		return nil, payload, true
	}
	if len(payload) < 4 {
		return nil, nil, false
	}
	n := binary.LittleEndian.Uint32(payload)
	if uint64(n) > uint64(len(payload)-4) {
		return nil, nil, false
	}
	return payload[4 : 4+n], payload[4+n:], true
}

// PutOB20Header writes the 31-byte frame header for h into b[:31] and
// computes the header checksum. h.PayloadLen must already be set; the
// compressed length is derived from it.
func PutOB20Header(b []byte, h OB20Header) {
	_ = b[OB20FrameHeaderLen-1]
	compLen := int(h.PayloadLen) + OB20HeaderLen + OB20TrailerLen
	b[0], b[1], b[2], b[3] = byte(compLen), byte(compLen>>8), byte(compLen>>16), h.CompressedSeq
	b[4], b[5], b[6] = 0, 0, 0
	binary.LittleEndian.PutUint16(b[7:], OB20Magic)
	binary.LittleEndian.PutUint16(b[9:], OB20Version)
	binary.LittleEndian.PutUint32(b[11:], h.ConnectionID)
	b[15], b[16], b[17] = byte(h.RequestID), byte(h.RequestID>>8), byte(h.RequestID>>16)
	b[18] = h.Seq
	binary.LittleEndian.PutUint32(b[19:], h.PayloadLen)
	binary.LittleEndian.PutUint32(b[23:], uint32(h.Flags))
	b[27], b[28] = 0, 0
	binary.LittleEndian.PutUint16(b[29:], CRC16(0, b[:ob20ChecksummedLen]))
}

// AppendOB20Frame appends one complete frame to dst: the header from h, the
// extra-info block when extra is not nil (its length prefix is written and
// OB20ExtraInfoExist set; with a nil extra the flag is cleared), the MySQL
// packet bytes, and the payload checksum. h.PayloadLen is computed. The
// payload must not exceed OB20MaxPayload bytes; OB20Framer splits longer
// data itself. Apart from growing dst, it does not allocate.
func AppendOB20Frame(dst []byte, h OB20Header, extra, packets []byte) []byte {
	start := len(dst)
	dst = growLen(dst, OB20FrameLenFor(extra, packets))
	PutOB20Frame(dst[start:], h, extra, packets)
	return dst
}

// OB20FrameLenFor is the length of the frame that carries extra (nil for
// none) and packets.
func OB20FrameLenFor(extra, packets []byte) int {
	n := OB20FrameOverhead + len(packets)
	if extra != nil {
		n += 4 + len(extra)
	}
	return n
}

// PutOB20Frame writes the frame AppendOB20Frame would append into the
// start of b, which must hold OB20FrameLenFor(extra, packets) bytes, and
// returns that length.
func PutOB20Frame(b []byte, h OB20Header, extra, packets []byte) int {
	n := OB20FrameLenFor(extra, packets)
	b = b[:n]
	if extra != nil {
		h.Flags |= OB20ExtraInfoExist
	} else {
		h.Flags &^= OB20ExtraInfoExist
	}
	h.PayloadLen = uint32(n - OB20FrameOverhead)
	PutOB20Header(b, h)
	pos := OB20FrameHeaderLen
	if extra != nil {
		binary.LittleEndian.PutUint32(b[pos:], uint32(len(extra)))
		pos += 4 + copy(b[pos+4:], extra)
	}
	copy(b[pos:], packets)
	binary.LittleEndian.PutUint32(b[n-OB20TrailerLen:], CRC32C(0, b[OB20FrameHeaderLen:n-OB20TrailerLen]))
	return n
}
