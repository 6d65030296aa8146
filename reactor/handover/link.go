package handover

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Link is the socket sessions are handed over on: a unix
// SOCK_SEQPACKET socket between an old obgate process and its hot-upgrade
// child. Each offer is one message, a session's encoded state
// (State) with its descriptors attached (SCM_RIGHTS: the client's
// connection, then its server sessions' in the state's order); each
// answer is one message, "ok" or "no: reason". The old process sends, the
// new one answers, one offer at a time. Offer may be called from any
// goroutine; Serve from one.
type Link struct {
	conn *net.UnixConn
	mu   sync.Mutex // the old process: one offer at a time
	// lost says an answer did not come (under mu): a late one would be
	// read as the next offer's, so no offer is made any more.
	lost bool
}

// NewLink makes a link of conn, a unix SOCK_SEQPACKET socket.
func NewLink(conn *net.UnixConn) *Link { return &Link{conn: conn} }

// answerTimeout bounds the wait for the new process's answer.
// Without one in time the session is closed in the old process: the new
// one may have taken it, and a session must never be served twice.
const answerTimeout = 5 * time.Second

// maxFDs bounds the descriptors of one offer.
const maxFDs = 64

// ErrRefused wraps the new process's reason for not taking a
// session: it stays with the old process, whose descriptors are intact.
var ErrRefused = errors.New("the new process refused the session")

// Offer sends state with fds and returns the answer: nil when the new
// process took the session, ErrRefused when it did not, another
// error when nobody can tell (the socket failed).
func (l *Link) Offer(state []byte, fds []int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost {
		return fmt.Errorf("%w: an earlier offer got no answer", ErrRefused)
	}
	_ = l.conn.SetDeadline(time.Now().Add(answerTimeout))
	if _, _, err := l.conn.WriteMsgUnix(state, unix.UnixRights(fds...), nil); err != nil {
		// The message did not leave: the new process has nothing.
		return fmt.Errorf("%w: %v", ErrRefused, err)
	}
	var buf [256]byte
	n, _, _, _, err := l.conn.ReadMsgUnix(buf[:], nil)
	if err != nil {
		// The rest drain here; the new process sees the link end.
		l.lost = true
		_ = l.conn.Close()
		return fmt.Errorf("no answer from the new process: %w", err)
	}
	answer := string(buf[:n])
	if answer == "ok" {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrRefused, strings.TrimPrefix(answer, "no: "))
}

// Serve reads offers until the socket ends and answers each with what
// take returns. take owns the descriptors it is given, whatever it
// returns.
func (l *Link) Serve(take func(state []byte, fds []int) error) error {
	buf := make([]byte, MaxState+1)
	oob := make([]byte, unix.CmsgSpace(4*maxFDs))
	for {
		n, oobn, flags, _, err := l.conn.ReadMsgUnix(buf, oob)
		if err != nil {
			return err
		}
		fds, ferr := rightsOf(oob[:oobn])
		switch {
		case ferr != nil:
			err = ferr
		case flags&unix.MSG_CTRUNC != 0:
			err = errors.New("too many descriptors")
		case flags&unix.MSG_TRUNC != 0 || n > MaxState:
			err = errors.New("state too large")
		}
		if err != nil {
			closeFDs(fds)
		} else {
			err = take(buf[:n], fds)
		}
		answer := "ok"
		if err != nil {
			answer = "no: " + err.Error()
			if len(answer) > 250 {
				answer = answer[:250]
			}
		}
		if _, _, werr := l.conn.WriteMsgUnix([]byte(answer), nil, nil); werr != nil {
			return werr
		}
	}
}

// rightsOf returns the descriptors of the SCM_RIGHTS messages in oob.
func rightsOf(oob []byte) ([]int, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	for i := range msgs {
		got, err := unix.ParseUnixRights(&msgs[i])
		if err != nil {
			closeFDs(fds)
			return nil, err
		}
		fds = append(fds, got...)
	}
	for _, fd := range fds {
		unix.CloseOnExec(fd)
	}
	return fds, nil
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		_ = unix.Close(fd)
	}
}
