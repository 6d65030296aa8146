package npbound

import (
	"errors"
	"net"
	"reflect"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cloudwego/netpoll"
	"golang.org/x/sys/unix"
)

// netpoll (v0.7.2, pinned in go.mod) has no way to stop reading a
// connection: its poller reads whatever arrives, so a fast sender facing a
// slow consumer fills memory without bound. obgate adds that bound from
// outside, without a fork, through three things netpoll keeps unexported
// but lays out plainly:
//
//   - each connection's *netpoll.FDOperator (an exported type), whose
//     exported InputAck field the poller calls after every read: obgate
//     wraps it to look at the input backlog right after it grew, on the
//     poller goroutine;
//   - the operator's epoll descriptor (its poll's fd), so that obgate can
//     drop and restore EPOLLIN with EPOLL_CTL_MOD;
//   - the operator's state word, the CAS lock the poller takes around each
//     event of that operator; obgate takes it too while it swaps InputAck,
//     so the poller never sees the swap half done;
//   - the operator's poll field, through which netpoll arms and drops
//     write interest (PollR2RW, PollRW2R): obgate puts a poll of its own
//     there that keeps the connection's event mask whole (interest.go).
//
// npLayout finds them by name and type once per process and refuses to
// work (ErrLayout) if any is missing or changed, in which case server
// connections stay on net and client input is not bounded; the tests fail
// loudly on such a netpoll upgrade (TestNetpollLayout).

// ErrLayout says this netpoll build does not have the expected layout.
var ErrLayout = errors.New("npbound: netpoll internals are not as expected; read bounds unavailable")

type npLayoutInfo struct {
	ok          bool
	connType    reflect.Type // *netpoll.connection
	operatorOff uintptr      // connection.operator (*FDOperator)
	stateOff    uintptr      // FDOperator.state (int32)
	pollOff     uintptr      // FDOperator.poll (netpoll.Poll)
	pollType    reflect.Type // *netpoll.defaultPoll
	localOff    uintptr      // connection.netFD.localAddr (net.Addr)
	remoteOff   uintptr      // connection.netFD.remoteAddr (net.Addr)
	// maxSizeOK is false when connection.maxSize is not an int, and input
	// nodes are then kept while idle (see dropIdleInput).
	maxSizeOK  bool
	maxSizeOff uintptr
	// readTimerOK is false when connection.readTimer is not a
	// *time.Timer, and DropReadTimer then does nothing.
	readTimerOK  bool
	readTimerOff uintptr
}

var npLayout atomic.Pointer[npLayoutInfo]

// learnNPLayout inspects conn, a connection netpoll made, and records the
// layout; it runs once, on the first connection.
func learnNPLayout(conn netpoll.Connection) *npLayoutInfo {
	if l := npLayout.Load(); l != nil {
		return l
	}
	l := &npLayoutInfo{}
	defer npLayout.CompareAndSwap(nil, l)
	ct := reflect.TypeOf(conn)
	if ct.Kind() != reflect.Pointer || ct.Elem().Kind() != reflect.Struct {
		return l
	}
	opField, ok := ct.Elem().FieldByName("operator")
	if !ok || opField.Type != reflect.TypeOf((*netpoll.FDOperator)(nil)) {
		return l
	}
	opType := reflect.TypeOf(netpoll.FDOperator{})
	state, ok := opType.FieldByName("state")
	if !ok || state.Type.Kind() != reflect.Int32 {
		return l
	}
	poll, ok := opType.FieldByName("poll")
	if !ok || poll.Type != reflect.TypeOf((*netpoll.Poll)(nil)).Elem() {
		return l
	}
	op := *(**netpoll.FDOperator)(unsafe.Add(connPointer(conn), opField.Offset))
	if op == nil {
		return l
	}
	pv := reflect.ValueOf(op).Elem().FieldByIndex(poll.Index)
	if pv.IsNil() || pv.Elem().Kind() != reflect.Pointer || pv.Elem().Elem().Kind() != reflect.Struct {
		return l
	}
	pt := pv.Elem().Type()
	fdField, ok := pt.Elem().FieldByName("fd")
	if !ok || fdField.Type.Kind() != reflect.Int {
		return l
	}
	addrType := reflect.TypeOf((*net.Addr)(nil)).Elem()
	local, ok1 := ct.Elem().FieldByName("localAddr")
	remote, ok2 := ct.Elem().FieldByName("remoteAddr")
	if !ok1 || !ok2 || local.Type != addrType || remote.Type != addrType {
		return l
	}
	*l = npLayoutInfo{ok: true, connType: ct, operatorOff: opField.Offset, stateOff: state.Offset,
		pollOff: poll.Offset, pollType: pt,
		localOff: fieldOffset(ct.Elem(), local), remoteOff: fieldOffset(ct.Elem(), remote)}
	if f, ok := ct.Elem().FieldByName("maxSize"); ok && f.Type.Kind() == reflect.Int {
		l.maxSizeOK, l.maxSizeOff = true, fieldOffset(ct.Elem(), f)
	}
	if f, ok := ct.Elem().FieldByName("readTimer"); ok && f.Type == reflect.TypeOf((*time.Timer)(nil)) {
		l.readTimerOK, l.readTimerOff = true, fieldOffset(ct.Elem(), f)
	}
	return l
}

