package testkit

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// EpollWatchesInput reports whether an epoll instance of this process
// watches fd for input (EPOLLIN), as the kernel tells it in
// /proc/self/fdinfo: what a poller will be woken for, whatever the
// poller's own bookkeeping says.
func EpollWatchesInput(tb testing.TB, fd int) bool {
	tb.Helper()
	dir, err := os.ReadDir("/proc/self/fdinfo")
	if err != nil {
		tb.Fatal(err)
	}
	want := strconv.Itoa(fd)
	for _, e := range dir {
		info, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue // closed meanwhile
		}
		for line := range strings.Lines(string(info)) {
			f := strings.Fields(line)
			if len(f) < 4 || f[0] != "tfd:" || f[2] != "events:" || f[1] != want {
				continue
			}
			if ev, err := strconv.ParseUint(f[3], 16, 32); err == nil && ev&unix.EPOLLIN != 0 {
				return true
			}
		}
	}
	return false
}
