package npbound

import (
	"bytes"
	"net"
	"reflect"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/cloudwego/netpoll"
	"golang.org/x/sys/unix"
)

// TestBarrierLayout fails when a netpoll upgrade moved the write vectors
// or the flushing lock.
func TestBarrierLayout(t *testing.T) {
	if !Probe() {
		t.Fatal("netpoll's layout is not recognised")
	}
	if l := barriers.Load(); l == nil || !l.ok || l.fullCap < 2 {
		t.Fatalf("barrier layout %+v", l)
	}
}

// manyNodes writes chunks of distinct bytes to conn's output, each large
// enough that netpoll references it as a node of its own, and returns
// what the peer must receive.
func manyNodes(t *testing.T, conn netpoll.Connection, chunks int) []byte {
	t.Helper()
	var want []byte
	for i := range chunks {
		b := bytes.Repeat([]byte{byte('a' + i%26)}, 8<<10)
		want = append(want, b...)
		if _, err := conn.Writer().WriteBinary(b); err != nil {
			t.Fatal(err)
		}
	}
	return want
}

// readAll reads n bytes from the peer descriptor on a goroutine.
func readAll(peer, n int) <-chan []byte {
	got := make(chan []byte, 1)
	go func() {
		b := make([]byte, n)
		for off := 0; off < n; {
			m, err := unix.Read(peer, b[off:])
			if m <= 0 || err != nil {
				got <- b[:off]
				return
			}
			off += m
		}
		got <- b
	}()
	return got
}

// TestFlushLendsFullBarrier: a bounded connection holds a small barrier
// while idle; an output of more vectors than the full barrier has goes
// out whole through Flush, and through netpoll's own Flush with the small
// barrier as well (the poller sends the rest), after which the small one
// is back.
func TestFlushLendsFullBarrier(t *testing.T) {
	if !Probe() {
		t.Fatal("layout")
	}
	conn, peer := pair(t)
	defer conn.Close()
	rb, err := New(conn, 1<<20, 1<<19)
	if err != nil {
		t.Fatal(err)
	}
	if !rb.Lending() {
		t.Fatal("an idle bounded connection holds netpoll's full barrier")
	}
	chunks := barriers.Load().fullCap + 8
	for _, flush := range []struct {
		name string
		do   func() error
	}{{"lent", rb.Flush}, {"small", conn.Writer().Flush}} {
		want := manyNodes(t, conn, chunks)
		got := readAll(peer, len(want))
		if err := flush.do(); err != nil {
			t.Fatalf("%s: %v", flush.name, err)
		}
		if b := <-got; !bytes.Equal(b, want) {
			t.Fatalf("%s: the peer got %d bytes, not the %d written", flush.name, len(b), len(want))
		}
		if !rb.Lending() {
			t.Fatalf("%s: the full barrier stayed after the flush", flush.name)
		}
	}
}

// TestCloseGivesBackFullBarriers: bounded connections closed while idle
// leave only full barriers in netpoll's pool, where the next connections
// take theirs from.
func TestCloseGivesBackFullBarriers(t *testing.T) {
	if !Probe() {
		t.Fatal("layout")
	}
	l := barriers.Load()
	for range 20 {
		conn, peer := pair(t)
		rb, err := New(conn, 1<<20, 1<<19)
		if err != nil {
			t.Fatal(err)
		}
		if !rb.Lending() {
			t.Fatal("a new bounded connection holds a full barrier")
		}
		_ = conn.Close()
		_ = unix.Close(peer)
	}
	var taken []any
	for range 40 {
		x := netpollBarriers.Get()
		taken = append(taken, x)
		if b := (*npBarrier)(reflect.ValueOf(x).UnsafePointer()); cap(b.bs) < l.fullCap {
			t.Fatalf("netpoll's pool holds a barrier of %d vectors", cap(b.bs))
		}
	}
	for _, x := range taken {
		netpollBarriers.Put(x)
	}
}

// TestFlushRacesClose: a flush waiting for a peer that does not read,
// and a close of the connection on another goroutine, at varied moments:
// neither panics, and the race detector sees the barrier swaps ordered
// with netpoll's close.
func TestFlushRacesClose(t *testing.T) {
	if !Probe() {
		t.Fatal("layout")
	}
	big := bytes.Repeat([]byte{'x'}, 32<<20)
	for i := range 50 {
		conn, peer := pair(t)
		rb, err := New(conn, 1<<20, 1<<19)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Writer().WriteBinary(big); err != nil {
			t.Fatal(err)
		}
		flushed := make(chan error, 1)
		go func() { flushed <- rb.Flush() }()
		for range i {
			runtime.Gosched()
		}
		_ = conn.Close()
		if err := <-flushed; err == nil {
			t.Fatal("a flush of 32 MiB to a peer that reads nothing succeeded")
		}
		_ = unix.Close(peer)
	}
}

// TestDropReadTimer: a read with a deadline leaves netpoll's timer in the
// connection; DropReadTimer lets go of it, and a later read with a
// deadline still times out.
func TestDropReadTimer(t *testing.T) {
	if !Probe() {
		t.Fatal("layout")
	}
	conn, peer := pair(t)
	defer unix.Close(peer)
	defer conn.Close()
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}
	if err := SetAddrs(conn, addr, addr); err != nil {
		t.Fatal(err)
	}
	l := npLayout.Load()
	if !l.readTimerOK {
		t.Fatal("connection.readTimer not found")
	}
	timer := func() *time.Timer {
		return *(**time.Timer)(unsafe.Add(connPointer(conn), l.readTimerOff))
	}
	// netpoll makes its timer only when a read with a deadline has to wait.
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Fatal("a read of nothing with a deadline returned no error")
	}
	if timer() == nil {
		t.Fatal("netpoll kept no timer after a read with a deadline")
	}
	_ = conn.SetDeadline(time.Time{})
	DropReadTimer(conn)
	if timer() != nil {
		t.Fatal("the timer is still held")
	}
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Fatal("a read of nothing with a deadline returned no error")
	}
	_ = conn.SetDeadline(time.Time{})
	if _, err := unix.Write(peer, []byte{7}); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := conn.Read(b); err != nil || b[0] != 7 {
		t.Fatalf("read after the timer was dropped: %v %v", b, err)
	}
}
