package route

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"obgate/mysqlproto"
)

// This file is PL routing (enable_pl_route): a CALL goes where the
// statement its procedure routes by would go. OceanBase publishes that
// statement, the routine's route SQL, in __all_virtual_proxy_routine; ODP
// reads it per routine and routes the CALL by the route SQL's table, and
// so does obgate.

// routineRecheck is how long a routine's route SQL is believed before it
// is read again (in the background; the old one serves meanwhile), so that
// a procedure created or replaced later is seen.
const routineRecheck = 30 * time.Second

// routineEntry is what the cluster knows of one routine: its route SQL
// (nil when it has none, is unknown or could not be read) and that SQL's
// lexer facts, which borrow routeSQL. Immutable but for refreshing.
type routineEntry struct {
	routeSQL   []byte
	facts      Facts
	fetched    time.Time
	refreshing atomic.Bool
}

// routines is a cluster's routine cache: a copy-on-write map read with one
// atomic load, and the fetches in flight (one per routine).
type routines struct {
	m        atomic.Pointer[map[string]*routineEntry]
	mu       sync.Mutex // serialises writers of m and inflight
	inflight map[string]chan struct{}
}

// CallTarget reads the routine a CALL statement names: CALL name, CALL
// db.name or CALL db.package.name, each part plain or backquoted. ok is
// false when sql is not such a CALL.
func CallTarget(sql []byte) (db, pkg, name string, ok bool) {
	l := lexer{s: sql}
	var t token
	l.next(&t)
	if t.kind != tWord || !EqualFold(sql[t.start:t.end], "CALL") {
		return "", "", "", false
	}
	var parts []string
	for {
		l.next(&t)
		switch t.kind {
		case tWord:
			parts = append(parts, string(sql[t.start:t.end]))
		case tQuoted:
			parts = append(parts, string(bytes.ReplaceAll(sql[t.start:t.end], []byte("``"), []byte("`"))))
		default:
			return "", "", "", false
		}
		l.next(&t)
		if !t.is('.') || len(parts) == 3 {
			break
		}
	}
	if !(t.kind == tEOF || t.is('(') || t.is(';')) || l.unclosed {
		return "", "", "", false
	}
	// `` names nothing: no database, package or routine is unnamed.
	if slices.Contains(parts, "") {
		return "", "", "", false
	}
	switch len(parts) {
	case 1:
		return "", "", parts[0], true
	case 2:
		return parts[0], "", parts[1], true
	}
	return parts[0], parts[1], parts[2], true
}

// routine returns the entry of a routine, reading it on first use (bounded
// by ctx; nil when the read did not end in time) and again in the
// background once it is older than routineRecheck. Any goroutine.
func (c *Cluster) routine(ctx context.Context, tenant, db, pkg, name string) *routineEntry {
	key := tenant + "\x00" + db + "\x00" + pkg + "\x00" + name
	if m := c.routines.m.Load(); m != nil {
		if e, ok := (*m)[key]; ok {
			if time.Since(e.fetched) >= routineRecheck && e.refreshing.CompareAndSwap(false, true) {
				go c.contain("routine_fetch", func() {
					defer e.refreshing.Store(false)
					c.fetchRoutine(key, tenant, db, pkg, name)
				})
			}
			return e
		}
	}
	c.routines.mu.Lock()
	done, running := c.routines.inflight[key]
	if !running {
		if c.routines.inflight == nil {
			c.routines.inflight = map[string]chan struct{}{}
		}
		done = make(chan struct{})
		c.routines.inflight[key] = done
		go c.contain("routine_fetch", func() {
			defer func() {
				c.routines.mu.Lock()
				delete(c.routines.inflight, key)
				c.routines.mu.Unlock()
				close(done)
			}()
			c.fetchRoutine(key, tenant, db, pkg, name)
		})
	}
	c.routines.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
		return nil
	}
	if m := c.routines.m.Load(); m != nil {
		return (*m)[key]
	}
	return nil
}

// fetchRoutine reads a routine's route SQL over the location connection
// and publishes its entry; a failed read publishes an entry without one,
// read again after routineRecheck.
func (c *Cluster) fetchRoutine(key, tenant, db, pkg, name string) {
	e := &routineEntry{fetched: time.Now()}
	if sql, err := c.queryRoutine(tenant, db, pkg, name); err != nil {
		c.log.Debug("routine not read", "tenant", tenant, "routine", db+"."+name, "err", err)
	} else if len(sql) > 0 {
		e.routeSQL = sql
		e.facts = Lex(sql)
	}
	c.routines.mu.Lock()
	defer c.routines.mu.Unlock()
	old := c.routines.m.Load()
	m := map[string]*routineEntry{}
	if old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	m[key] = e
	c.routines.m.Store(&m)
}

// queryRoutine reads a routine's route SQL (nil when the cluster has
// none). Names CheckName refuses fail it before any SQL is sent.
func (c *Cluster) queryRoutine(tenant, db, pkg, name string) ([]byte, error) {
	q, err := sqlRoutine(tenant, db, pkg, name)
	if err != nil {
		return nil, err
	}
	cfg := c.cfg.Load()
	ctx, cancel := context.WithTimeout(context.Background(), 2*cfg.ShortAsyncTaskTimeout)
	defer cancel()
	var res *mysqlproto.Result
	err = c.onLocationConn(ctx, func(cl *mysqlproto.Client) (err error) {
		res, err = cl.Query(q)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(res.Rows) == 0 {
		return nil, nil
	}
	return []byte(res.String(0, "routine_sql")), nil
}
