package reactor

import (
	"net"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// serverWatch learns that a server closed a connection without a syscall
// per statement, for server sessions on net (client_io_mode=net; a
// netpoll server connection reports its hang-up itself, see
// npServerConn): every such server session's socket joins one epoll set that
// asks only for the peer's hang-up (EPOLLRDHUP, edge-triggered; errors and
// hang-ups are always reported), so the set stays silent while requests
// and answers flow and speaks once when a server closes a session (its
// wait_timeout, a restart, a KILL). The watch marks the server session
// gone and tells its owner (serverSide.serverGone).
//
// One goroutine runs the epoll loop; add, remove and close may be called
// from any goroutine.
type serverWatch struct {
	epfd   int
	wakefd int // eventfd that wakes the loop to stop

	mu      sync.Mutex
	byToken map[uint64]*serverConn
	next    uint64

	recover func(panicSite) // deferred in the loop: contains a panic

	started atomic.Bool
	stopped atomic.Bool
	done    chan struct{}
	startMu sync.Mutex
}

// wakeToken is the epoll data of wakefd; server tokens start at 1.
const wakeToken = 0

func newServerWatch() (*serverWatch, error) {
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
	return &serverWatch{epfd: epfd, wakefd: wakefd, byToken: map[uint64]*serverConn{}, done: make(chan struct{})}, nil
}

// add starts watching be's connection. The registration ends by itself
// when the socket is closed (the descriptor is never duplicated), so
// remove only forgets the token.
func (w *serverWatch) add(be *serverConn) {
	tc, ok := socketOf(be.conn).(*net.TCPConn)
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
func (w *serverWatch) remove(be *serverConn) {
	if be.watchToken == 0 {
		return
	}
	w.mu.Lock()
	delete(w.byToken, be.watchToken)
	w.mu.Unlock()
}

// start runs the loop; NewServer calls it, so the loop lives exactly as
// long as the Server (until Shutdown or Close).
func (w *serverWatch) start() {
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

func (w *serverWatch) loop() {
	defer close(w.done)
	if w.recover != nil {
		defer w.recover(panicServerWatch)
	}
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
func (w *serverWatch) notify(be *serverConn) {
	if w.recover != nil {
		defer w.recover(panicServerWatch)
	}
	be.serverGone()
}

// close stops the loop and releases the descriptors; it waits for the
// loop to return.
func (w *serverWatch) close() {
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
