package mysqlproto

import (
	"errors"
	"fmt"
	"io"
)

// FramerRole says which end of a connection a framer serves, which decides
// how it numbers and checks frames.
type FramerRole uint8

const (
	// FramerServer reads requests and writes responses. Response frames
	// continue the sequence of the request they answer and echo its
	// request id.
	FramerServer FramerRole = iota
	// FramerClient writes requests and reads responses. Each request
	// starts at sequence 0 (BeginRequest); response frames must carry the
	// request's id and continue its sequence.
	FramerClient
)

// ErrOB20Sequence reports a frame whose connection id, request id or
// sequence does not follow the conversation.
var ErrOB20Sequence = errors.New("mysqlproto: OB20 frame out of order")

// OB20Framer carries a MySQL packet stream over OB20 frames on one
// connection, which is what both ends do after an OB20 login. Read returns
// the MySQL packet bytes of incoming frames; Write and WriteFrame send
// outgoing bytes as frames.
//
// Checks on frames read (each failure is an error after which the
// connection cannot be used):
//   - both checksums, unless they are 0 or SetVerify(false) was called;
//   - a client checks that a response carries its connection id, the
//     request id it sent and the next sequence number;
//   - a server checks the connection id (when it was given one) and that a
//     frame with a non-zero sequence continues the current request.
//
// Frames written carry the framer's connection id, the current request id
// (a client's own, a server's last received) and consecutive sequence
// numbers, with the compressed-protocol sequence byte equal to the OB20
// one and both checksums filled.
//
// An OB20Framer is used by one reading and one writing goroutine at a time;
// the request/response turn-taking of the protocol orders their use of the
// shared sequence.
type OB20Framer struct {
	w      io.Writer
	lender OutputLender // w, when it lends its buffer
	role   FramerRole
	connID uint32
	verify bool

	hdr    OB20Header
	in     readAhead
	extra  []byte
	unread []byte // packet bytes of the last frame not yet read; borrowed from in

	requestID     uint32
	nextRequestID uint32
	nextSeq       uint8
	maxPayload    int
	wbuf          []byte
}

// NewOB20Framer returns a framer for one end of a connection. connID is the
// server's connection id (the thread id of its handshake); a server framer
// given 0 accepts any connection id.
//
// When w is also an OutputLender, frames are written straight into the
// buffer it lends, with no copy of the framer's own.
func NewOB20Framer(r io.Reader, w io.Writer, role FramerRole, connID uint32) *OB20Framer {
	f := &OB20Framer{in: readAhead{r: r}, w: w, role: role, connID: connID, verify: true,
		maxPayload: OB20MaxPayload, nextRequestID: 1}
	f.lender, _ = w.(OutputLender)
	return f
}

// OutputLender is an output that lends its own buffer: LendOutput returns
// n bytes for the caller to fill, and SendLent sends everything filled
// since the last SendLent, waiting until the connection took it. After a
// LendOutput that returned no error the framer always calls SendLent,
// once, even when it has nothing more to say; the lent bytes belong to
// the output from then on.
type OutputLender interface {
	LendOutput(n int) ([]byte, error)
	SendLent() error
}

// SetReadBuffer sets how frames are read. Each read asks the connection
// for up to ahead bytes (DefaultReadAhead when ahead <= 0), or for the rest
// of a frame larger than that, so that one read usually brings a whole
// response; no read happens before the caller asked for bytes beyond what
// is buffered, so at most ahead bytes (or one frame) are held per
// connection however slowly the caller consumes them. With a pool the
// buffer is borrowed from it while bytes are buffered and given back as
// soon as Read has handed out the last of them; without one the framer
// keeps its own. Call it before the first read.
func (f *OB20Framer) SetReadBuffer(ahead int, pool BufferPool) {
	f.in.limit, f.in.pool = ahead, pool
}

// SetVerify turns checksum verification of frames read on or off. ODP does
// not verify requests from its clients; obgate's servers always verify.
func (f *OB20Framer) SetVerify(on bool) { f.verify = on }

// SetMaxPayload sets the largest payload of a frame written (ODP cuts
// requests to servers at 8 MiB). Values outside 1..OB20MaxPayload mean
// OB20MaxPayload.
func (f *OB20Framer) SetMaxPayload(n int) {
	if n <= 0 || n > OB20MaxPayload {
		n = OB20MaxPayload
	}
	f.maxPayload = n
}

// SetNextRequestID sets the id BeginRequest hands out next (ODP seeds it at
// random; tests want a fixed value). Only the low 24 bits are used.
func (f *OB20Framer) SetNextRequestID(id uint32) { f.nextRequestID = id & 0xffffff }

// BeginRequest starts a new request on a client framer: it takes the next
// request id and resets the sequence to 0. It returns the request id.
func (f *OB20Framer) BeginRequest() uint32 {
	f.requestID = f.nextRequestID
	f.nextRequestID = (f.nextRequestID + 1) & 0xffffff
	f.nextSeq = 0
	return f.requestID
}

// RequestID is the id of the current request.
func (f *OB20Framer) RequestID() uint32 { return f.requestID }