// fieldOffset is f's offset from the start of struct t, f possibly
// promoted from embedded structs (FieldByName gives the offset within the
// innermost one).
func fieldOffset(t reflect.Type, f reflect.StructField) uintptr {
	var off uintptr
	for i := range f.Index {
		sf := t.FieldByIndex(f.Index[:i+1])
		off += sf.Offset
	}
	return off
}

// SetAddrs gives a connection made by netpoll.NewFDConnection the
// addresses of its socket: netpoll leaves them nil there, and formats the
// remote address into its timeout errors (a nil one panics). Call it
// before the connection is used.
func SetAddrs(conn netpoll.Connection, local, remote net.Addr) error {
	l := learnNPLayout(conn)
	if !l.ok || reflect.TypeOf(conn) != l.connType {
		return ErrLayout
	}
	p := connPointer(conn)
	*(*net.Addr)(unsafe.Add(p, l.localOff)) = local
	*(*net.Addr)(unsafe.Add(p, l.remoteOff)) = remote
	return nil
}

// DropReadTimer lets go of the timer netpoll made for conn's reads with
// a deadline, which it keeps for the connection's life once made (about
// 240 bytes): a server connection reads with a deadline while it logs in
// and then, unless a statement timeout applies, never again. netpoll
// makes a new timer if a later read has a deadline. The goroutine that
// reads conn, between its reads (netpoll stops and drains the timer
// before each read returns).
func DropReadTimer(conn netpoll.Connection) {
	l := npLayout.Load()
	if l == nil || !l.readTimerOK || reflect.TypeOf(conn) != l.connType {
		return
	}
	*(**time.Timer)(unsafe.Add(connPointer(conn), l.readTimerOff)) = nil
}

// Probe learns the layout from a connection over a socket pair
// before any real connection joins netpoll, so that a mismatch is known
// up front (a connection that failed half way through joining could have
// lost bytes to netpoll already). It also learns where connections keep
// their write vectors and flushing lock (barrier.go); a connection made
// before Probe keeps netpoll's own vectors.
func Probe() bool {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fds[1])
	conn, err := netpoll.NewFDConnection(fds[0])
	if err != nil {
		unix.Close(fds[0])
		return false
	}
	defer conn.Close()
	if !learnNPLayout(conn).ok {
		return false
	}
	if barriers.Load() == nil {
		barriers.CompareAndSwap(nil, learnBarrierLayout(conn))
	}
	return true
}

// connPointer is the address of the struct behind a netpoll connection.
func connPointer(conn netpoll.Connection) unsafe.Pointer {
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&conn))[1]
}

// npHandle reaches one connection's operator and epoll set.
type npHandle struct {
	op   *netpoll.FDOperator
	epfd int
	fd   int
}

// npHandleOf returns conn's handle, or ErrLayout.
func npHandleOf(conn netpoll.Connection) (npHandle, error) {
	l := learnNPLayout(conn)
	if !l.ok || reflect.TypeOf(conn) != l.connType {
		return npHandle{}, ErrLayout
	}
	op := *(**netpoll.FDOperator)(unsafe.Add(connPointer(conn), l.operatorOff))
	if op == nil {
		return npHandle{}, ErrLayout
	}
	pv := reflect.ValueOf(op).Elem().FieldByName("poll")
	if pv.IsNil() || pv.Elem().Type() != l.pollType {
		return npHandle{}, ErrLayout
	}
	epfd := int(pv.Elem().Elem().FieldByName("fd").Int())
	return npHandle{op: op, epfd: epfd, fd: op.FD}, nil
}

// lockOperator takes the operator's event lock (state 1 → 2) as the
// poller does before it handles an event, spinning while the poller holds
// it; unlockOperator gives it back. Between the two the poller skips the
// operator's events (epoll is level-triggered, so none is lost).
func (h npHandle) lockOperator() bool {
	st := (*int32)(unsafe.Add(unsafe.Pointer(h.op), npLayout.Load().stateOff))
	for {
		if atomic.CompareAndSwapInt32(st, 1, 2) {
			return true
		}
		switch atomic.LoadInt32(st) {
		case 0:
			return false // not in use: the operator is being freed
		case 2:
			runtime.Gosched() // the poller is handling an event of it
		}
	}
}

func (h npHandle) unlockOperator() {
	st := (*int32)(unsafe.Add(unsafe.Pointer(h.op), npLayout.Load().stateOff))
	atomic.StoreInt32(st, 1)
}

// setEvents changes what epoll reports for the connection, keeping the
// event data netpoll registered (see epollData).
func (h npHandle) setEvents(events uint32) error {
	ev := unix.EpollEvent{Events: events}
	h.epollData(&ev)
	return unix.EpollCtl(h.epfd, unix.EPOLL_CTL_MOD, h.fd, &ev)
}
