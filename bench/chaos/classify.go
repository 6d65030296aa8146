package chaos

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"

	"github.com/go-sql-driver/mysql"
)

// Error classes for errors that are not a MySQL ERR packet.
const (
	// ClassNet: the connection broke (reset, EOF, refused).
	ClassNet = "net"
	// ClassTimeout: a read, write or connect ran past the driver's timeout.
	ClassTimeout = "timeout"
	// ClassBadConn: the driver found the connection dead before sending
	// anything (driver.ErrBadConn), after database/sql had already retried.
	ClassBadConn = "badconn"
	// ClassProto: the driver could not read what it got (malformed packet,
	// packets out of sequence).
	ClassProto = "proto"
	// ClassOther: anything else (a bug in the suite, most likely).
	ClassOther = "other"
)

// Classify names the bucket an error is counted in: the error number of an
// ERR packet ("8001", "2013", ...), else one of the classes above. ioErr is
// the first error the connection's socket returned during the statement, or
// nil: the driver turns every broken read into ErrInvalidConn, and only the
// socket's own error tells a timeout from a reset.
func Classify(err, ioErr error) string {
	if err == nil {
		return ""
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return strconv.Itoa(int(me.Number))
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) {
		return ClassBadConn
	}
	if errors.Is(err, mysql.ErrPktSync) || errors.Is(err, mysql.ErrPktSyncMul) || errors.Is(err, mysql.ErrMalformPkt) {
		return ClassProto
	}
	if errors.Is(err, mysql.ErrInvalidConn) {
		if ioErr != nil {
			return netClass(ioErr)
		}
		return ClassNet
	}
	if c := netClass(err); c != ClassOther {
		return c
	}
	return ClassOther
}

// netClass sorts a socket-level error by identity, never by its text.
func netClass(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return ClassTimeout
	case errors.As(err, &ne) && ne.Timeout():
		return ClassTimeout
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNABORTED):
		return ClassNet
	case errors.As(err, &ne):
		return ClassNet
	}
	return ClassOther
}

// trackedConn remembers the first error its socket returned since the
// owner last cleared it.
type trackedConn struct {
	net.Conn
	first *atomic.Pointer[error]
}

func (c *trackedConn) note(err error) {
	if err != nil && c.first.Load() == nil {
		c.first.CompareAndSwap(nil, &err)
	}
}

func (c *trackedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.note(err)
	return n, err
}

func (c *trackedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.note(err)
	return n, err
}

// countingConnector counts the connections database/sql opens.
type countingConnector struct {
	inner            driver.Connector
	connects, failed *atomic.Int64
}

func (c *countingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	c.connects.Add(1)
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		c.failed.Add(1)
	}
	return conn, err
}

func (c *countingConnector) Driver() driver.Driver { return c.inner.Driver() }
