package reactor

import "time"

// Busy time is the summed wall time of finished statements and logins:
// its growth over an interval, divided by the interval, is how many were
// in flight on average (Little's law). cmd/obgate's CPU governor reads it
// to decide how many CPUs Go code may run on.

// noteBusy adds one finished statement's or login's duration. Any
// goroutine; one atomic add.
func (srv *Server) noteBusy(d time.Duration) {
	if d > 0 {
		srv.busyNanos.Add(int64(d))
	}
}

// BusyTime returns the summed duration of every statement and login that
// finished so far. Any goroutine.
func (srv *Server) BusyTime() time.Duration { return time.Duration(srv.busyNanos.Load()) }
