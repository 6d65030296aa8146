package npbound

import (
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe" // also for go:linkname

	"github.com/cloudwego/netpoll"
)

// Every netpoll connection holds, from its start to its close, the
// vectors its Flush hands to sendmsg (its output barrier: 32 slice
// headers and 32 iovecs, 1.3 KiB), although a connection only uses them
// inside a flush, and an idle one never. Two connections per client
// session make that a quarter of an idle session's memory. A bounded
// connection instead holds a one-vector barrier of its own (96 B), and
// Bound.Flush lends it a full one for the flush only.
//
// Full barriers live in netpoll's own pool of them (barrierPool, reached
// by linkname), the pool every new connection takes one from: the one a
// new bounded connection got goes straight back there, and a connection
// that closes is given one from there again, for netpoll's close to put
// back. So a burst of new connections reuses a few full barriers instead
// of allocating one each, and netpoll's pool holds full barriers only.
//
// Every swap happens under netpoll's own flushing lock (the CAS word its
// Flush and Write take, and that its close waits for and then keeps), so
// no flush ever sees it half done, and a connection closed in between
// keeps whichever barrier it holds. A small barrier that still reaches
// netpoll's pool that way is correct for any connection (a flush through
// it sends one vector per sendmsg and leaves the rest to the poller); a
// new bounded connection that gets one keeps it as its small barrier, and
// a flush that gets one allocates a full one instead.

// npBarrier mirrors netpoll's barrier (checked by learnBarrierLayout).
type npBarrier struct {
	bs  [][]byte
	ivs []syscall.Iovec
}

// idleBarrier is a connection's barrier between flushes, in one
// allocation.
type idleBarrier struct {
	b   npBarrier
	bs  [1][]byte
	ivs [1]syscall.Iovec
}

func newIdleBarrier() *npBarrier {
	ib := &idleBarrier{}
	ib.b.bs, ib.b.ivs = ib.bs[:], ib.ivs[:]
	return &ib.b
}

// barrierLayout says where a connection keeps its barrier and its
// flushing lock; ok is false when they are not where expected, and
// connections then keep netpoll's own barrier for good.
type barrierLayout struct {
	ok         bool
	barrierOff uintptr      // connection.outputBarrier (*barrier)
	barrierPtr reflect.Type // *barrier
	flushOff   uintptr      // connection.locker.keychain[flushing] (int32)
	fullCap    int          // the vectors of netpoll's own barriers
}

var barriers atomic.Pointer[barrierLayout]

// netpollBarriers is netpoll's pool of full barriers (holding
// *netpoll.barrier values; its New makes one). A netpoll release that
// renames it fails the build here.
//
//go:linkname netpollBarriers github.com/cloudwego/netpoll.barrierPool
var netpollBarriers sync.Pool

// getFull takes a full barrier from netpoll's pool.
func (l *barrierLayout) getFull() *npBarrier {
	if v := reflect.ValueOf(netpollBarriers.Get()); v.IsValid() && v.Type() == l.barrierPtr {
		if b := (*npBarrier)(v.UnsafePointer()); cap(b.bs) >= l.fullCap && cap(b.ivs) >= l.fullCap {
			return b
		}
	}
	return &npBarrier{bs: make([][]byte, l.fullCap), ivs: make([]syscall.Iovec, l.fullCap)}
}

// putFull gives b back to netpoll's pool, as the type netpoll expects.
func (l *barrierLayout) putFull(b *npBarrier) {
	netpollBarriers.Put(reflect.NewAt(l.barrierPtr.Elem(), unsafe.Pointer(b)).Interface())
}

// flushingKey is the index of netpoll's flushing lock in its keychain
// (unexported; checkFlushLock confirms it by behaviour).
const flushingKey = 3

// learnBarrierLayout checks conn's barrier and lock fields by name and
// type and, on conn, a connection over a socket pair that nothing else
// uses, that netpoll's Flush honours the lock word found; it runs once,
// from Probe.
func learnBarrierLayout(conn netpoll.Connection) *barrierLayout {
	l := &barrierLayout{}
	ct := reflect.TypeOf(conn)
	if ct.Kind() != reflect.Pointer || ct.Elem().Kind() != reflect.Struct {
		return l
	}
	bf, ok := ct.Elem().FieldByName("outputBarrier")
	if !ok || bf.Type.Kind() != reflect.Pointer || !sameLayout(bf.Type.Elem(), reflect.TypeOf(npBarrier{})) {
		return l
	}
	kf, ok := ct.Elem().FieldByName("keychain")
	if !ok || kf.Type.Kind() != reflect.Array || kf.Type.Elem().Kind() != reflect.Int32 || kf.Type.Len() <= flushingKey {
		return l
	}
	p := connPointer(conn)
	l.barrierOff, l.barrierPtr = fieldOffset(ct.Elem(), bf), bf.Type
	l.flushOff = fieldOffset(ct.Elem(), kf) + flushingKey*4
	own := *(**npBarrier)(unsafe.Add(p, l.barrierOff))
	if own == nil || cap(own.bs) < 2 || cap(own.ivs) != cap(own.bs) || !checkFlushLock(conn, (*int32)(unsafe.Add(p, l.flushOff))) {
		return l
	}
	l.fullCap, l.ok = cap(own.bs), true
	return l
}

