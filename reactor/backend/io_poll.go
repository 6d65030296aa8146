package backend

import (
	"errors"
	"fmt"

	"obgate/mysqlproto"
	"obgate/reactor/connio"
)

// The statement path on the poller reads and writes server sessions
// without waiting. What a serverIO does there, for the two kinds the
// poller serves: plain MySQL framing and OB 2.0, both on a netpoll
// connection (PolledConn). Compressed sessions, and sessions whose
// framer holds read-ahead bytes of its own (a frame too large to unframe
// in place), go to a goroutine.
//
// Only the owner of the session's command calls these, on the poller.
// Each reports errWouldBlock when the bytes it needs have not arrived
// (the read bound was told, so the poller reads on and calls again) and
// errHandOff for whatever must be answered by a goroutine that may wait:
// a connection that ended, a frame that does not fit, a broken frame
// (the goroutine meets the same bytes and answers them).

// errWouldBlock stops work on the poller where it would wait for the
// server; errHandOff where the rest must run on a goroutine that may
// wait (the client did not take a write whole, an upload, a failed
// server connection).
var (
	ErrWouldBlock = errors.New("relay waits for the server")
	ErrHandOff    = errors.New("relay goes on off the poller")
)

// PollIO is a serverIO the poller can drive.
type PollIO interface {
	// TryRead copies response bytes that have arrived into p.
	TryRead(p []byte) (int, error)
	// TryFinish is finishResponse without waiting.
	TryFinish() error
}

// PollIO returns b's serverIO when the poller can read and write it
// without waiting, else nil.
func (b *Conn) PollIO() PollIO {
	if _, ok := b.NetConn.(*PolledConn); !ok || b.Comp != nil {
		return nil
	}
	switch sio := b.serverIO().(type) {
	case *ob20ServerIO:
		if sio.fr.Buffered() > 0 {
			return nil
		}
		return sio
	case *plainServerIO:
		return sio
	}
	return nil
}

// TryRequest sends the one-piece request p without waiting, as far as
// the kernel takes it now. rest is nil when all of it went out; p itself
// when nothing did (it is sent the usual way, framed again); else (raw)
// the bytes still to go out exactly as they are: for OB 2.0 the rest of
// the frames, in owned, a pooled chunk the caller gives back with
// connio.PutChunk once they went out. With more, the next request to b follows at
// once (a client's COM_STMT_CLOSE with its next command behind it): the
// kernel sends the two together (connio.WriteNowMore).
func (b *Conn) TryRequest(p []byte, more bool) (rest, owned []byte, raw bool) {
	np, ok := b.NetConn.(*PolledConn)
	if !ok {
		return p, nil, false
	}
	sio, framed := b.serverIO().(*ob20ServerIO)
	if !framed {
		k, _ := np.tryWrite(p, more)
		if k == len(p) {
			return nil, nil, false
		}
		return p[k:], nil, k > 0
	}
	fr := sio.fr
	buf := connio.GetChunk(fr.FramesLen(p, sio.extra))
	fr.BeginRequest()
	enc, err := fr.AppendFrames(buf[:0], p, sio.extra, sio.flags|mysqlproto.OB20LastPacket)
	if err != nil || len(enc) > len(buf) {
		connio.PutChunk(buf)
		return p, nil, false // framed again, and refused, the usual way
	}
	k, _ := np.tryWrite(enc, more)
	switch {
	case k == len(enc):
		connio.PutChunk(buf)
		return nil, nil, false
	case k == 0:
		// Nothing went out: the usual way frames it again, under the
		// next request id.
		connio.PutChunk(buf)
		return p, nil, false
	}
	return enc[k:], buf, true
}

// WriteRaw sends bytes already framed for the connection (the rest of a
// request the poller began to send).
func (b *Conn) WriteRaw(p []byte) error {
	_, err := b.NetConn.Write(p)
	return err
}

// TryRead copies what the connection's input buffer holds, up to len(p).
func (p *plainServerIO) TryRead(b []byte) (int, error) {
	c := p.conn.(*PolledConn)
	if len(b) == 0 {
		return 0, ErrHandOff
	}
	if !c.Enter() {
		return 0, ErrHandOff
	}
	defer c.Exit()
	in := c.Connection.Reader()
	if in.Len() == 0 {
		c.Bound.BeforeWait(1)
		if in.Len() == 0 {
			return 0, c.waitOrHandOff()
		}
	}
	n := min(len(b), in.Len(), MaxView)
	src, err := in.Peek(n)
	if err != nil {
		return 0, ErrHandOff
	}
	copy(b, src)
	_ = in.Skip(n)
	_ = in.Release()
	c.Bound.AfterConsume()
	return n, nil
}

