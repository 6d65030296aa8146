package memory

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"obgate/mysqlproto"
)

// StreamQuery describes a large result streamed to a slow client: MariaDB's
// SEQUENCE engine yields Rows rows of RowLen 'x' bytes each.
type StreamQuery struct {
	Addr string // the proxy (or server) to connect to
	// Login defaults to User "root" and Database "mysql": the SEQUENCE
	// engine's tables exist in every database, but a session needs one.
	Login mysqlproto.ClientOptions
	// Rows and RowLen size the result; 1<<20 rows of 1024 bytes is 1 GiB.
	Rows   int
	RowLen int
	// ReadFirst is how many response bytes the client reads before it
	// stops reading for Stall.
	ReadFirst int64
	Stall     time.Duration
	// RcvBuf sets SO_RCVBUF on the client socket before it connects (the
	// kernel doubles it); 0 leaves the system default. A small buffer keeps
	// the bytes in flight small, so the stall reaches the proxy at once.
	RcvBuf int
	// OnStall and OnResume, when set, run on the reading goroutine right
	// after the client stopped reading and right before it reads again.
	// The stall lasts Stall from its start, whatever OnStall takes.
	OnStall, OnResume func()
}

// SQL is the statement q sends.
func (q StreamQuery) SQL() string {
	return fmt.Sprintf("SELECT REPEAT('x', %d) FROM seq_1_to_%d", q.RowLen, q.Rows)
}

// StreamTimes are the moments of one streamed query.
type StreamTimes struct {
	Sent    time.Time // the query was written
	Stalled time.Time // the client stopped reading
	Resumed time.Time // the client started reading again
	Done    time.Time // the final EOF arrived
}

// StreamResult is what the client received.
type StreamResult struct {
	Rows  int64 // rows received, each checked byte by byte
	Bytes int64 // response bytes read, packet headers included
	// BytesBeforeStall is what the client had read when it stopped.
	BytesBeforeStall int64
	StreamTimes
}

// Drain is how long the client took to read everything after the stall.
func (r StreamResult) Drain() time.Duration { return r.Done.Sub(r.Resumed) }

// StreamClient is a logged-in raw client that sends a query and reads the
// response itself, through a 16 KiB read buffer, so that the bytes it holds
// are known.
type StreamClient struct {
	c   *mysqlproto.Client
	r   *bufio.Reader
	seq uint8
	hdr [mysqlproto.HeaderLen]byte
	buf []byte
}

// DialStream connects to addr with the given receive buffer (0: default)
// and logs in, by default as root to database mysql.
func DialStream(ctx context.Context, addr string, rcvBuf int, login mysqlproto.ClientOptions) (*StreamClient, error) {
	if login.User == "" {
		login.User = "root"
	}
	if login.Database == "" {
		login.Database = "mysql"
	}
	d := net.Dialer{}
	if rcvBuf > 0 {
		d.Control = func(_, _ string, rc syscall.RawConn) error {
			var serr error
			err := rc.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvBuf)
			})
			return errors.Join(err, serr)
		}
	}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	c, err := mysqlproto.NewClient(conn, login)
	if err != nil {
		conn.Close()
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	return &StreamClient{c: c, r: c.Reader(), buf: make([]byte, 64<<10)}, nil
}

// Close sends COM_QUIT and closes the connection.
func (sc *StreamClient) Close() error { return sc.c.Close() }

// Run sends q's query and reads the whole response, stalling as q says. It
// checks the column count, every row's bytes, the sequence ids and the
// row count. ctx bounds the whole exchange.
func (sc *StreamClient) Run(ctx context.Context, q StreamQuery) (StreamResult, error) {
	var res StreamResult
	conn := sc.c.Conn()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
		defer conn.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	sql := q.SQL()
	out := make([]byte, 0, mysqlproto.HeaderLen+1+len(sql))
	out, _ = mysqlproto.AppendPacket(out, 0, append([]byte{byte(mysqlproto.ComQuery)}, sql...))
	sc.seq = 1
	res.Sent = time.Now()
	if _, err := conn.Write(out); err != nil {
		return res, err
	}

	wantRow := mysqlproto.AppendLenEncBytes(nil, bytes.Repeat([]byte{'x'}, q.RowLen))
	stalled := q.Stall <= 0
	if stalled {
		res.Stalled, res.Resumed = res.Sent, res.Sent
	}
	phase := 0 // 0: column count, 1: column definitions, 2: rows
	for {
		if !stalled && res.Bytes >= q.ReadFirst {
			stalled = true
			res.Stalled = time.Now()
			res.BytesBeforeStall = res.Bytes
			if q.OnStall != nil {
				q.OnStall()
			}
			if err := sleepCtx(ctx, q.Stall-time.Since(res.Stalled)); err != nil {
				return res, err
			}
			if q.OnResume != nil {
				q.OnResume()
			}
			res.Resumed = time.Now()
		}
		p, err := sc.readPacket()
		if err != nil {
			return res, fmt.Errorf("after %d rows, %d bytes: %w", res.Rows, res.Bytes, ctxErr(ctx, err))
		}
		res.Bytes += int64(mysqlproto.HeaderLen + len(p))
		if len(p) == 0 {
			return res, fmt.Errorf("empty packet after %d rows", res.Rows)
		}
		if p[0] == mysqlproto.ERRHeader {
			e, _ := mysqlproto.ParseERR(p)
			return res, fmt.Errorf("after %d rows: %w", res.Rows, mysqlproto.SQLErrorFromERR(e))
		}
		switch phase {
		case 0:
			if n, _, ok := mysqlproto.ReadLenEncInt(p, 0); !ok || n != 1 {
				return res, fmt.Errorf("want a result set of 1 column, got first packet %x", p[:min(len(p), 16)])
			}
			phase = 1
		case 1:
			if mysqlproto.IsEOFPacket(p) {
				phase = 2
			}
		case 2:
			if mysqlproto.IsEOFPacket(p) {
				res.Done = time.Now()
				if !stalled {
					res.Stalled, res.Resumed = res.Done, res.Done
					res.BytesBeforeStall = res.Bytes
				}
				eof, _ := mysqlproto.ParseEOF(p)
				if eof.Status.Has(mysqlproto.StatusMoreResultsExists) {
					return res, errors.New("unexpected further result")
				}
				if res.Rows != int64(q.Rows) {
					return res, fmt.Errorf("got %d rows, want %d", res.Rows, q.Rows)
				}
				return res, nil
			}
			if !bytes.Equal(p, wantRow) {
				return res, fmt.Errorf("row %d is corrupt: %d bytes, starting %x", res.Rows+1, len(p), p[:min(len(p), 16)])
			}
			res.Rows++
		}
	}
}

