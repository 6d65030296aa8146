package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
)

// schemaName is the database of the load's tables.
const schemaName = "sbtest"

// Driver timeouts of the load's connections.
const (
	ConnectTimeout = 2 * time.Second
	ReadTimeout    = 5 * time.Second
	WriteTimeout   = 5 * time.Second
)

// LoadConfig says where the load goes and how much of it there is.
type LoadConfig struct {
	// Addr is the proxy's host:port.
	Addr string
	// User logs in (root@test#cluster in OceanBase mode, root in mysql
	// mode); no password.
	User string
	// Readers and Writers are the numbers of workers of each kind.
	Readers, Writers int
	// TableSize is the number of rows of sbtest1; RangeSize the width of
	// the range statements (sysbench's range_size, 100).
	TableSize, RangeSize int
	// Rate bounds the statements per second of all workers together; 0
	// means as fast as they go.
	Rate int
	// Tag starts every ledger op name, so that ops of different runs
	// never collide.
	Tag string
	// Prepared sends every statement with parameters as applications
	// using go-sql-driver do by default: prepared on the server, executed,
	// closed (COM_STMT_PREPARE, _EXECUTE, _CLOSE). Otherwise the driver
	// puts the parameters into the text, one COM_QUERY each.
	Prepared bool
}

// Statement kinds, the two halves of every count.
const (
	kindRead = iota
	kindWrite
)

// OpStats counts the statements of one kind.
type OpStats struct {
	OK     int64            `json:"ok"`
	Failed int64            `json:"failed"`
	Errors map[string]int64 `json:"errors"`
}

// Second is one second of the run: statements that finished in it.
type Second struct {
	T         int   `json:"t"`
	ReadOK    int64 `json:"read_ok"`
	ReadFail  int64 `json:"read_fail"`
	WriteOK   int64 `json:"write_ok"`
	WriteFail int64 `json:"write_fail"`
	// NodeRequests are the statements the faulted server received in this
	// second, where that is known (obsim log or obgate's metric); -1 when
	// it is not.
	NodeRequests int64 `json:"node_requests"`
}

// Failure is one failed statement.
type Failure struct {
	Kind   string  `json:"kind"` // read or write
	Worker int     `json:"worker"`
	Stmt   string  `json:"stmt"`
	Class  string  `json:"class"`
	Start  float64 `json:"start_s"` // seconds since the run began
	End    float64 `json:"end_s"`
	Err    string  `json:"error"`
}

// maxFailures bounds the failures kept one by one (counts stay exact).
const maxFailures = 5000

// recorder collects the outcome of every statement.
type recorder struct {
	origin time.Time

	mu       sync.Mutex
	stats    [2]OpStats
	secs     [][4]int64 // read ok, read fail, write ok, write fail
	failures []Failure
	dropped  int
}

func newRecorder(origin time.Time) *recorder {
	r := &recorder{origin: origin}
	for i := range r.stats {
		r.stats[i].Errors = map[string]int64{}
	}
	return r
}

func (r *recorder) since(t time.Time) float64 { return t.Sub(r.origin).Seconds() }

// done records a statement of kind that started at start and ended now
// with err (class is Classify's bucket for it).
func (r *recorder) done(kind, worker int, stmt string, start time.Time, err error, class string) {
	end := time.Now()
	sec := max(0, int(end.Sub(r.origin)/time.Second))
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.secs) <= sec {
		r.secs = append(r.secs, [4]int64{})
	}
	s := &r.stats[kind]
	if err == nil {
		s.OK++
		r.secs[sec][2*kind]++
		return
	}
	s.Failed++
	s.Errors[class]++
	r.secs[sec][2*kind+1]++
	if len(r.failures) >= maxFailures {
		r.dropped++
		return
	}
	msg := err.Error()
	if len(msg) > 200 {
		msg = msg[:200]
	}
	r.failures = append(r.failures, Failure{Kind: [2]string{"read", "write"}[kind], Worker: worker, Stmt: stmt, Class: class,
		Start: r.since(start), End: r.since(end), Err: msg})
}

// Load is a running load: read and write workers, each on its own
// connection.
type Load struct {
	cfg    LoadConfig
	rec    *recorder
	ledger *Ledger

	connects, connectFails atomic.Int64
	workersMade            atomic.Int64
	txnSeq                 atomic.Int64
	stop                   atomic.Bool
	wg                     sync.WaitGroup

	mu      sync.Mutex
	workers []*worker
}

