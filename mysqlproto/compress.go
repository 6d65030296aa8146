package mysqlproto

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"io"
)

// The MySQL compressed protocol: each frame is a 7-byte header
//
//	compressed length (3, LE) | sequence (1) | uncompressed length (3, LE)
//
// followed by the compressed length's worth of payload. An uncompressed
// length of 0 means the payload is stored as is; otherwise the payload is a
// zlib stream (RFC 1950) that inflates to exactly that many bytes. The
// inflated bytes are an ordinary stream of MySQL packets, which may start or
// end in the middle of a packet. The sequence byte starts at 0 for every
// command and counts frames through the response, independently of the
// sequence ids of the packets inside. OceanBase calls the same framing the
// "checksum" protocol (OB capability CHECKSUM), because zlib's Adler-32
// protects the payload.

// CompressedHeaderLen is the size of a compressed-protocol frame header.
const CompressedHeaderLen = 7

// Compression levels for Compressor and CompressedFramer.
const (
	// CompressNone sends payloads as they are (uncompressed length 0).
	CompressNone = -1
	// CompressStored wraps payloads in a zlib stream of stored (not
	// deflated) blocks, as ODP does at level 0: the receiver still gets
	// Adler-32 protection at almost no CPU cost.
	CompressStored = 0
	// Levels 1 (fastest) to 9 (smallest) deflate with compress/zlib.
)

// maxCompressChunk bounds the bytes put in one frame so that the frame's
// payload, which zlib may make slightly larger than its input, still fits
// the 3-byte length field.
const maxCompressChunk = MaxPayloadLen - 8<<10

// CompressMinLen is the payload size below which MySQL servers and
// CompressedFramer skip compression and send the bytes raw.
const CompressMinLen = 50

// ErrCompressedFrame reports a compressed frame that does not decode: a
// broken zlib stream or one that inflates to another length than its
// header says.
var ErrCompressedFrame = errors.New("mysqlproto: malformed compressed frame")

// ParseCompressedHeader decodes a frame header. b must hold at least
// CompressedHeaderLen bytes.
func ParseCompressedHeader(b []byte) (compLen int, seq uint8, uncompLen int) {
	return int(b[0]) | int(b[1])<<8 | int(b[2])<<16, b[3], int(b[4]) | int(b[5])<<8 | int(b[6])<<16
}

// PutCompressedHeader encodes a frame header into b[:7].
func PutCompressedHeader(b []byte, compLen int, seq uint8, uncompLen int) {
	_ = b[CompressedHeaderLen-1]
	b[0], b[1], b[2], b[3] = byte(compLen), byte(compLen>>8), byte(compLen>>16), seq
	b[4], b[5], b[6] = byte(uncompLen), byte(uncompLen>>8), byte(uncompLen>>16)
}

// ParseCompressedFrame decodes the frame at the start of b without
// inflating it. The payload is borrowed from b; n is the frame's length.
// It reports false when b holds less than a whole frame.
func ParseCompressedFrame(b []byte) (seq uint8, payload []byte, uncompLen, n int, ok bool) {
	if len(b) < CompressedHeaderLen {
		return 0, nil, 0, 0, false
	}
	compLen, seq, uncompLen := ParseCompressedHeader(b)
	n = CompressedHeaderLen + compLen
	if len(b) < n {
		return 0, nil, 0, 0, false
	}
	return seq, b[CompressedHeaderLen:n], uncompLen, n, true
}

// storedBlockMax is the largest stored deflate block.
const storedBlockMax = 0xffff

// AppendStoredZlib appends data as a zlib stream of stored blocks: header
// 78 01, blocks of at most 65535 bytes (final flag, LEN, NLEN, bytes), and
// the Adler-32 of data, big-endian. It does not allocate beyond growing dst.
func AppendStoredZlib(dst, data []byte) []byte {
	sum := adler32.Checksum(data)
	dst = append(dst, 0x78, 0x01)
	for first := true; first || len(data) > 0; first = false {
		n := min(len(data), storedBlockMax)
		final := byte(0)
		if n == len(data) {
			final = 1
		}
		dst = append(dst, final, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8))
		dst = append(dst, data[:n]...)
		data = data[n:]
	}
	return binary.BigEndian.AppendUint32(dst, sum)
}

// Compressor builds compressed-protocol frames. It keeps its zlib state
// between frames, so steady use does not allocate. A Compressor is used by
// one goroutine at a time.
type Compressor struct {
	level  int
	minLen int
	zw     *zlib.Writer
	zbuf   bytes.Buffer
}

// NewCompressor returns a Compressor for a level: CompressNone,
// CompressStored, or a zlib level from 1 to 9. Payloads shorter than
// CompressMinLen are always sent raw.
func NewCompressor(level int) *Compressor {
	return &Compressor{level: level, minLen: CompressMinLen}
}

