package mysqlproto

import (
	"errors"
	"fmt"
	"io"
)

// Packet framing constants.
const (
	// HeaderLen is the size of a packet header: 3-byte little-endian payload
	// length and a 1-byte sequence id.
	HeaderLen = 4
	// MaxPayloadLen is the largest payload one physical packet carries. A
	// logical packet of n bytes is sent as floor(n/MaxPayloadLen) full packets
	// followed by one packet of the remainder, which is empty when n is a
	// multiple of MaxPayloadLen (the classic trap).
	MaxPayloadLen = 1<<24 - 1
)

// Framing errors. They describe a broken peer: the connection cannot be used
// afterwards.
var (
	ErrPacketSequence = errors.New("mysqlproto: packet out of order")
	ErrPacketTooLarge = errors.New("mysqlproto: packet larger than the allowed maximum")
)

// ParseHeader decodes a packet header. b must hold at least HeaderLen bytes.
func ParseHeader(b []byte) (length int, seq uint8) {
	return int(b[0]) | int(b[1])<<8 | int(b[2])<<16, b[3]
}

// PutHeader encodes a packet header into b[:4].
func PutHeader(b []byte, length int, seq uint8) {
	b[0], b[1], b[2], b[3] = byte(length), byte(length>>8), byte(length>>16), seq
}

// AppendPacket appends payload to dst as one logical packet starting at
// sequence id seq, split at MaxPayloadLen, and returns the extended slice and
// the sequence id that follows it.
func AppendPacket(dst []byte, seq uint8, payload []byte) ([]byte, uint8) {
	for {
		n := min(len(payload), MaxPayloadLen)
		dst = append(dst, byte(n), byte(n>>8), byte(n>>16), seq)
		dst = append(dst, payload[:n]...)
		seq++
		payload = payload[n:]
		if n < MaxPayloadLen {
			return dst, seq
		}
	}
}

// PacketIO reads and writes logical packets on a byte stream and keeps the
// sequence id of the current command. It is meant for the handshake, the
// internal client and tools; the per-statement forwarding path in reactor
// streams bytes without it.
//
// Reads are not buffered beyond the packet being read, so no bytes of a later
// packet are consumed: after the handshake the stream can be handed to
// another reader (netpoll) without loss. Wrap the reader in a bufio.Reader
// when that does not matter and speed does.
//
// A PacketIO is used by one goroutine at a time.
type PacketIO struct {
	r       io.Reader
	w       io.Writer
	seq     uint8
	rbuf    []byte
	wbuf    []byte
	hdr     [HeaderLen]byte
	maxRead int
}

// DefaultMaxPacket is the largest logical packet PacketIO reads unless told
// otherwise with SetMaxPacket.
const DefaultMaxPacket = 64 << 20

// MaxLoginPacket is the cap a server end should set with SetMaxPacket
// while it reads a client's login (SSLRequest and HandshakeResponse), the
// one packet an unauthenticated peer can make it read. A real login is a
// few hundred bytes: user, a 20- to 32-byte scramble answer, database,
// plugin name and connection attributes (at most MaxConnectAttrs of them);
// 64 KiB leaves room for long attribute values. The caller restores its
// normal maximum after the login.
const MaxLoginPacket = 64 << 10

// NewPacketIO returns a PacketIO reading from r and writing to w.
func NewPacketIO(r io.Reader, w io.Writer) *PacketIO {
	return &PacketIO{r: r, w: w, maxRead: DefaultMaxPacket}
}

// SetMaxPacket sets the largest logical packet ReadPacket accepts
// (continuation packets included); a longer one is refused at the header
// that crosses n, with ErrPacketTooLarge. Use MaxLoginPacket for a login.
func (p *PacketIO) SetMaxPacket(n int) { p.maxRead = n }

// Sequence returns the sequence id the next packet will carry.
func (p *PacketIO) Sequence() uint8 { return p.seq }

// SetSequence sets the sequence id of the next packet.
func (p *PacketIO) SetSequence(seq uint8) { p.seq = seq }

// ResetSequence starts a new command: the next packet carries id 0.
func (p *PacketIO) ResetSequence() { p.seq = 0 }

// ReadPacket reads one logical packet, joining continuation packets, and
// checks its sequence ids. The payload is borrowed: it is valid until the
// next ReadPacket.
//
// Each header's length is checked against the maximum (SetMaxPacket)
// before any of its payload is read, so a packet that is too large is
// refused with ErrPacketTooLarge after its 4 header bytes. The length is
// otherwise only a claim: the buffer grows as the payload arrives (see
// appendReadFull), so a peer that announces 16 MiB and sends 68 bytes
// costs a few KiB, not 16 MiB.
func (p *PacketIO) ReadPacket() ([]byte, error) {
	p.rbuf = p.rbuf[:0]
	if cap(p.rbuf) > 1<<20 {
		p.rbuf = nil
	}
	for {
		if _, err := io.ReadFull(p.r, p.hdr[:]); err != nil {
			return nil, err
		}
		n, seq := ParseHeader(p.hdr[:])
		if seq != p.seq {
			return nil, fmt.Errorf("%w: got sequence %d, want %d", ErrPacketSequence, seq, p.seq)
		}
		p.seq++
		if len(p.rbuf)+n > p.maxRead {
			return nil, ErrPacketTooLarge
		}
		var err error
		if p.rbuf, err = appendReadFull(p.r, p.rbuf, n); err != nil {
			return nil, err
		}
		if n < MaxPayloadLen {
			return p.rbuf, nil
		}
	}
}

// WritePacket buffers payload as one logical packet; Flush sends it.
func (p *PacketIO) WritePacket(payload []byte) {
	p.wbuf, p.seq = AppendPacket(p.wbuf, p.seq, payload)
}

// WriteRaw buffers bytes that are already framed (headers included), for
// example a packet relayed from a peer whose sequence id was rewritten.
func (p *PacketIO) WriteRaw(b []byte) { p.wbuf = append(p.wbuf, b...) }

// Flush writes the buffered packets.
func (p *PacketIO) Flush() error {
	if len(p.wbuf) == 0 {
		return nil
	}
	_, err := p.w.Write(p.wbuf)
	if cap(p.wbuf) > 1<<20 {
		p.wbuf = nil
	} else {
		p.wbuf = p.wbuf[:0]
	}
	return err
}

// WritePacketFlush buffers one packet and flushes.
func (p *PacketIO) WritePacketFlush(payload []byte) error {
	p.WritePacket(payload)
	return p.Flush()
}

// growLen extends b by n bytes, reallocating when needed.
func growLen(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b[:len(b)+n]
	}
	nb := make([]byte, len(b)+n, max(len(b)+n, 2*cap(b), 256))
	copy(nb, b)
	return nb
}
