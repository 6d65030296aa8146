package reactor

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"

	"obgate/mysqlproto"
)

// QuitSource says why a session ended; it is a metric label and picks the
// log level.
type QuitSource uint8

const (
	QuitClientQuit    QuitSource = iota // COM_QUIT
	QuitClientNetwork                   // the client's connection broke or closed
	QuitClientProto                     // the client broke the protocol
	QuitServerNetwork                   // a server connection broke mid-command
	QuitServerProto                     // a server broke the protocol
	QuitAuthFailed                      // login refused
	QuitKilled                          // KILL, KILL PROXYSESSION
	QuitShutdown                        // obgate is stopping
	QuitLimit                           // connection limit
	QuitTimeout                         // handshake timeout
	QuitNoServer                        // no server could take the session
	QuitPanic                           // obgate's own code panicked (a bug)
)

var quitNames = [...]string{"client_quit", "client_network", "client_protocol",
	"server_network", "server_protocol", "auth_failed", "killed", "shutdown",
	"limit", "timeout", "no_server", "panic"}

func (q QuitSource) String() string {
	if int(q) < len(quitNames) {
		return quitNames[q]
	}
	return "unknown"
}

// Normal reports whether the quit is routine (logged at debug level).
func (q QuitSource) Normal() bool {
	switch q {
	case QuitClientQuit, QuitClientNetwork, QuitKilled, QuitShutdown, QuitLimit, QuitAuthFailed:
		return true
	}
	return false
}

// sessionError ends a session: it carries why, and optionally an ERR packet
// to send to the client before closing.
type sessionError struct {
	source QuitSource
	err    error
	reply  *mysqlproto.SQLError // sent to the client if no response byte was sent yet
}

func (e *sessionError) Error() string {
	if e.err == nil {
		return e.source.String()
	}
	return fmt.Sprintf("%s: %v", e.source, e.err)
}

func (e *sessionError) Unwrap() error { return e.err }

func quit(src QuitSource, err error) *sessionError { return &sessionError{source: src, err: err} }

func quitWith(src QuitSource, err error, reply *mysqlproto.SQLError) *sessionError {
	return &sessionError{source: src, err: err, reply: reply}
}

// statementError fails one statement with an ERR packet while the session
// goes on: a server session broke before any byte of the answer reached
// the client, outside a transaction, and another server session can take
// the next statement.
type statementError struct {
	reply *mysqlproto.SQLError
	cause error
	// txnBroken: the failure ended the client's open transaction on its
	// server; later statements of it fail too (Session.txnBroken).
	txnBroken bool
}

func (e *statementError) Error() string { return e.reply.Error() + ": " + e.cause.Error() }

func (e *statementError) Unwrap() error { return e.cause }

// errClientQuit ends a session after COM_QUIT.
var errClientQuit = quit(QuitClientQuit, nil)

// isDisconnect reports whether err means the peer went away rather than a
// bug: EOF, reset, broken pipe, closed connection, timeouts.
func isDisconnect(err error) bool {
	var ne net.Error
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout())
}

// sourceOf returns the quit source of err.
func sourceOf(err error) QuitSource {
	var se *sessionError
	if errors.As(err, &se) {
		return se.source
	}
	return QuitClientNetwork
}
