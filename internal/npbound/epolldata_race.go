//go:build race

package npbound

import "golang.org/x/sys/unix"

// epollData fills ev's data as netpoll's race build registers it: the
// descriptor, which it maps back to the operator.
func (h npHandle) epollData(ev *unix.EpollEvent) {
	ev.Fd = int32(h.fd)
	ev.Pad = 0
}