// SetMinLen changes the size below which payloads are sent raw (0 compresses
// everything).
func (c *Compressor) SetMinLen(n int) { c.minLen = n }

// AppendFrame appends one frame holding data with sequence byte seq. data
// must not exceed MaxPayloadLen bytes; when zlib would make it larger than
// a frame can hold, the frame carries data raw.
func (c *Compressor) AppendFrame(dst []byte, seq uint8, data []byte) []byte {
	start := len(dst)
	dst = growLen(dst, CompressedHeaderLen)
	if c.level == CompressNone || len(data) < c.minLen {
		dst = append(dst, data...)
		PutCompressedHeader(dst[start:], len(data), seq, 0)
		return dst
	}
	if c.level == CompressStored {
		dst = AppendStoredZlib(dst, data)
	} else {
		c.zbuf.Reset()
		if c.zw == nil {
			zw, err := zlib.NewWriterLevel(&c.zbuf, c.level)
			if err != nil { // a bad level: fall back to stored blocks
				c.level = CompressStored
				dst = AppendStoredZlib(dst, data)
				PutCompressedHeader(dst[start:], len(dst)-start-CompressedHeaderLen, seq, len(data))
				return dst
			}
			c.zw = zw
		} else {
			c.zw.Reset(&c.zbuf)
		}
		_, _ = c.zw.Write(data) // writes to a bytes.Buffer do not fail
		_ = c.zw.Close()
		dst = append(dst, c.zbuf.Bytes()...)
	}
	if len(dst)-start-CompressedHeaderLen > MaxPayloadLen {
		dst = append(dst[:start+CompressedHeaderLen], data...)
		PutCompressedHeader(dst[start:], len(data), seq, 0)
		return dst
	}
	PutCompressedHeader(dst[start:], len(dst)-start-CompressedHeaderLen, seq, len(data))
	return dst
}

// maxDeflateRatio bounds what one byte of a deflate stream can inflate to:
// a 258-byte match costs at least two bits, so no stream yields more than
// 1032 bytes per byte (RFC 1951; zlib's own docs give the same limit).
const maxDeflateRatio = 1032

// checkInflatedLen rejects an uncompressed length that the frame could
// not legally produce: negative, larger than a frame's 3-byte field
// allows, or more than compLen bytes of deflate can yield. A zlib bomb
// thus costs at most its honest output, which the caller's frame size
// already bounds.
func checkInflatedLen(compLen, uncompLen int) error {
	if uncompLen < 0 || uncompLen > MaxPayloadLen || uint64(uncompLen) > uint64(compLen)*maxDeflateRatio {
		return fmt.Errorf("%w: %d compressed bytes cannot inflate to %d", ErrCompressedFrame, compLen, uncompLen)
	}
	return nil
}

// Decompressor inflates compressed-protocol payloads, reusing its zlib
// state between frames. A Decompressor is used by one goroutine at a time.
type Decompressor struct {
	src bytes.Reader
	zr  io.ReadCloser
}

// AppendInflated appends the uncompLen bytes that payload inflates to. A
// payload whose uncompressed length is 0 is appended as is.
//
// uncompLen is a claim of the peer, bounded three ways: it is checked
// before inflating against MaxPayloadLen and against what len(payload)
// bytes of zlib can possibly yield (maxDeflateRatio), inflation stops at
// uncompLen bytes (a stream that yields more is an error, after at most
// one more byte is asked for), and the output grows as bytes are produced,
// so a header that lies costs no more memory than the stream really
// yields.
func (d *Decompressor) AppendInflated(dst, payload []byte, uncompLen int) ([]byte, error) {
	if uncompLen == 0 {
		return append(dst, payload...), nil
	}
	if err := checkInflatedLen(len(payload), uncompLen); err != nil {
		return dst, err
	}
	d.src.Reset(payload)
	if d.zr == nil {
		zr, err := zlib.NewReader(&d.src)
		if err != nil {
			return dst, fmt.Errorf("%w: %v", ErrCompressedFrame, err)
		}
		d.zr = zr
	} else if err := d.zr.(zlib.Resetter).Reset(&d.src, nil); err != nil {
		return dst, fmt.Errorf("%w: %v", ErrCompressedFrame, err)
	}
	start := len(dst)
	for len(dst)-start < uncompLen {
		n := min(uncompLen-(len(dst)-start), 64<<10)
		pos := len(dst)
		dst = growLen(dst, n)
		got, err := io.ReadFull(d.zr, dst[pos:])
		dst = dst[:pos+got]
		if err != nil {
			return dst, fmt.Errorf("%w: inflated %d bytes, header says %d", ErrCompressedFrame, len(dst)-start, uncompLen)
		}
	}
	var one [1]byte
	if n, err := d.zr.Read(one[:]); n != 0 || err != io.EOF {
		return dst, fmt.Errorf("%w: more than %d inflated bytes or bad checksum", ErrCompressedFrame, uncompLen)
	}
	return dst, nil
}

