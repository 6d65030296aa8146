package obsim

import (
	"io"

	"obgate/mysqlproto"
)

// clientOut buffers the bytes of one response to the client and sends them
// in the session's framing: raw MySQL packets, OB20 frames (the last one
// flagged LAST) or compressed frames.
type clientOut struct {
	w    io.Writer // the connection
	ob20 *mysqlproto.OB20Framer
	comp *mysqlproto.CompressedFramer
	buf  []byte
	sent bool // part of the response went out already
	err  error
}

// flushThreshold is how many response bytes are buffered before a part is
// sent.
const flushThreshold = 64 << 10

// write appends framed MySQL packet bytes.
func (o *clientOut) write(b []byte) {
	o.buf = append(o.buf, b...)
	if len(o.buf) >= flushThreshold {
		o.send(false)
	}
}

// writePacket appends one packet.
func (o *clientOut) writePacket(seq uint8, payload []byte) uint8 {
	var next uint8
	o.buf, next = mysqlproto.AppendPacket(o.buf, seq, payload)
	if len(o.buf) >= flushThreshold {
		o.send(false)
	}
	return next
}

// finish sends the rest of the response.
func (o *clientOut) finish() error {
	o.send(true)
	o.sent = false
	return o.err
}

func (o *clientOut) send(last bool) {
	if o.err != nil {
		o.buf = o.buf[:0]
		return
	}
	switch {
	case o.ob20 != nil:
		if len(o.buf) == 0 && !last {
			return
		}
		if len(o.buf) == 0 && !o.sent {
			return // nothing at all to send
		}
		flags := mysqlproto.OB20Flags(0)
		if last {
			flags = mysqlproto.OB20LastPacket
		}
		o.err = o.ob20.WriteFrame(o.buf, nil, flags)
	case o.comp != nil:
		if len(o.buf) > 0 {
			_, o.err = o.comp.Write(o.buf)
		}
	default:
		if len(o.buf) > 0 {
			_, o.err = o.w.Write(o.buf)
		}
	}
	o.sent = true
	if cap(o.buf) > 4*flushThreshold {
		o.buf = nil
	} else {
		o.buf = o.buf[:0]
	}
}