// StartLoad starts the workers; origin is time zero of the run's clock.
func StartLoad(cfg LoadConfig, origin time.Time, ledger *Ledger) (*Load, error) {
	if cfg.RangeSize <= 0 {
		cfg.RangeSize = 100
	}
	if cfg.TableSize <= cfg.RangeSize {
		return nil, fmt.Errorf("chaos: table size %d must exceed the range size %d", cfg.TableSize, cfg.RangeSize)
	}
	l := &Load{cfg: cfg, rec: newRecorder(origin), ledger: ledger}
	n := cfg.Readers + cfg.Writers
	var every time.Duration
	if cfg.Rate > 0 && n > 0 {
		every = time.Duration(float64(time.Second) * float64(n) / float64(cfg.Rate))
	}
	for i := range n {
		w, err := l.newWorker(i + 1)
		if err != nil {
			l.Stop()
			return nil, err
		}
		w.pace.every = every
		l.wg.Add(1)
		if i < cfg.Readers {
			go w.loop(w.readEvent)
		} else {
			go w.loop(w.writeEvent)
		}
	}
	return l, nil
}

// Stop ends the workers after their current statement and closes their
// connections.
func (l *Load) Stop() {
	l.stop.Store(true)
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range l.workers {
		w.db.Close()
	}
	l.workers = nil
}

// LoadStats is what the clients saw.
type LoadStats struct {
	Readers int     `json:"readers"`
	Writers int     `json:"writers"`
	Reads   OpStats `json:"reads"`
	Writes  OpStats `json:"writes"`
	// Connects counts connection attempts, ConnectFailures the ones that
	// failed; Reconnects the connections opened beyond one per client.
	Connects        int64     `json:"connects"`
	ConnectFailures int64     `json:"connect_failures"`
	Reconnects      int64     `json:"reconnects"`
	Series          []Second  `json:"-"`
	Failures        []Failure `json:"failures"`
	FailuresDropped int       `json:"failures_dropped,omitempty"`
}

// Stats returns a snapshot of the counts.
func (l *Load) Stats() LoadStats {
	r := l.rec
	r.mu.Lock()
	defer r.mu.Unlock()
	st := LoadStats{Readers: l.cfg.Readers, Writers: l.cfg.Writers,
		Connects: l.connects.Load(), ConnectFailures: l.connectFails.Load(),
		Failures: append([]Failure(nil), r.failures...), FailuresDropped: r.dropped}
	st.Reconnects = max(0, st.Connects-st.ConnectFailures-l.workersMade.Load())
	for i, s := range r.stats {
		c := OpStats{OK: s.OK, Failed: s.Failed, Errors: map[string]int64{}}
		for k, v := range s.Errors {
			c.Errors[k] = v
		}
		if i == kindRead {
			st.Reads = c
		} else {
			st.Writes = c
		}
	}
	for i, s := range r.secs {
		st.Series = append(st.Series, Second{T: i, ReadOK: s[0], ReadFail: s[1], WriteOK: s[2], WriteFail: s[3], NodeRequests: -1})
	}
	return st
}

// worker is one client with its own connection (a database/sql pool of
// one, so that a broken connection is replaced on the next statement and
// the replacement is counted).
type worker struct {
	l    *Load
	id   int
	db   *sql.DB
	rng  *rand.Rand
	pace pacer
	seq  int
	// ioErr is the first socket error since the current statement began.
	ioErr atomic.Pointer[error]
}

func (l *Load) newWorker(id int) (*worker, error) {
	w := &worker{l: l, id: id, rng: rand.New(rand.NewPCG(uint64(id), uint64(time.Now().UnixNano())))}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = l.cfg.User, "tcp", l.cfg.Addr, schemaName
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = ConnectTimeout, ReadTimeout, WriteTimeout
	cfg.InterpolateParams = !l.cfg.Prepared
	cfg.Logger = &mysql.NopLogger{} // every failure is counted; the driver's log would repeat them
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &trackedConn{Conn: c, first: &w.ioErr}, nil
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	w.db = sql.OpenDB(&countingConnector{inner: conn, connects: &l.connects, failed: &l.connectFails})
	w.db.SetMaxOpenConns(1)
	w.db.SetMaxIdleConns(1)
	l.workersMade.Add(1)
	l.mu.Lock()
	l.workers = append(l.workers, w)
	l.mu.Unlock()
	return w, nil
}

func (w *worker) loop(event func()) {
	defer w.l.wg.Done()
	for !w.l.stop.Load() {
		event()
	}
}

// class classifies err with the socket error seen during the statement.
func (w *worker) class(err error) string {
	var ioErr error
	if p := w.ioErr.Load(); p != nil {
		ioErr = *p
	}
	return Classify(err, ioErr)
}

// begin prepares a statement: waits for its turn and clears the socket
// error. It reports false once the load is stopping.
func (w *worker) begin() (time.Time, bool) {
	if w.l.stop.Load() {
		return time.Time{}, false
	}
	w.pace.wait()
	w.ioErr.Store(nil)
	return time.Now(), true
}

// query runs a read to its end.
func (w *worker) query(stmt, q string, args ...any) error {
	start, ok := w.begin()
	if !ok {
		return nil
	}
	rows, err := w.db.QueryContext(context.Background(), q, args...)
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		if cerr := rows.Close(); err == nil {
			err = cerr
		}
	}
	w.l.rec.done(kindRead, w.id, stmt, start, err, w.class(err))
	return err
}

