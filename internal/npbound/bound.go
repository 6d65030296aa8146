package npbound

import (
	"errors"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cloudwego/netpoll"
	"golang.org/x/sys/unix"
)

// ErrGone says a connection was closed while it joined netpoll.
var ErrGone = errors.New("npbound: connection closed while joining netpoll")

// pauses counts the pauses of every bounded connection.
var pauses atomic.Uint64

// Pauses is how many times any bounded connection stopped being read
// (tests read it).
func Pauses() uint64 { return pauses.Load() }

// readsAgain counts the reads that followed a full one in the same event.
var readsAgain atomic.Uint64

// ReadsAgain is how many times a read that filled its buffer was followed
// at once by another (tests read it).
func ReadsAgain() uint64 { return readsAgain.Load() }

// A Bound stops netpoll from reading a connection while its input
// backlog is over a high-water mark and lets it read again once the
// consumer brought the backlog under the low-water mark (see
// layout.go for how it reaches netpoll's poller).
//
// The poller pauses, right after a read grew the backlog (inputAck, on the
// poller goroutine); the consumer resumes, after it consumed bytes
// (AfterConsume) and before it waits for bytes not yet there (BeforeWait),
// so it never waits on a paused connection. The consumer is the one
// goroutine reading the connection at a time (its owner).
// Pausing publishes paused and then looks at what the consumer waits for;
// the consumer publishes what it waits for and then looks at paused, so
// one of the two always sees the other. mu orders the epoll changes with
// each other and with the connection's close (closing), after which the
// descriptor may be reused and is never touched again.
type Bound struct {
	h         npHandle
	in        netpoll.Reader
	ack       func(int) error         // netpoll's own InputAck
	inputs    func([][]byte) [][]byte // netpoll's own Inputs
	high, low int
	// noInput makes the poller read nothing (Freeze): an event it took
	// from epoll before the change of the connection's events would
	// otherwise still be read.
	noInput atomic.Bool

	paused atomic.Bool
	want   atomic.Int64 // bytes the consumer waits for, 0 when not waiting

	mu      sync.Mutex
	dead    bool // under mu: the connection is closing
	frozen  bool // under mu: Freeze stopped reading until Thaw
	writing bool // under mu: netpoll waits for the socket to take output (interest.go)

	// onInput runs on the poller after each read (SetOnInput); inInput
	// is set while it runs.
	onInput atomic.Pointer[func()]
	inInput atomic.Bool

	// booked is the size of the buffer netpoll gave the poller's last
	// read, and again the vector for the read that follows a full one
	// (readAgain). The poller only.
	booked int
	again  [1][]byte

	lender lender // see barrier.go
}

// readAgainMax is the largest booking after which a full read is followed
// by another one in the same event. netpoll books the rest of its current
// buffer node, at most its booking size (which starts at 512 B in obgate
// and doubles after each full read), so an answer larger than the booking,
// or one that lands at the end of a node still holding unconsumed input,
// arrives in two reads: without the second read at once, the first part
// would go to the client on its own (one more write, one more wake-up of
// the client) and the rest would wait for the next epoll_wait. Larger
// bookings are a stream being read, which netpoll's next event goes on
// with, as fair to the poller's other connections as before.
const readAgainMax = 16 << 10

// New installs a bound on conn, a connection netpoll registered
// a moment ago that nothing reads yet.
func New(conn netpoll.Connection, high, low int) (*Bound, error) {
	h, err := npHandleOf(conn)
	if err != nil {
		return nil, err
	}
	rb := &Bound{h: h, in: conn.Reader(), high: high, low: low}
	if !h.lockOperator() {
		return nil, ErrGone
	}
	rb.ack = h.op.InputAck
	h.op.InputAck = rb.inputAck
	rb.inputs = h.op.Inputs
	h.op.Inputs = rb.inputBuffers
	rb.takeWriteInterest()
	dropIdleInput(conn)
	h.unlockOperator()
	rb.lender.startLending(conn)
	// Close callbacks run newest first: this one before netpoll's own,
	// which closes the descriptor.
	_ = conn.AddCloseCallback(rb.closing)
	return rb, nil
}

// idleDropSize is the size of the input nodes of a connection whose
// input is dropped once consumed. netpoll gives back a connection's last
// input node when everything read was consumed (Release) only while the
// connection's largest read so far (maxSize) is over 8 KiB; below that
// it keeps the node for the next read, 512 bytes a connection, idle or
// not, and a next answer often straddles its end. From 16 KiB (the
// buffer pool's size class above 8 KiB) every read of a consumed
// connection starts a fresh node from the pool, and an idle connection
// holds none. An active one holds 16 KiB while it has input, as HAProxy's
// buffers do.
const idleDropSize = 16 << 10

// dropIdleInput makes netpoll give back conn's input node once its input
// is consumed (idleDropSize). The caller holds the operator's event lock,
// which orders the write with the poller's own of the same field.
func dropIdleInput(conn netpoll.Connection) {
	l := npLayout.Load()
	if l == nil || !l.maxSizeOK {
		return
	}
	p := (*int)(unsafe.Add(connPointer(conn), l.maxSizeOff))
	if *p < idleDropSize {
		*p = idleDropSize
	}
}

