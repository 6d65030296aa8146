package reactor

import "errors"

// A client that hangs up while its command waits for a server.
//
// netpoll tells the poller (onClientGone), which closes the command's
// server connection so that its owner stops waiting for an answer nobody
// will read. The owner's read then fails; that failure is the client's,
// not the server's: it is not counted or logged as a server break, no
// other server is tried, and the session ends as a client that left.

// errClientLeft ends a command whose client hung up while it ran.
var errClientLeft = quit(QuitClientNetwork, errors.New("client hung up during the command"))

// clientLeft reports whether the client hung up while the command in
// progress had an owner (clientGone). Any goroutine may call it.
func (d *driver) clientLeft() bool { return d.clientGone.Load() }

// leftDuringCommand is what a server failure err becomes when the client
// hung up meanwhile: the session ends for the client's reason.
func leftDuringCommand(err error) error {
	return quit(QuitClientNetwork, errors.Join(errClientLeft.err, err))
}