// NextSequence is the sequence number the next frame written will carry,
// and the one a client expects on the next frame read.
func (f *OB20Framer) NextSequence() uint8 { return f.nextSeq }

// Header returns the header of the last frame read.
func (f *OB20Framer) Header() OB20Header { return f.hdr }

// ReadFrame reads the next frame and returns its header, its extra-info
// block (nil when absent) and its MySQL packet bytes; the slices are
// borrowed until the next read. Packet bytes of an earlier frame not yet
// consumed by Read are dropped. The frame's bytes usually arrived with an
// earlier read (see SetReadBuffer); the header checksum is verified once,
// the payload checksum once.
func (f *OB20Framer) ReadFrame() (h OB20Header, extra, packets []byte, err error) {
	f.extra, f.unread = nil, nil
	if err = f.in.fill(OB20FrameHeaderLen); err != nil {
		return h, nil, nil, err
	}
	if h, err = f.parseHeader(f.in.peek(OB20FrameHeaderLen)); err != nil {
		return h, nil, nil, err
	}
	n := h.FrameLen()
	if err = f.in.fill(n); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return h, nil, nil, err
	}
	frame := f.in.peek(n)
	f.in.consume(n)
	if extra, packets, err = f.accept(h, frame); err != nil {
		return h, nil, nil, err
	}
	f.unread = packets
	return h, extra, packets, nil
}

// AcceptFrame takes in a frame that the caller read from the connection
// itself, exactly one whole frame (OB20FrameLen of its start), with the
// checks and bookkeeping of ReadFrame; extra and packets are borrowed
// from frame. It is for a caller that can look at the connection's own
// buffer: the frame then needs no copy to be unframed. Mixing it with
// ReadFrame and Read is allowed only while Buffered is 0.
func (f *OB20Framer) AcceptFrame(frame []byte) (h OB20Header, extra, packets []byte, err error) {
	f.extra, f.unread = nil, nil
	if h, err = f.parseHeader(frame); err != nil {
		return h, nil, nil, err
	}
	if h.FrameLen() != len(frame) {
		return h, nil, nil, ErrOB20Malformed
	}
	extra, packets, err = f.accept(h, frame)
	return h, extra, packets, err
}

// parseHeader decodes a frame header, ignoring a wrong header checksum
// when verification is off.
func (f *OB20Framer) parseHeader(b []byte) (OB20Header, error) {
	h, err := ParseOB20Header(b)
	if err == ErrOB20HeaderChecksum && !f.verify {
		err = nil
	}
	return h, err
}

// accept verifies the payload of frame (whose header is h), checks its
// place in the conversation and splits it.
func (f *OB20Framer) accept(h OB20Header, frame []byte) (extra, packets []byte, err error) {
	payload := frame[OB20FrameHeaderLen : len(frame)-OB20TrailerLen]
	if f.verify {
		if err = checkOB20Payload(frame, payload); err != nil {
			return nil, nil, err
		}
	}
	if err = f.checkOrder(h); err != nil {
		return nil, nil, err
	}
	extra, packets, ok := SplitOB20Payload(h.Flags, payload)
	if !ok {
		return nil, nil, ErrOB20Malformed
	}
	f.hdr, f.extra = h, extra
	return extra, packets, nil
}

func (f *OB20Framer) checkOrder(h OB20Header) error {
	switch f.role {
	case FramerClient:
		if f.connID != 0 && h.ConnectionID != f.connID {
			return fmt.Errorf("%w: connection id %d, want %d", ErrOB20Sequence, h.ConnectionID, f.connID)
		}
		if h.RequestID != f.requestID {
			return fmt.Errorf("%w: request id %d, want %d", ErrOB20Sequence, h.RequestID, f.requestID)
		}
		if h.Seq != f.nextSeq {
			return fmt.Errorf("%w: sequence %d, want %d", ErrOB20Sequence, h.Seq, f.nextSeq)
		}
	default:
		if f.connID != 0 && h.ConnectionID != f.connID {
			return fmt.Errorf("%w: connection id %d, want %d", ErrOB20Sequence, h.ConnectionID, f.connID)
		}
		if h.Seq != 0 && (h.Seq != f.nextSeq || h.RequestID != f.requestID) {
			return fmt.Errorf("%w: sequence %d of request %d, want %d of request %d",
				ErrOB20Sequence, h.Seq, h.RequestID, f.nextSeq, f.requestID)
		}
		f.requestID = h.RequestID
	}
	f.nextSeq = h.Seq + 1
	return nil
}

// Read implements io.Reader over the MySQL packet bytes of incoming frames.
func (f *OB20Framer) Read(p []byte) (int, error) {
	for len(f.unread) == 0 {
		if _, _, _, err := f.ReadFrame(); err != nil {
			return 0, err
		}
	}
	n := copy(p, f.unread)
	f.unread = f.unread[n:]
	if len(f.unread) == 0 {
		f.extra = nil
		f.in.release()
	}
	return n, nil
}