// sameLayout says whether struct types a and b have the same fields, by
// name, type and offset, and the same size.
func sameLayout(a, b reflect.Type) bool {
	if a.Kind() != reflect.Struct || a.Size() != b.Size() || a.NumField() != b.NumField() {
		return false
	}
	for i := range a.NumField() {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Name != fb.Name || fa.Type != fb.Type || fa.Offset != fb.Offset {
			return false
		}
	}
	return true
}

// checkFlushLock confirms that lock is the word netpoll's Flush takes:
// Flush refuses while it is held and works once it is free.
func checkFlushLock(conn netpoll.Connection, lock *int32) bool {
	if !atomic.CompareAndSwapInt32(lock, 0, 1) {
		return false
	}
	held := conn.Writer().Flush()
	atomic.StoreInt32(lock, 0)
	return errors.Is(held, netpoll.ErrConcurrentAccess) && conn.Writer().Flush() == nil
}

// lender is a bounded connection's share of barrier lending; its zero
// value lends nothing.
type lender struct {
	out     netpoll.Writer
	l       *barrierLayout
	barrier **npBarrier // the connection's barrier field
	lock    *int32      // its flushing lock
}

// startLending gives conn its small barrier and netpoll's pool back the
// full one; nothing flushes conn yet.
func (ld *lender) startLending(conn netpoll.Connection) {
	ld.out = conn.Writer()
	l := barriers.Load()
	if l == nil || !l.ok || reflect.TypeOf(conn) != npLayout.Load().connType {
		return
	}
	p := connPointer(conn)
	barrier := (**npBarrier)(unsafe.Add(p, l.barrierOff))
	lock := (*int32)(unsafe.Add(p, l.flushOff))
	if !atomic.CompareAndSwapInt32(lock, 0, 1) {
		return // closing already
	}
	if own := *barrier; cap(own.bs) >= l.fullCap {
		*barrier = newIdleBarrier()
		l.putFull(own)
	}
	atomic.StoreInt32(lock, 0)
	ld.l, ld.barrier, ld.lock = l, barrier, lock
}

// stopLending gives a closing connection a full barrier for netpoll's
// close to put back in its pool. A close callback, before netpoll's own.
func (ld *lender) stopLending() {
	if ld.lock == nil || !atomic.CompareAndSwapInt32(ld.lock, 0, 1) {
		return // a flush holds a full one; it keeps it (Flush)
	}
	if cap((*ld.barrier).bs) < ld.l.fullCap {
		*ld.barrier = ld.l.getFull()
	}
	atomic.StoreInt32(ld.lock, 0)
}

// Flush sends the connection's output as netpoll's Flush does, with a
// full barrier lent for the call. The connection's owner, as for
// netpoll's Flush.
func (rb *Bound) Flush() error {
	ld := &rb.lender
	if ld.lock == nil || !atomic.CompareAndSwapInt32(ld.lock, 0, 1) {
		return ld.out.Flush() // closing, or another flush: netpoll says so
	}
	small := *ld.barrier
	full := ld.l.getFull()
	*ld.barrier = full
	atomic.StoreInt32(ld.lock, 0)
	err := ld.out.Flush()
	if atomic.CompareAndSwapInt32(ld.lock, 0, 1) {
		if *ld.barrier == full {
			*ld.barrier = small
			ld.l.putFull(full)
		}
		atomic.StoreInt32(ld.lock, 0)
	}
	// Otherwise the connection is closing and keeps the full barrier:
	// netpoll's close hands it back to netpoll's pool.
	return err
}

// Lending says whether the connection holds a small barrier between
// flushes (tests read it).
func (rb *Bound) Lending() bool {
	ld := &rb.lender
	if ld.lock == nil || !atomic.CompareAndSwapInt32(ld.lock, 0, 1) {
		return false
	}
	small := cap((*ld.barrier).bs) < ld.l.fullCap
	atomic.StoreInt32(ld.lock, 0)
	return small
}
