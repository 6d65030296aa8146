package reactor_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"obgate/config"
	"obgate/internal/assemble"
	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/metrics"
	"obgate/mysqlproto"
	"obgate/reactor"
)

// scriptedListener is a real listener whose Accept fails with queued
// errors. A call that finds an error queued first takes the next real
// connection and keeps it for the following call, so that a client is
// always waiting behind a failure, as when the kernel's accept fails for
// want of a descriptor.
type scriptedListener struct {
	net.Listener
	mu   sync.Mutex
	errs []error
	held net.Conn
}

// fail queues errors for the next Accept calls.
func (l *scriptedListener) fail(errs ...error) {
	l.mu.Lock()
	l.errs = append(l.errs, errs...)
	l.mu.Unlock()
}

func (l *scriptedListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	c := l.held
	l.held = nil
	l.mu.Unlock()
	if c == nil {
		var err error
		if c, err = l.Listener.Accept(); err != nil {
			return nil, err
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errs) > 0 {
		err := l.errs[0]
		l.errs = l.errs[1:]
		l.held = c
		return nil, err
	}
	return c, nil
}

func (l *scriptedListener) Close() error {
	l.mu.Lock()
	if l.held != nil {
		l.held.Close()
		l.held = nil
	}
	l.mu.Unlock()
	return l.Listener.Close()
}

// acceptErr is an accept failure as package net reports it.
func acceptErr(ln net.Listener, errno syscall.Errno) error {
	return &net.OpError{Op: "accept", Net: "tcp", Addr: ln.Addr(), Err: os.NewSyscallError("accept4", errno)}
}

// recordHandler keeps the warnings logged, for checks on their attributes.
type recordHandler struct {
	mu   sync.Mutex
	recs []slog.Record
	next slog.Handler
}

func (h *recordHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *recordHandler) Handle(ctx context.Context, r slog.Record) error {
	h.mu.Lock()
	h.recs = append(h.recs, r.Clone())
	h.mu.Unlock()
	return h.next.Handle(ctx, r)
}

func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordHandler) WithGroup(string) slog.Handler      { return h }

// sum adds up the integer attribute key of the records with message msg.
func (h *recordHandler) sum(msg, key string) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	var n int64
	for _, r := range h.recs {
		if r.Message != msg {
			continue
		}
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == key {
				n += a.Value.Int64()
			}
			return true
		})
	}
	return n
}

// TestE2EAcceptErrors feeds Serve the accept failures a loaded host
// produces and checks that none ends it: out of descriptors, the waiting
// client is refused with ERR 1040 at greeting time (counted, and warned
// about per burst); other failures are waited out and the client behind
// them is served.
func TestE2EAcceptErrors(t *testing.T) {
	testkit.CheckLeaks(t)
	cfg, err := testproxy.Config(maria(t).Addr(), "net")
	if err != nil {
		t.Fatal(err)
	}
	logs := &recordHandler{next: testkit.NewLogger(t).Handler()}
	reg := metrics.New()
	store := config.NewStore(cfg)
	parts, err := assemble.Build(store, slog.New(logs), nil, reg)
	if err != nil {
		t.Fatal(err)
	}
	defer parts.Close()
	srv, err := reactor.NewServer(reactor.Options{Config: store, Metrics: reg, Logger: slog.New(logs),
		Health: parts.Health, Router: parts.Router, ServerTLS: parts.ServerTLS})
	if err != nil {
		t.Fatal(err)
	}
	parts.StartDetect(srv.DetectTargets)
	real, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &scriptedListener{Listener: real}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			srv.Close()
			ln.Close()
		}
	}
	t.Cleanup(stop)
	addr := real.Addr().String()

	refused := func(what string) {
		t.Helper()
		_, err := testkit.DialRaw(addr, hangLimit)
		se, ok := mysqlproto.AsSQLError(err)
		if !ok || se.Code != mysqlproto.ERConCountError {
			t.Fatalf("%s: got %v, want ERR 1040 in place of the greeting", what, err)
		}
	}
	served1 := func(what string) {
		t.Helper()
		c, err := testkit.DialRaw(addr, hangLimit)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defer c.Close()
		if err := c.Login("root", "", testDB, hangLimit); err != nil {
			t.Fatalf("%s: login: %v", what, err)
		}
		rawQuery(t, c, "SELECT 1")
	}

	ln.fail(acceptErr(real, syscall.EMFILE))
	refused("EMFILE")
	served1("after EMFILE")
	ln.fail(acceptErr(real, syscall.ENFILE))
	refused("ENFILE")
	// Refusing took the spare descriptor again: the next EMFILE is
	// answered the same way.
	ln.fail(acceptErr(real, syscall.EMFILE))
	refused("second EMFILE")
	ln.fail(acceptErr(real, syscall.ENOBUFS), acceptErr(real, syscall.ENOMEM), acceptErr(real, syscall.EPERM),
		acceptErr(real, syscall.EINTR), acceptErr(real, syscall.ECONNABORTED), errors.New("something else"))
	served1("after ENOBUFS, ENOMEM, EPERM, EINTR, ECONNABORTED and an unknown error")

	select {
	case err := <-served:
		t.Fatalf("Serve returned %v while its listener was open", err)
	default:
	}
	var text strings.Builder
	reg.WritePrometheus(&text)
	if v, _ := testkit.MetricSum(text.String(), "obgate_client_refused_total", "reason", "fd_exhausted"); v != 3 {
		t.Errorf(`obgate_client_refused_total{reason="fd_exhausted"} = %v, want 3`, v)
	}
	// One line per burst, but every event accounted for once the burst's
	// tail was reported.
	const refuseMsg = "refusing new clients with ERR 1040: obgate is out of file descriptors"
	testkit.Eventually(t, hangLimit, func() bool { return logs.sum(refuseMsg, "refused") == 3 },
		"the refusal warnings count %d clients, want 3", logs.sum(refuseMsg, "refused"))
	testkit.Eventually(t, hangLimit, func() bool { return logs.sum("accept failed; retrying", "failures") == 6 },
		"the accept warnings count %d failures, want 6", logs.sum("accept failed; retrying", "failures"))

	stop()
	if err := <-served; err != nil {
		t.Errorf("Serve after the listener closed: %v, want nil", err)
	}
}
