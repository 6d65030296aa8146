package chaos

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

func TestClassify(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	timeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	tests := []struct {
		name       string
		err, ioErr error
		want       string
	}{
		{"nil", nil, nil, ""},
		{"server ERR", &mysql.MySQLError{Number: 8001, Message: "Server is initializing"}, nil, "8001"},
		{"wrapped ERR", fmt.Errorf("exec: %w", &mysql.MySQLError{Number: 2013}), nil, "2013"},
		{"bad conn", driver.ErrBadConn, nil, ClassBadConn},
		{"conn done", sql.ErrConnDone, nil, ClassBadConn},
		{"invalid conn after a read timeout", mysql.ErrInvalidConn, timeout, ClassTimeout},
		{"invalid conn after EOF", mysql.ErrInvalidConn, io.EOF, ClassNet},
		{"invalid conn after a reset", mysql.ErrInvalidConn, os.NewSyscallError("read", syscall.ECONNRESET), ClassNet},
		{"invalid conn, socket error unknown", mysql.ErrInvalidConn, nil, ClassNet},
		{"refused dial", refused, nil, ClassNet},
		{"dial timeout", context.DeadlineExceeded, nil, ClassTimeout},
		{"out of sync", mysql.ErrPktSync, nil, ClassProto},
		{"malformed", mysql.ErrMalformPkt, nil, ClassProto},
		{"anything else", errors.New("boom"), nil, ClassOther},
	}
	for _, tc := range tests {
		if got := Classify(tc.err, tc.ioErr); got != tc.want {
			t.Errorf("%s: Classify = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestLedgerCheck(t *testing.T) {
	l := NewLedger()
	l.Note("acked-ok", FateAcked, "", 0)
	l.Note("acked-missing", FateAcked, "", 0)
	l.Note("acked-twice", FateAcked, "", 0)
	l.Note("failed-absent", FateFailed, "8001", 7)
	l.Note("failed-present", FateFailed, "net", 8)
	l.Note("unknown-present", FateUnknown, "timeout", 0)
	l.Note("unknown-absent", FateUnknown, "timeout", 0)
	// A transaction of unknown fate applied by halves.
	l.Note("txn9-a", FateUnknown, "net", 9)
	l.Note("txn9-b", FateUnknown, "net", 9)
	// One applied whole.
	l.Note("txn10-a", FateUnknown, "net", 10)
	l.Note("txn10-b", FateUnknown, "net", 10)
	counts := map[string]int{
		"acked-ok": 1, "acked-twice": 2, "failed-present": 1, "unknown-present": 1,
		"txn9-a": 1, "txn10-a": 1, "txn10-b": 1, "stranger": 1,
	}
	c := l.Check(counts)
	want := LedgerCheck{Rows: 9, Acked: 3, Failed: 2, Unknown: 6, AckedMissing: 1, Duplicated: 1, FailedPresent: 1,
		UnknownPresent: 4, UnknownAbsent: 2, PartialTxns: 1, Unexpected: 1}
	got := c
	got.Examples = nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Check =\n %+v\nwant\n %+v", got, want)
	}
	if c.OK() {
		t.Error("OK() = true for a broken ledger")
	}
	if ex := c.Examples["acked_missing"]; len(ex) != 1 || ex[0] != "acked-missing" {
		t.Errorf("examples of acked_missing = %v", ex)
	}

	good := NewLedger()
	good.Note("a", FateAcked, "", 0)
	good.Note("b", FateFailed, "net", 1)
	good.Note("c", FateUnknown, "net", 0)
	if c := good.Check(map[string]int{"a": 1}); !c.OK() {
		t.Errorf("a sound ledger fails: %s", c)
	}
}

func TestRecorderSeries(t *testing.T) {
	origin := time.Now().Add(-2500 * time.Millisecond)
	r := newRecorder(origin)
	r.done(kindRead, 1, "point_select", origin, nil, "")
	r.done(kindRead, 1, "point_select", origin, errors.New("x"), ClassNet)
	r.done(kindWrite, 2, "insert", origin, &mysql.MySQLError{Number: 1062}, "1062")
	if len(r.secs) != 3 || r.secs[2] != [4]int64{1, 1, 0, 1} {
		t.Fatalf("seconds = %v, want the third to hold everything", r.secs)
	}
	if r.stats[kindRead].Errors[ClassNet] != 1 || r.stats[kindWrite].Errors["1062"] != 1 {
		t.Errorf("errors = %v / %v", r.stats[kindRead].Errors, r.stats[kindWrite].Errors)
	}
	if len(r.failures) != 2 || r.failures[1].Worker != 2 || r.failures[1].Start != 0 {
		t.Errorf("failures = %+v", r.failures)
	}
}
