package main

import "runtime"

// applyMaxProcs sets GOMAXPROCS from go_max_procs: n CPUs, or Go's own
// default (every CPU the process may use, following a cgroup limit) for
// 0. Any goroutine.
func applyMaxProcs(n int64) {
	if n <= 0 {
		runtime.SetDefaultGOMAXPROCS()
		return
	}
	runtime.GOMAXPROCS(int(n))
}
