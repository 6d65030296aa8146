package reactor

import (
	"github.com/cloudwego/netpoll"

	"obgate/reactor/backend"
	"obgate/reactor/connio"
)

// respWindow holds the part of a server's answer that runRelay has
// received and not yet handed to the client, as one contiguous slice
// (buf[:end]). Two kinds:
//
//   - a pooled chunk that the server's bytes are read into (every
//     serverIO, and the only kind that may be rewritten in place, as
//     OceanBase's terminators are);
//   - a view of a netpoll server connection's input buffer (mysql routing
//     mode, plain MySQL framing): the answer goes from the buffer the
//     poller read it into to the client's output without a copy of
//     obgate's own; netpoll copies packets of up to 4 KiB into the
//     client's buffer and references larger ones until the Flush, and the
//     bytes are released only after that Flush returned.
//
// The goroutine running the session's command owns it from newRespWindow
// to close.
type respWindow struct {
	buf []byte
	end int // buf[:end] holds received bytes

	np *backend.PolledConn // view mode; nil for a chunk
	in netpoll.Reader      // np's input buffer
}

// newRespWindow opens a window on be's answer: a view when be is a plain
// netpoll server connection and the side never rewrites terminators,
// else a chunk. A view holds the connection (backend.PolledConn.Enter), so a
// Close from another goroutine only shuts it down until close.
func newRespWindow(be *backend.Conn, view bool) respWindow {
	if nc, ok := be.NetConn.(*backend.PolledConn); ok && view && be.OB20 == nil && be.Comp == nil && nc.Enter() {
		return respWindow{np: nc, in: nc.Connection.Reader()}
	}
	return respWindow{buf: connio.GetChunk(connio.ChunkSize)}
}

func (w *respWindow) close() {
	if w.np != nil {
		w.np.Exit()
		return
	}
	connio.PutChunk(w.buf)
}

// fill waits for more of the answer: at least one more byte, and at least
// want bytes in all. It returns how many bytes arrived.
func (w *respWindow) fill(be *backend.Conn, want int) (int, error) {
	if w.np == nil {
		w.grow(want)
		k, err := be.Read(w.buf[w.end:])
		w.end += k
		return k, err
	}
	n := max(want, w.end+1)
	if w.in.Len() < n {
		w.np.Bound.BeforeWait(n)
		if _, err := w.in.Peek(n); err != nil {
			return 0, err
		}
	}
	return w.view(n), nil
}

// tryFill is fill for a chunk on the poller: it adds what arrived of the
// answer without waiting (pio reads it), errWouldBlock when nothing did.
func (w *respWindow) tryFill(pio backend.PollIO, want int) (int, error) {
	w.grow(want)
	k, err := pio.TryRead(w.buf[w.end:])
	if re, ok := err.(*backend.FrameRoomError); ok && w.end+re.Need <= backend.MaxView {
		w.grow(w.end + re.Need)
		k, err = pio.TryRead(w.buf[w.end:])
	}
	if _, ok := err.(*backend.FrameRoomError); ok {
		err = backend.ErrHandOff
	}
	w.end += k
	return k, err
}

// grow makes a chunk hold at least want bytes, or shrinks one that grew
// for a large packet back to connio.ChunkSize once it is full.
func (w *respWindow) grow(want int) {
	if want > len(w.buf) {
		nb := connio.GetChunk(want)
		copy(nb, w.buf[:w.end])
		connio.PutChunk(w.buf)
		w.buf = nb
	} else if w.end == len(w.buf) && len(w.buf) > connio.ChunkSize {
		// A large inspected packet has gone through; shrink back.
		nb := connio.GetChunk(connio.ChunkSize)
		w.end = copy(nb, w.buf[:w.end])
		connio.PutChunk(w.buf)
		w.buf = nb
	}
}

// ready reports whether fill(be, want) would return without waiting;
// when it would wait, the read bound is told (so that the connection is
// read on). Views only.
func (w *respWindow) ready(want int) bool {
	n := max(want, w.end+1)
	if w.in.Len() >= n {
		return true
	}
	w.np.Bound.BeforeWait(n)
	return w.in.Len() >= n
}

// view points buf at the buffered answer, at least n bytes and, as far as
// buffered, up to maxView; it returns how many bytes it added.
func (w *respWindow) view(n int) int {
	// A view over several buffer nodes is copied into one by netpoll, so
	// it is capped.
	p, _ := w.in.Peek(max(n, min(w.in.Len(), backend.MaxView)))
	k := len(p) - w.end
	w.buf, w.end = p, len(p)
	return k
}

// more extends a view, without waiting, over bytes that arrived after it
// was taken, so that an answer the poller read in two pieces still goes
// to the client in one write; it reports whether it did. A chunk never
// grows this way (it is refilled by fill).
func (w *respWindow) more() (int, bool) {
	if w.np == nil || w.end >= backend.MaxView || w.in.Len() <= w.end {
		return 0, false
	}
	return w.view(w.end), true
}

// consumed drops the first n bytes, which the client's connection has
// taken (its Flush returned).
func (w *respWindow) consumed(n int) {
	if w.np == nil {
		w.end = copy(w.buf, w.buf[n:w.end])
		return
	}
	rest := w.end - n
	_ = w.in.Skip(n)
	_ = w.in.Release()
	w.np.Bound.AfterConsume()
	w.buf, w.end = nil, 0
	if rest > 0 {
		w.buf, _ = w.in.Peek(rest) // buffered already: no wait
		w.end = len(w.buf)
	}
}
