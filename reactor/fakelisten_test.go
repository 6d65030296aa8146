package reactor_test

import (
	"net"
	"sync"
	"testing"
)

// fakeListener is the accepting half of the in-process fake servers the
// forwarding benchmarks talk to: it serves each connection on its own
// goroutine and, on close, closes the listener and every connection and
// waits for the goroutines.
type fakeListener struct {
	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// listenFake listens on a loopback port and serves connections with
// serve until the test's cleanup.
func listenFake(tb testing.TB, l *fakeListener, serve func(net.Conn)) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	l.ln, l.conns = ln, map[net.Conn]struct{}{}
	l.wg.Go(func() { l.accept(serve) })
	tb.Cleanup(l.close)
}

func (l *fakeListener) addr() string { return l.ln.Addr().String() }

func (l *fakeListener) accept(serve func(net.Conn)) {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		l.mu.Lock()
		l.conns[c] = struct{}{}
		l.mu.Unlock()
		l.wg.Go(func() {
			defer func() {
				l.mu.Lock()
				delete(l.conns, c)
				l.mu.Unlock()
				c.Close()
			}()
			serve(c)
		})
	}
}

func (l *fakeListener) close() {
	l.ln.Close()
	l.mu.Lock()
	for c := range l.conns {
		c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
}
