package backend

import (
	"github.com/cloudwego/netpoll"

	"obgate/reactor/connio"
)

// Window holds the part of a server's answer that the relay has received
// and not yet handed to the client, as one contiguous slice (Buf[:End]).
// Two kinds:
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
// The goroutine running the client session's command owns it from
// NewWindow to Close.
type Window struct {
	Buf []byte
	End int // Buf[:End] holds received bytes

	Viewed *PolledConn    // the connection viewed; nil for a chunk
	in     netpoll.Reader // Viewed's input buffer
}

// NewWindow opens a window on be's answer: a view when view (the caller
// never rewrites the answer in place) and be is a plain netpoll server
// connection, else a chunk. A view holds the connection (PolledConn.Enter), so a
// Close from another goroutine only shuts it down until close.
func NewWindow(be *Conn, view bool) Window {
	if nc, ok := be.NetConn.(*PolledConn); ok && view && be.OB20 == nil && be.Comp == nil && nc.Enter() {
		return Window{Viewed: nc, in: nc.Connection.Reader()}
	}
	return Window{Buf: connio.GetChunk(connio.ChunkSize)}
}

// Close gives the chunk back or lets go of the viewed connection.
func (w *Window) Close() {
	if w.Viewed != nil {
		w.Viewed.Exit()
		return
	}
	connio.PutChunk(w.Buf)
}

// Fill waits for more of the answer: at least one more byte, and at least
// want bytes in all. It returns how many bytes arrived.
func (w *Window) Fill(be *Conn, want int) (int, error) {
	if w.Viewed == nil {
		w.grow(want)
		k, err := be.Read(w.Buf[w.End:])
		w.End += k
		return k, err
	}
	n := max(want, w.End+1)
	if w.in.Len() < n {
		w.Viewed.Bound.BeforeWait(n)
		if _, err := w.in.Peek(n); err != nil {
			return 0, err
		}
	}
	return w.view(n), nil
}

// TryFill is Fill for a chunk on the poller: it adds what arrived of the
// answer without waiting (pio reads it), ErrWouldBlock when nothing did.
func (w *Window) TryFill(pio PollIO, want int) (int, error) {
	w.grow(want)
	k, err := pio.TryRead(w.Buf[w.End:])
	if re, ok := err.(*FrameRoomError); ok && w.End+re.Need <= MaxView {
		w.grow(w.End + re.Need)
		k, err = pio.TryRead(w.Buf[w.End:])
	}
	if _, ok := err.(*FrameRoomError); ok {
		err = ErrHandOff
	}
	w.End += k
	return k, err
}

// grow makes a chunk hold at least want bytes, or shrinks one that grew
// for a large packet back to connio.ChunkSize once it is full.
func (w *Window) grow(want int) {
	if want > len(w.Buf) {
		nb := connio.GetChunk(want)
		copy(nb, w.Buf[:w.End])
		connio.PutChunk(w.Buf)
		w.Buf = nb
	} else if w.End == len(w.Buf) && len(w.Buf) > connio.ChunkSize {
		// A large inspected packet has gone through; shrink back.
		nb := connio.GetChunk(connio.ChunkSize)
		w.End = copy(nb, w.Buf[:w.End])
		connio.PutChunk(w.Buf)
		w.Buf = nb
	}
}

// Ready reports whether Fill(be, want) would return without waiting;
// when it would wait, the read bound is told (so that the connection is
// read on). Views only.
func (w *Window) Ready(want int) bool {
	n := max(want, w.End+1)
	if w.in.Len() >= n {
		return true
	}
	w.Viewed.Bound.BeforeWait(n)
	return w.in.Len() >= n
}

// view points Buf at the buffered answer, at least n bytes and, as far as
// buffered, up to MaxView; it returns how many bytes it added.
func (w *Window) view(n int) int {
	// A view over several buffer nodes is copied into one by netpoll, so
	// it is capped.
	p, _ := w.in.Peek(max(n, min(w.in.Len(), MaxView)))
	k := len(p) - w.End
	w.Buf, w.End = p, len(p)
	return k
}

// More extends a view, without waiting, over bytes that arrived after it
// was taken, so that an answer the poller read in two pieces still goes
// to the client in one write; it reports whether it did. A chunk never
// grows this way (it is refilled by Fill).
func (w *Window) More() (int, bool) {
	if w.Viewed == nil || w.End >= MaxView || w.in.Len() <= w.End {
		return 0, false
	}
	return w.view(w.End), true
}

// Consumed drops the first n bytes, which the client's connection has
// taken (its Flush returned).
func (w *Window) Consumed(n int) {
	if w.Viewed == nil {
		w.End = copy(w.Buf, w.Buf[n:w.End])
		return
	}
	rest := w.End - n
	_ = w.in.Skip(n)
	_ = w.in.Release()
	w.Viewed.Bound.AfterConsume()
	w.Buf, w.End = nil, 0
	if rest > 0 {
		w.Buf, _ = w.in.Peek(rest) // buffered already: no wait
		w.End = len(w.Buf)
	}
}