// CompressedFramer carries a MySQL packet stream over the compressed
// protocol on one connection. Read returns the inflated packet bytes;
// Write sends bytes as frames. It tracks the frame sequence as the role
// requires: a server continues from the request's last frame, a client
// starts each command at 0 (call BeginRequest) and checks the response.
// A CompressedFramer is used by one reading and one writing goroutine at a
// time (reads and writes do not share state except the sequence, which the
// request/response turn-taking of the protocol serialises).
type CompressedFramer struct {
	r    io.Reader
	w    io.Writer
	role FramerRole

	comp           *Compressor
	decomp         Decompressor
	hdr            [CompressedHeaderLen]byte
	rbuf           []byte
	out            []byte
	unread         []byte
	wbuf           []byte
	nextSeq        uint8
	lastSeq        uint8
	compressedRead bool
	compressedN    int // frames read with a zlib payload
}

// NewCompressedFramer returns a framer reading frames from r and writing
// them to w at the given compression level.
func NewCompressedFramer(r io.Reader, w io.Writer, role FramerRole, level int) *CompressedFramer {
	return &CompressedFramer{r: r, w: w, role: role, comp: NewCompressor(level)}
}

// Compressor returns the framer's compressor, for SetMinLen.
func (f *CompressedFramer) Compressor() *Compressor { return f.comp }

// BeginRequest starts a new command on a client framer: the next frame
// written carries sequence 0.
func (f *CompressedFramer) BeginRequest() { f.nextSeq = 0 }

// LastSequence is the sequence byte of the last frame read.
func (f *CompressedFramer) LastSequence() uint8 { return f.lastSeq }

// LastWasCompressed reports whether the last frame read had a zlib payload.
func (f *CompressedFramer) LastWasCompressed() bool { return f.compressedRead }

// CompressedFramesRead counts the frames read that had a zlib payload.
func (f *CompressedFramer) CompressedFramesRead() int { return f.compressedN }

// ReadFrame reads one frame and returns its inflated content, borrowed
// until the next read. Bytes of an earlier frame not yet consumed by Read
// are dropped.
func (f *CompressedFramer) ReadFrame() ([]byte, error) {
	if _, err := io.ReadFull(f.r, f.hdr[:]); err != nil {
		return nil, err
	}
	compLen, seq, uncompLen := ParseCompressedHeader(f.hdr[:])
	if f.role == FramerClient && seq != f.nextSeq {
		return nil, fmt.Errorf("%w: compressed sequence %d, want %d", ErrPacketSequence, seq, f.nextSeq)
	}
	f.lastSeq, f.nextSeq = seq, seq+1
	// compLen is a claim: the buffer grows as the payload arrives.
	var err error
	if f.rbuf, err = appendReadFull(f.r, f.rbuf[:0], compLen); err != nil {
		return nil, err
	}
	f.compressedRead = uncompLen != 0
	if f.compressedRead {
		f.compressedN++
	}
	if uncompLen == 0 {
		f.unread = f.rbuf
		return f.rbuf, nil
	}
	out, err := f.decomp.AppendInflated(f.out[:0], f.rbuf, uncompLen)
	f.out = out
	if err != nil {
		return nil, err
	}
	f.unread = f.out
	return f.out, nil
}

// Read implements io.Reader over the inflated packet stream.
func (f *CompressedFramer) Read(p []byte) (int, error) {
	for len(f.unread) == 0 {
		if _, err := f.ReadFrame(); err != nil {
			return 0, err
		}
	}
	n := copy(p, f.unread)
	f.unread = f.unread[n:]
	return n, nil
}

// ShrinkBuffers drops buffers that grew past 1 MiB for a large frame; call
// it between requests, when nothing is buffered.
func (f *CompressedFramer) ShrinkBuffers() {
	if len(f.unread) == 0 {
		if cap(f.rbuf) > 1<<20 {
			f.rbuf, f.unread = nil, nil
		}
		if cap(f.out) > 1<<20 {
			f.out, f.unread = nil, nil
		}
	}
}

// Buffered reports how many inflated bytes are waiting to be read.
func (f *CompressedFramer) Buffered() int { return len(f.unread) }

// Write sends p as one or more frames (a new frame about every 16 MiB).
func (f *CompressedFramer) Write(p []byte) (int, error) {
	total := len(p)
	f.wbuf = f.wbuf[:0]
	for first := true; first || len(p) > 0; first = false {
		n := min(len(p), maxCompressChunk)
		f.wbuf = f.comp.AppendFrame(f.wbuf, f.nextSeq, p[:n])
		f.nextSeq++
		p = p[n:]
	}
	_, err := f.w.Write(f.wbuf)
	if cap(f.wbuf) > 1<<20 {
		f.wbuf = nil
	}
	if err != nil {
		return 0, err
	}
	return total, nil
}