// inputAck runs on the poller after each read into the connection.
func (rb *Bound) inputAck(n int) error {
	err := rb.ack(n)
	if n > 0 && n == rb.booked && n <= readAgainMax && rb.in.Len() < rb.high {
		rb.readAgain()
	}
	if !rb.paused.Load() && rb.in.Len() >= rb.high {
		rb.pause()
	}
	if f := rb.onInput.Load(); f != nil && n > 0 {
		rb.inInput.Store(true)
		defer rb.inInput.Store(false)
		(*f)()
	}
	return err
}

// inputBuffers runs on the poller before each read: the buffers to read
// into, none while frozen.
func (rb *Bound) inputBuffers(vs [][]byte) [][]byte {
	rb.booked = 0
	if rb.noInput.Load() {
		return nil
	}
	vs = rb.inputs(vs)
	for _, b := range vs {
		rb.booked += len(b)
	}
	return vs
}

// readAgain reads the socket once more after a read that filled its
// buffer, inside the same event, before anyone is told of the input:
// netpoll books a new node for it. A read that finds nothing (EAGAIN),
// the end of the stream or an error acknowledges nothing; epoll is
// level-triggered, so netpoll's next event sees the end or the error
// itself. The poller, from inputAck.
func (rb *Bound) readAgain() {
	if rb.noInput.Load() {
		return
	}
	vs := rb.inputs(rb.again[:])
	if len(vs) != 1 || len(vs[0]) == 0 {
		return
	}
	m, err := unix.Read(rb.h.fd, vs[0])
	vs[0] = nil
	if err != nil || m < 0 {
		m = 0
	}
	_ = rb.ack(m)
	readsAgain.Add(1)
}

// InInput reports whether the poller is running the connection's onInput
// now. netpoll cannot close a connection from inside its own event: Close
// there waits for the event to end, forever. Any goroutine.
func (rb *Bound) InInput() bool { return rb.inInput.Load() }

// SetOnInput sets what runs on the poller goroutine after each read into
// the connection, once netpoll published the bytes (and woke a reader
// waiting for them). f must not block: every connection of the poller
// waits for it. Any goroutine; it applies from the next read.
func (rb *Bound) SetOnInput(f func()) { rb.onInput.Store(&f) }

func (rb *Bound) pause() {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	if rb.dead || rb.paused.Load() {
		return
	}
	rb.paused.Store(true)
	if l := rb.in.Len(); l < rb.high || int64(l) < rb.want.Load() || rb.applyEvents(false) != nil {
		rb.paused.Store(false) // consumed meanwhile, or waited on: go on reading
		return
	}
	pauses.Add(1)
}

func (rb *Bound) resume() {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	if rb.dead || rb.frozen || !rb.paused.Load() {
		return
	}
	_ = rb.applyEvents(true)
	rb.paused.Store(false)
}

// BeforeWait tells the bound that the consumer is about to wait for n
// bytes in all (the backlog has fewer).
func (rb *Bound) BeforeWait(n int) {
	rb.want.Store(int64(n))
	if rb.paused.Load() {
		rb.resume()
	}
}

// AfterConsume runs after the consumer released what it read.
func (rb *Bound) AfterConsume() {
	rb.want.Store(0)
	if rb.paused.Load() && rb.in.Len() <= rb.low {
		rb.resume()
	}
}

// closing is a close callback of the connection.
func (rb *Bound) closing(netpoll.Connection) error {
	rb.lender.stopLending()
	rb.mu.Lock()
	rb.dead = true
	rb.mu.Unlock()
	return nil
}

// Freeze stops netpoll from reading the connection until Thaw, whatever
// the consumer does, and returns once the poller is not handling an
// event of it: from then on the input buffer holds everything read from
// the socket, and the rest waits in the kernel (for whoever reads the
// descriptor next: a session handed to another process). Epoll stops
// reporting input, and an input event the poller fetched before that,
// still waiting in its batch, reads nothing. It reports false when the
// connection is closing. Never on the poller goroutine (the wait would
// be for itself); the connection's owner calls it.
func (rb *Bound) Freeze() bool {
	rb.mu.Lock()
	if rb.dead || rb.frozen {
		rb.mu.Unlock()
		return false
	}
	rb.noInput.Store(true)
	if err := rb.applyEvents(false); err != nil {
		rb.noInput.Store(false)
		rb.mu.Unlock()
		return false
	}
	rb.frozen = true
	rb.paused.Store(true)
	rb.mu.Unlock()
	// A read the poller began before noInput may still be running: wait
	// until its event is done.
	if !rb.h.lockOperator() {
		return false
	}
	rb.h.unlockOperator()
	return true
}

// Thaw undoes Freeze: netpoll reads the connection again.
func (rb *Bound) Thaw() {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	if rb.dead || !rb.frozen {
		return
	}
	rb.frozen = false
	rb.noInput.Store(false)
	_ = rb.applyEvents(true)
	rb.paused.Store(false)
}

// Paused says whether the connection is not being read now.
func (rb *Bound) Paused() bool { return rb.paused.Load() }

// FD is the connection's descriptor.
func (rb *Bound) FD() int { return rb.h.fd }