// ShrinkBuffers drops read and write buffers that grew past 1 MiB for a
// large frame, so that a connection that once carried one does not keep
// the memory; call it between requests, when nothing is buffered.
func (f *OB20Framer) ShrinkBuffers() {
	if len(f.unread) == 0 {
		f.extra = nil
		f.in.shrink(1 << 20)
	}
	if cap(f.wbuf) > 1<<20 {
		f.wbuf = nil
	}
}

// Buffered reports how many bytes were received and not yet read: packet
// bytes of the last frame, and bytes read ahead of it (the start of later
// frames, counted whole). Outside a response, anything buffered means the
// peer sent what was not asked for.
func (f *OB20Framer) Buffered() int { return len(f.unread) + f.in.buffered() }

// Write sends p as the final part of the current request or response: as
// one frame with OB20LastPacket, or several when p is larger than the
// maximum payload. It is what a PacketIO flushing whole requests or
// responses needs.
func (f *OB20Framer) Write(p []byte) (int, error) {
	if err := f.WriteFrame(p, nil, OB20LastPacket); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteFrame sends packets (and, when extra is not nil, an extra-info block
// in the first frame) as one frame, or several when they exceed the maximum
// payload. flags are copied into every frame except that OB20LastPacket is
// kept only on the final one and OB20ExtraInfoExist follows extra. Steady
// use does not allocate.
func (f *OB20Framer) WriteFrame(packets, extra []byte, flags OB20Flags) error {
	if extra != nil && f.maxPayload < 4+len(extra) {
		return fmt.Errorf("mysqlproto: OB20 extra info of %d bytes does not fit a frame", len(extra))
	}
	if f.lender != nil {
		return f.writeLent(packets, extra, flags)
	}
	f.wbuf = f.wbuf[:0]
	f.frames(packets, extra, flags, func(h OB20Header, ex, p []byte) {
		f.wbuf = AppendOB20Frame(f.wbuf, h, ex, p)
	})
	_, err := f.w.Write(f.wbuf)
	if cap(f.wbuf) > 1<<20 {
		f.wbuf = nil
	}
	return err
}

// AppendFrames appends to dst the frames WriteFrame would send for
// packets, extra and flags, and advances the sequence as sending them
// would; the caller sends the bytes itself (for example without waiting,
// from an event loop). Steady use does not allocate beyond dst's growth.
func (f *OB20Framer) AppendFrames(dst, packets, extra []byte, flags OB20Flags) ([]byte, error) {
	if extra != nil && f.maxPayload < 4+len(extra) {
		return dst, fmt.Errorf("mysqlproto: OB20 extra info of %d bytes does not fit a frame", len(extra))
	}
	f.frames(packets, extra, flags, func(h OB20Header, ex, p []byte) {
		dst = AppendOB20Frame(dst, h, ex, p)
	})
	return dst, nil
}

// FramesLen is how many bytes AppendFrames would append for packets and
// extra.
func (f *OB20Framer) FramesLen(packets, extra []byte) int {
	total, seq := 0, f.nextSeq
	f.frames(packets, extra, 0, func(_ OB20Header, ex, p []byte) {
		total += OB20FrameLenFor(ex, p)
	})
	f.nextSeq = seq
	return total
}

// LastFrameRead reports whether the last frame read or accepted was the
// final one of its response (OB20LastPacket) and all its packet bytes
// were read: FinishResponse would return at once.
func (f *OB20Framer) LastFrameRead() bool {
	return len(f.unread) == 0 && f.hdr.Flags&OB20LastPacket != 0
}

// Unread is the number of packet bytes of the last frame not yet read.
func (f *OB20Framer) Unread() int { return len(f.unread) }

// writeLent encodes the frames into the buffer the writer lends.
func (f *OB20Framer) writeLent(packets, extra []byte, flags OB20Flags) error {
	total, seq := 0, f.nextSeq
	f.frames(packets, extra, flags, func(_ OB20Header, ex, p []byte) {
		total += OB20FrameLenFor(ex, p)
	})
	f.nextSeq = seq // the frames were only measured
	buf, err := f.lender.LendOutput(total)
	if err != nil {
		return err
	}
	pos := 0
	f.frames(packets, extra, flags, func(h OB20Header, ex, p []byte) {
		pos += PutOB20Frame(buf[pos:], h, ex, p)
	})
	return f.lender.SendLent()
}

// frames cuts packets (and extra, in the first) into frames of at most the
// maximum payload and calls put with each one's header, advancing the
// sequence. The caller checked that extra fits.
func (f *OB20Framer) frames(packets, extra []byte, flags OB20Flags, put func(h OB20Header, extra, packets []byte)) {
	for first := true; first || len(packets) > 0; first = false {
		room := f.maxPayload
		var ex []byte
		if first && extra != nil {
			ex = extra
			room -= 4 + len(extra)
		}
		n := min(len(packets), room)
		fl := flags
		if n < len(packets) {
			fl &^= OB20LastPacket
		}
		put(OB20Header{CompressedSeq: f.nextSeq, ConnectionID: f.connID, RequestID: f.requestID,
			Seq: f.nextSeq, Flags: fl}, ex, packets[:n])
		f.nextSeq++
		packets = packets[n:]
	}
}