// readEvent is one oltp_read_only event with --skip_trx=on.
func (w *worker) readEvent() {
	n, rs := w.l.cfg.TableSize, w.l.cfg.RangeSize
	for range 10 {
		_ = w.query("point_select", "SELECT c FROM sbtest1 WHERE id=?", w.rng.IntN(n)+1)
	}
	ranges := []struct{ stmt, q string }{
		{"simple_range", "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?"},
		{"sum_range", "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?"},
		{"order_range", "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"},
		{"distinct_range", "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"},
	}
	for _, r := range ranges {
		lo := w.rng.IntN(n-rs+1) + 1
		_ = w.query(r.stmt, r.q, lo, lo+rs-1)
	}
}

const insertSQL = "INSERT INTO ledger (op, worker, seq) VALUES (?, ?, ?)"

// op names the ledger operation of the worker's current attempt.
func (w *worker) op(suffix string) string {
	return fmt.Sprintf("%s-w%d-%d%s", w.l.cfg.Tag, w.id, w.seq, suffix)
}

// exec runs a write on tx, or in autocommit when tx is nil.
func (w *worker) exec(tx *sql.Tx, stmt, q string, args ...any) (bool, error) {
	start, ok := w.begin()
	if !ok {
		return false, nil
	}
	var err error
	if tx != nil {
		_, err = tx.ExecContext(context.Background(), q, args...)
	} else {
		_, err = w.db.ExecContext(context.Background(), q, args...)
	}
	w.l.rec.done(kindWrite, w.id, stmt, start, err, w.class(err))
	return true, err
}

// writeEvent alternates an autocommit INSERT and a two-row transaction.
func (w *worker) writeEvent() {
	w.seq++
	if w.seq%2 == 1 {
		w.autocommitWrite()
	} else {
		w.txnWrite()
	}
}

// autocommitWrite inserts one op; an error leaves its fate unknown.
func (w *worker) autocommitWrite() (string, error) {
	op := w.op("")
	ran, err := w.exec(nil, "insert", insertSQL, op, w.id, w.seq)
	if !ran {
		return "", nil
	}
	if err != nil {
		w.l.ledger.Note(op, FateUnknown, w.class(err), 0)
	} else {
		w.l.ledger.Note(op, FateAcked, "", 0)
	}
	return op, err
}

// openTxn starts a transaction (START TRANSACTION, counted as a write).
func (w *worker) openTxn() (*sql.Tx, bool, error) {
	start, ok := w.begin()
	if !ok {
		return nil, false, nil
	}
	tx, err := w.db.BeginTx(context.Background(), nil)
	w.l.rec.done(kindWrite, w.id, "begin", start, err, w.class(err))
	return tx, true, err
}

// commit commits tx (counted as a write).
func (w *worker) commit(tx *sql.Tx) error {
	w.pace.wait()
	w.ioErr.Store(nil)
	start := time.Now()
	err := tx.Commit()
	w.l.rec.done(kindWrite, w.id, "commit", start, err, w.class(err))
	return err
}

// txnWrite runs BEGIN; INSERT a; INSERT b; COMMIT. An error before COMMIT
// rolls back and fails the ops tried; an error on COMMIT leaves both
// unknown.
func (w *worker) txnWrite() {
	tx, ran, err := w.openTxn()
	if !ran || err != nil {
		return
	}
	txn := w.l.txnSeq.Add(1)
	var tried []string
	for _, suffix := range []string{"-a", "-b"} {
		op := w.op(suffix)
		ran, err := w.exec(tx, "txn_insert", insertSQL, op, w.id, w.seq)
		if !ran {
			// Stopping: give up the transaction; what was tried is not
			// committed.
			_ = tx.Rollback()
			for _, o := range tried {
				w.l.ledger.Note(o, FateFailed, "stopped", txn)
			}
			return
		}
		tried = append(tried, op)
		if err != nil {
			_ = tx.Rollback() // not counted: cleanup; a broken connection rolls back anyway
			for _, o := range tried {
				w.l.ledger.Note(o, FateFailed, w.class(err), txn)
			}
			return
		}
	}
	if err := w.commit(tx); err != nil {
		for _, o := range tried {
			w.l.ledger.Note(o, FateUnknown, w.class(err), txn)
		}
		return
	}
	for _, o := range tried {
		w.l.ledger.Note(o, FateAcked, "", txn)
	}
}

// pacer spaces a worker's statements evenly.
type pacer struct {
	every time.Duration
	next  time.Time
}

func (p *pacer) wait() {
	if p.every <= 0 {
		return
	}
	now := time.Now()
	if p.next.IsZero() || now.Sub(p.next) > time.Second {
		p.next = now // far behind (a stall): start again, no burst
	}
	p.next = p.next.Add(p.every)
	if d := p.next.Sub(now); d > 0 {
		time.Sleep(d)
	}
}
