//go:build !race

package npbound

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// epollData fills ev's data as netpoll's non-race build registers it: the
// operator's address (little-endian, as on every platform netpoll's epoll
// build supports). The operator outlives the registration: netpoll frees
// it only after removing the descriptor from epoll.
func (h npHandle) epollData(ev *unix.EpollEvent) {
	p := uint64(uintptr(unsafe.Pointer(h.op)))
	ev.Fd = int32(uint32(p))
	ev.Pad = int32(uint32(p >> 32))
}