func (p *plainServerIO) TryFinish() error { return nil }

// TryRead unframes the frames that have arrived whole, as readInPlace
// does, and copies their packets into b: the packets of one frame at
// least, when any carries some. A frame whose packets do not fit b is
// reported by errFrameRoom with the room it needs.
func (o *ob20ServerIO) TryRead(b []byte) (int, error) {
	if o.fr.Unread() > 0 {
		return o.fr.Read(b) // packets of a frame read before: no wait
	}
	c := o.np
	if !c.Enter() {
		return 0, ErrHandOff
	}
	defer c.Exit()
	n := 0
	for {
		frame, err := o.arrivedFrame()
		if err != nil {
			if n > 0 && err == ErrWouldBlock {
				return n, nil
			}
			return n, err
		}
		size := len(frame)
		if size-mysqlproto.OB20FrameOverhead > len(b)-n {
			if n > 0 {
				return n, nil
			}
			return 0, &FrameRoomError{Need: size - mysqlproto.OB20FrameOverhead}
		}
		_, _, packets, err := o.fr.AcceptFrame(frame)
		if err != nil {
			return n, ErrHandOff
		}
		n += copy(b[n:], packets)
		o.consumeFrame(size)
		if o.fr.Header().Flags.Has(mysqlproto.OB20LastPacket) {
			return n, nil
		}
	}
}

// TryFinish reads the frames that end the response after its packets (a
// final frame without packet bytes), as FinishResponse does.
func (o *ob20ServerIO) TryFinish() error {
	if o.fr.LastFrameRead() {
		return nil
	}
	if o.fr.Unread() > 0 {
		return o.fr.FinishResponse() // the error it gives, at once
	}
	c := o.np
	if !c.Enter() {
		return ErrHandOff
	}
	defer c.Exit()
	for !o.fr.LastFrameRead() {
		frame, err := o.arrivedFrame()
		if err != nil {
			return err
		}
		_, _, packets, err := o.fr.AcceptFrame(frame)
		if err != nil {
			return ErrHandOff
		}
		if len(packets) > 0 {
			return fmt.Errorf("%w: %d bytes after the response", mysqlproto.ErrOB20Malformed, len(packets))
		}
		o.consumeFrame(len(frame))
	}
	return nil
}

// arrivedFrame returns the next frame in the connection's input buffer
// when it arrived whole; the caller holds the connection (enter).
func (o *ob20ServerIO) arrivedFrame() ([]byte, error) {
	c := o.np
	in := c.Connection.Reader()
	if in.Len() < mysqlproto.OB20FrameHeaderLen {
		c.Bound.BeforeWait(mysqlproto.OB20FrameHeaderLen)
		if in.Len() < mysqlproto.OB20FrameHeaderLen {
			return nil, c.waitOrHandOff()
		}
	}
	hdr, err := in.Peek(mysqlproto.OB20FrameHeaderLen)
	if err != nil {
		return nil, ErrHandOff
	}
	size, _ := mysqlproto.OB20FrameLen(hdr)
	if size > MaxView || size < mysqlproto.OB20FrameOverhead {
		return nil, ErrHandOff // the framer's own reader takes it, or refuses it
	}
	if in.Len() < size {
		c.Bound.BeforeWait(size)
		if in.Len() < size {
			return nil, c.waitOrHandOff()
		}
	}
	frame, err := in.Peek(size)
	if err != nil {
		return nil, ErrHandOff
	}
	return frame, nil
}

// consumeFrame drops a frame that was accepted from the input buffer.
func (o *ob20ServerIO) consumeFrame(size int) {
	c := o.np
	in := c.Connection.Reader()
	_ = in.Skip(size)
	_ = in.Release()
	c.Bound.AfterConsume()
}

// waitOrHandOff is what a read that found too few bytes reports: wait
// for more, unless the connection ended (no more read events come).
func (c *PolledConn) waitOrHandOff() error {
	if !c.Connection.IsActive() {
		return ErrHandOff
	}
	return ErrWouldBlock
}

// FrameRoomError says the next frame's packets need more room than the
// reader was given.
type FrameRoomError struct{ Need int }

func (e *FrameRoomError) Error() string {
	return fmt.Sprintf("an OB 2.0 frame of %d packet bytes does not fit", e.Need)
}
