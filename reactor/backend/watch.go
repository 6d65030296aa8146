package backend

import (
	"net"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Watch learns that a server closed a connection without a syscall
// per statement, for server sessions on net (client_io_mode=net; a
// netpoll server connection reports its hang-up itself, see
// PolledConn): every such server session's socket joins one epoll set that
// asks only for the peer's hang-up (EPOLLRDHUP, edge-triggered; errors and
// hang-ups are always reported), so the set stays silent while requests
// and answers flow and speaks once when a server closes a session (its
// wait_timeout, a restart, a KILL). The watch marks the server session
// gone and tells its owner (Owner.ServerGone).
//
// One goroutine runs the epoll loop; add, remove and close may be called
// from any goroutine.
type Watch struct {
	epfd   int
	wakefd int // eventfd that wakes the loop to stop

	mu      sync.Mutex
	byToken map[uint64]*Conn
	next    uint64

	// onPanic is told of a panic the loop contained, or nil.
	onPanic func(v any)

	started atomic.Bool
	stopped atomic.Bool
	done    chan struct{}
	startMu sync.Mutex
}

// wakeToken is the epoll data of wakefd; server tokens start at 1.
const wakeToken = 0

// newServerWatch makes a watch; onPanic, when not nil, is told of each
// panic the loop contains (it then goes on, or stops if the panic was
// its own).
func NewWatch(onPanic func(v any)) (*Watch, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	wakefd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, err
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wakefd, &ev); err != nil {
		unix.Close(epfd)
		unix.Close(wakefd)
		return nil, err
	}
	return &Watch{epfd: epfd, wakefd: wakefd, byToken: map[uint64]*Conn{}, onPanic: onPanic, done: make(chan struct{})}, nil
}

// add starts watching be's connection. The registration ends by itself
// when the socket is closed (the descriptor is never duplicated), so
// remove only forgets the token.
func (w *Watch) add(be *Conn) {
	tc, ok := socketOf(be.NetConn).(*net.TCPConn)
	if !ok || w.stopped.Load() {
		return
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return
	}
	w.mu.Lock()
	w.next++
	token := w.next
	w.byToken[token] = be
	w.mu.Unlock()
	be.watchToken = token
	ev := unix.EpollEvent{Events: unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(token), Pad: int32(token >> 32)}
	var cerr error
	if err := rc.Control(func(fd uintptr) { cerr = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_ADD, int(fd), &ev) }); err != nil || cerr != nil {
		w.remove(be)
	}
}

// remove forgets be; called from its close, before the socket closes.
func (w *Watch) remove(be *Conn) {
	if be.watchToken == 0 {
		return
	}
	w.mu.Lock()
	delete(w.byToken, be.watchToken)
	w.mu.Unlock()
}

// Start runs the loop; NewServer calls it, so the loop lives exactly as
// long as the Server (until Shutdown or Close).
func (w *Watch) Start() {
	if w.started.Load() {
		return
	}
	w.startMu.Lock()
	defer w.startMu.Unlock()
	if !w.started.Load() && !w.stopped.Load() {
		w.started.Store(true)
		go w.loop()
	}
}

func (w *Watch) loop() {
	defer close(w.done)
	defer w.contain()
	events := make([]unix.EpollEvent, 64)
	for {
		n, err := unix.EpollWait(w.epfd, events, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil || w.stopped.Load() {
			return
		}
		for _, ev := range events[:n] {
			token := uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
			if token == wakeToken {
				continue
			}
			w.mu.Lock()
			be := w.byToken[token]
			w.mu.Unlock()
			if be != nil {
				w.notify(be)
			}
		}
	}
}

// notify tells be its server closed the connection; a panic in that
// costs this event, never the loop, which goes on watching the others.
func (w *Watch) notify(be *Conn) {
	defer w.contain()
	be.serverGone()
}

// contain, deferred, recovers a panic and tells onPanic.
func (w *Watch) contain() {
	if v := recover(); v != nil && w.onPanic != nil {
		w.onPanic(v)
	}
}

// Close stops the loop and releases the descriptors; it waits for the
// loop to return.
func (w *Watch) Close() {
	if w.stopped.Swap(true) {
		return
	}
	w.startMu.Lock()
	started := w.started.Load()
	w.startMu.Unlock()
	if started {
		one := []byte{1, 0, 0, 0, 0, 0, 0, 0}
		_, _ = unix.Write(w.wakefd, one)
		<-w.done
	}
	unix.Close(w.epfd)
	unix.Close(w.wakefd)
}