// readPacket reads one physical packet into the client's buffer and checks
// its sequence id. The payload is valid until the next call.
func (sc *StreamClient) readPacket() ([]byte, error) {
	if _, err := io.ReadFull(sc.r, sc.hdr[:]); err != nil {
		return nil, err
	}
	n, seq := mysqlproto.ParseHeader(sc.hdr[:])
	if seq != sc.seq {
		return nil, fmt.Errorf("packet sequence %d, want %d", seq, sc.seq)
	}
	sc.seq++
	if n > len(sc.buf) {
		return nil, fmt.Errorf("packet of %d bytes, more than this client expects", n)
	}
	p := sc.buf[:n]
	if _, err := io.ReadFull(sc.r, p); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return p, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// ctxErr prefers the context's error over the I/O error it caused.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", context.Cause(ctx), err)
	}
	return err
}

// StallReport is one slow-client measurement of a proxy's memory.
type StallReport struct {
	Query     string `json:"query"`
	Rows      int64  `json:"rows"`
	Bytes     int64  `json:"bytes"`
	ReadFirst int64  `json:"read_first_bytes"`
	RcvBuf    int    `json:"client_so_rcvbuf"`
	// RSS in bytes: before the query was sent, the peak while the client
	// did not read, the peak over the whole query, and right after the
	// last byte arrived.
	RSSBefore    int64         `json:"rss_before"`
	RSSPeakStall int64         `json:"rss_peak_stall"`
	RSSPeak      int64         `json:"rss_peak"`
	RSSAfter     int64         `json:"rss_after"`
	Stall        time.Duration `json:"stall_ns"`
	FirstRead    time.Duration `json:"first_read_ns"` // query sent → client stopped reading
	Drain        time.Duration `json:"drain_ns"`      // client resumed → last byte
	// InFlight is, at the end of the stall, how many bytes the proxy had
	// read from the server and the client had not: what the proxy and the
	// socket buffers between it and the client held. Read from obgate's
	// odp_request_byte counters; -1 without metrics.
	InFlight int64    `json:"in_flight_at_resume"`
	Samples  []Sample `json:"samples"`
}

// Growth is the RSS growth during the stall (peak minus before).
func (r StallReport) Growth() int64 { return r.RSSPeakStall - r.RSSBefore }

// SeriesServerBytes counts the response bytes obgate read from servers.
const SeriesServerBytes = `odp_request_byte{transType="response",sessionType="server"}`

// StallOptions describe a slow-client measurement.
type StallOptions struct {
	Query StreamQuery
	PID   int // the proxy's process
	// MetricsURL is obgate's /metrics, for the bytes in flight; empty for
	// a proxy without one.
	MetricsURL string
	// Interval is the RSS sampling period.
	Interval time.Duration
}

// MeasureStall runs o.Query against the proxy, sampling its RSS from just
// before the query until just after the last byte arrived.
func MeasureStall(ctx context.Context, o StallOptions) (StallReport, error) {
	q := o.Query
	rep := StallReport{Query: q.SQL(), ReadFirst: q.ReadFirst, RcvBuf: q.RcvBuf, Stall: q.Stall, InFlight: -1}
	sc, err := DialStream(ctx, q.Addr, q.RcvBuf, q.Login)
	if err != nil {
		return rep, fmt.Errorf("login to %s: %w", q.Addr, err)
	}
	defer sc.Close()
	var serverBefore, serverAtResume float64
	var scrapeErr error
	if o.MetricsURL != "" {
		if serverBefore, err = ScrapeValue(ctx, o.MetricsURL, SeriesServerBytes); err != nil {
			return rep, err
		}
		q.OnResume = func() { serverAtResume, scrapeErr = ScrapeValue(ctx, o.MetricsURL, SeriesServerBytes) }
	}
	s := StartSampler(o.PID, o.Interval)
	defer s.Stop()
	if rep.RSSBefore, err = s.Now(); err != nil {
		return rep, err
	}
	res, err := sc.Run(ctx, q)
	rep.Rows, rep.Bytes = res.Rows, res.Bytes
	if err != nil {
		return rep, err
	}
	rep.RSSAfter, _ = s.Now()
	rep.Samples = s.Stop()
	rep.RSSPeakStall = max(PeakBetween(rep.Samples, res.Stalled, res.Resumed), rep.RSSBefore)
	rep.RSSPeak = max(PeakBetween(rep.Samples, res.Sent, time.Time{}), rep.RSSBefore)
	rep.FirstRead = res.Stalled.Sub(res.Sent)
	rep.Drain = res.Drain()
	if o.MetricsURL != "" {
		if scrapeErr != nil {
			return rep, scrapeErr
		}
		rep.InFlight = int64(serverAtResume-serverBefore) - res.BytesBeforeStall
	}
	return rep, nil
}
