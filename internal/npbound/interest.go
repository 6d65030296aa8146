package npbound

import (
	"unsafe"

	"github.com/cloudwego/netpoll"
	"golang.org/x/sys/unix"
)

// Write interest. netpoll arms EPOLLOUT when a Flush could not hand the
// kernel everything (PollR2RW) and drops it once the poller sent the rest
// (PollRW2R), each time writing the connection's whole event mask, EPOLLIN
// included; the bound writes that same mask to pause and resume reads. If
// each wrote its own idea of the mask, one would undo the other: a pause
// that leaves EPOLLOUT out strands a Flush waiting for a writable event
// until its write timeout (a client that asked for 40 MB, read none of it
// for a second and pipelined 400 KB got 4 MB, then nothing for 60 s, then
// a reset), and netpoll's RW2R would resume reads the bound had paused. So
// the bound takes netpoll's two write-interest controls of its connection
// (interestPoll, put in the operator's poll field) and writes one mask
// from both facts, under Bound.mu: reads on or off, a write waiting or
// not.

// interestPoll is the poll netpoll's operator of a bounded connection
// calls Control on: write interest goes to the Bound, everything else
// (registration, detach, the operator cache) to netpoll's own poll.
type interestPoll struct {
	netpoll.Poll
	rb *Bound
}

// Control implements netpoll.Poll.
func (p *interestPoll) Control(op *netpoll.FDOperator, event netpoll.PollEvent) error {
	switch event {
	case netpoll.PollR2RW:
		return p.rb.setWriting(true)
	case netpoll.PollRW2R:
		return p.rb.setWriting(false)
	}
	return p.Poll.Control(op, event)
}

// takeWriteInterest puts rb's poll in the operator's poll field. The
// caller holds the operator's event lock, and nothing has written to the
// connection yet.
func (rb *Bound) takeWriteInterest() {
	pp := (*netpoll.Poll)(unsafe.Add(unsafe.Pointer(rb.h.op), npLayout.Load().pollOff))
	*pp = &interestPoll{Poll: *pp, rb: rb}
}

// setWriting records whether netpoll waits for the socket to take more
// output, and arms or drops EPOLLOUT accordingly, keeping the read state.
// Any goroutine (a Flush's, or the poller's once the output is sent).
func (rb *Bound) setWriting(w bool) error {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	rb.writing = w
	if rb.dead {
		return nil // the descriptor may be someone else's now
	}
	return rb.applyEvents(!rb.paused.Load())
}

// applyEvents writes the connection's event mask: reads when reading,
// writes while netpoll waits for them, errors always (a peer's hang-up is
// noticed once reading resumes, so that the data before it is read
// first). The caller holds mu and has checked dead.
func (rb *Bound) applyEvents(reading bool) error {
	ev := uint32(unix.EPOLLERR)
	if reading {
		ev |= unix.EPOLLIN | unix.EPOLLRDHUP
	}
	if rb.writing {
		ev |= unix.EPOLLOUT
	}
	return rb.h.setEvents(ev)
}
