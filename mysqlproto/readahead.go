package mysqlproto

import "io"

// BufferPool lends the buffers a framer reads into, so that a connection
// with nothing buffered holds none. Get returns a slice of length n (its
// capacity may be larger, and the framer may use all of it); Put takes back
// a slice Get returned, possibly resliced up to its capacity. A framer
// calls them from the goroutine that reads its connection; the pool must
// allow calls from any number of such goroutines at once.
type BufferPool interface {
	Get(n int) []byte
	Put(b []byte)
}

// DefaultReadAhead is how many bytes a framer asks its reader for at once
// unless told otherwise: enough for a small response to arrive in one read.
const DefaultReadAhead = 4 << 10

// readAhead reads a connection in bounded pieces for a framer: one read
// asks for as much as the buffer holds, so that a frame and usually the
// ones after it arrive with one system call, but never for more than limit
// bytes past the start of what is unconsumed (or the size of the frame
// being read, when that is larger). Nothing is read while the consumer has
// not asked for more, so a consumer that stops reading stops the reads, and
// TCP pushes back on the peer.
//
// Ownership: buf belongs to the readAhead. With a pool it is borrowed only
// while bytes are buffered (or a frame's bytes are still in use by the
// framer's caller) and given back by release; without one it is kept.
// Slices returned by peek stay valid until the next fill or release. Only
// the goroutine reading the connection uses a readAhead.
type readAhead struct {
	r        io.Reader
	buf      []byte // buf[pos:end] were read and not yet consumed
	pos, end int
	limit    int        // read-ahead bound; 0 means DefaultReadAhead
	pool     BufferPool // nil: buf is allocated and kept
}

// buffered is the number of bytes read and not yet consumed.
func (b *readAhead) buffered() int { return b.end - b.pos }

// fill reads until at least need bytes are buffered. It returns
// io.ErrUnexpectedEOF when the connection ends after some of them.
//
// need comes from a frame header, so it is a claim: the buffer grows as
// bytes arrive. Before a read the buffer is made to hold at most limit
// bytes past pos, or twice what is buffered when that is more (and never
// more than need or limit, whichever is larger); a larger buffer the
// readAhead already holds is used as it is. So a peer that announces a
// 16 MiB frame and sends its header costs limit bytes, not 16 MiB.
func (b *readAhead) fill(need int) error {
	if b.end-b.pos >= need {
		return nil
	}
	limit := b.limit
	if limit <= 0 {
		limit = DefaultReadAhead
	}
	reach := max(need, limit) // how far past pos one read may fill
	for b.end-b.pos < need {
		// Room for the next read, bounded by what arrived; it always
		// exceeds what is buffered. The buffer is rearranged only when it
		// is full or has consumed bytes in front, so a frame that trickles
		// in does not cost a reallocation per read.
		room := min(reach, max(limit, 2*(b.end-b.pos)))
		if b.pos+room > len(b.buf) && (b.pos > 0 || b.end == len(b.buf)) {
			b.makeRoom(room)
		}
		k, err := b.r.Read(b.buf[b.end:min(b.pos+reach, len(b.buf))])
		b.end += k
		if err != nil {
			if b.end-b.pos >= need {
				return nil
			}
			if err == io.EOF && b.end > b.pos {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// makeRoom makes buf hold at least room bytes from pos, moving the
// buffered bytes to the start or into a larger buffer.
func (b *readAhead) makeRoom(room int) {
	if b.pos+room <= len(b.buf) {
		return
	}
	if room > len(b.buf) {
		nb := b.get(room)
		copy(nb, b.buf[b.pos:b.end])
		b.put()
		b.buf = nb
	} else {
		copy(b.buf, b.buf[b.pos:b.end])
	}
	b.end -= b.pos
	b.pos = 0
}

// peek returns the next n buffered bytes; n must not exceed buffered.
func (b *readAhead) peek(n int) []byte { return b.buf[b.pos : b.pos+n] }

// consume drops the next n buffered bytes. Their memory stays as it is
// until the next fill or release.
func (b *readAhead) consume(n int) { b.pos += n }

// release gives a pooled buffer back when nothing is buffered; slices
// handed out before are dead afterwards.
func (b *readAhead) release() {
	if b.pool != nil && b.pos == b.end && b.buf != nil {
		b.put()
		b.buf, b.pos, b.end = nil, 0, 0
	}
}

// shrink drops an unpooled buffer larger than max when nothing is
// buffered.
func (b *readAhead) shrink(max int) {
	if b.pos == b.end && cap(b.buf) > max {
		b.put()
		b.buf, b.pos, b.end = nil, 0, 0
	}
}

func (b *readAhead) get(n int) []byte {
	if b.pool != nil {
		nb := b.pool.Get(n)
		return nb[:cap(nb)]
	}
	return make([]byte, n)
}

func (b *readAhead) put() {
	if b.pool != nil && b.buf != nil {
		b.pool.Put(b.buf)
	}
}
