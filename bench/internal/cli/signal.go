package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// SignalContext returns a context that the first SIGINT (Ctrl-C) or
// SIGTERM cancels, so that a suite stops what it started. Once it is
// cancelled the signals are no longer caught: a second one kills the
// command at once, and the children it started die with it. stop releases
// the signals earlier.
func SignalContext() (ctx context.Context, stop context.CancelFunc) {
	ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}
