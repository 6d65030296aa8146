// Package npbound bounds how much netpoll reads ahead of a connection's
// consumer, and gives connections that netpoll.NewFDConnection made their
// socket addresses. netpoll has no API for either, so the package reaches
// a few of its unexported fields through reflect and unsafe; it checks
// their names and types once per process (Probe) and refuses to work
// (ErrLayout) when a netpoll upgrade changed them, which TestLayout
// reports.
//
// Through the same hooks a bound also reads a connection once more, in
// the same event, after a read that filled the small buffer netpoll gave
// it (readAgain), so that a packet straddling two of netpoll's buffer
// nodes reaches the consumer whole; and it has netpoll give a
// connection's input node back once its input is consumed
// (dropIdleInput), so that an idle connection holds none and the next
// read starts a fresh node. A bounded connection also holds a one-vector
// write barrier between flushes instead of netpoll's 1.3 KiB one, which
// Bound.Flush lends it for each flush (barrier.go). A bound takes
// netpoll's arming and dropping of write interest for its connection
// (interest.go), so that pausing reads never drops a write netpoll waits
// to send, and netpoll never resumes reads a bound paused;
// TestPauseKeepsPendingWrite and TestFreezeKeepsPendingWrite check that
// meaning, not only the fields' names.
//
// Nothing outside this package touches netpoll's internals.
package npbound
