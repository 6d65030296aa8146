package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"sync"
)

// The ledger table: one row per applied write. There is deliberately no
// unique key on op, so a write applied twice is two rows.
const ledgerDDL = `CREATE TABLE IF NOT EXISTS ledger (
	id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	op VARCHAR(64) NOT NULL,
	worker INT,
	seq INT,
	KEY op_1 (op))`

// Fate is what the client knows about one write operation.
type Fate uint8

const (
	// FateAcked: the autocommit INSERT, or the COMMIT of its transaction, got
	// an OK. The row must be there exactly once.
	FateAcked Fate = iota
	// FateFailed: its transaction got an error before COMMIT was sent and was
	// rolled back. The row must not be there.
	FateFailed
	// FateUnknown: the error came on COMMIT or on an autocommit INSERT; the
	// write may or may not have been applied, but a transaction must be all
	// or nothing.
	FateUnknown
)

func (f Fate) String() string {
	switch f {
	case FateAcked:
		return "acked"
	case FateFailed:
		return "failed"
	case FateUnknown:
		return "unknown"
	}
	return fmt.Sprintf("Fate(%d)", int(f))
}

type opRecord struct {
	fate  Fate
	class string // error class of a failed or unknown op
	txn   int64  // 0 for an autocommit write
}

// Ledger is the client's own record of every write attempt. It is safe for
// concurrent use.
type Ledger struct {
	mu  sync.Mutex
	ops map[string]opRecord
}

// NewLedger returns an empty record.
func NewLedger() *Ledger { return &Ledger{ops: map[string]opRecord{}} }

// Note records the fate of op; txn groups the ops of one transaction (0:
// autocommit). Noting an op again replaces its fate.
func (l *Ledger) Note(op string, fate Fate, class string, txn int64) {
	l.mu.Lock()
	l.ops[op] = opRecord{fate: fate, class: class, txn: txn}
	l.mu.Unlock()
}

// Fate returns what was noted for op.
func (l *Ledger) Fate(op string) (Fate, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.ops[op]
	return r.fate, ok
}

// LedgerCheck compares the client's record with the ledger rows.
type LedgerCheck struct {
	// Rows is the number of ledger rows read, over every database.
	Rows int `json:"rows"`
	// Acked, Failed, Unknown count the client's ops by fate.
	Acked   int `json:"acked"`
	Failed  int `json:"failed"`
	Unknown int `json:"unknown"`
	// AckedMissing: acknowledged but not in the ledger.
	AckedMissing int `json:"acked_missing"`
	// Duplicated: ops in the ledger more than once (any fate).
	Duplicated int `json:"duplicated"`
	// FailedPresent: ops of a failed transaction that are in the ledger.
	FailedPresent int `json:"failed_present"`
	// UnknownPresent, UnknownAbsent: what became of the unknown ops.
	UnknownPresent int `json:"unknown_present"`
	UnknownAbsent  int `json:"unknown_absent"`
	// PartialTxns: transactions of unknown fate with some ops present and
	// some absent.
	PartialTxns int `json:"partial_txns"`
	// Unexpected: ledger rows whose op the client never attempted.
	Unexpected int `json:"unexpected"`
	// Examples lists a few offending ops per kind.
	Examples map[string][]string `json:"examples,omitempty"`
	// Error is set when the ledger could not be read.
	Error string `json:"error,omitempty"`
}

// OK reports whether the ledger holds: nothing acknowledged is missing,
// nothing is there twice, nothing failed is there, no transaction is half
// applied, and nothing unknown to the client is there.
func (c LedgerCheck) OK() bool {
	return c.Error == "" && c.AckedMissing == 0 && c.Duplicated == 0 && c.FailedPresent == 0 &&
		c.PartialTxns == 0 && c.Unexpected == 0
}

func (c LedgerCheck) String() string {
	if c.Error != "" {
		return "ledger not read: " + c.Error
	}
	return fmt.Sprintf("%d rows; acked %d (missing %d), failed %d (present %d), unknown %d (present %d, absent %d), "+
		"duplicated %d, half-applied txns %d, unexpected %d",
		c.Rows, c.Acked, c.AckedMissing, c.Failed, c.FailedPresent, c.Unknown, c.UnknownPresent, c.UnknownAbsent,
		c.Duplicated, c.PartialTxns, c.Unexpected)
}

const maxExamples = 5

func (c *LedgerCheck) example(kind, op string) {
	if c.Examples == nil {
		c.Examples = map[string][]string{}
	}
	if len(c.Examples[kind]) < maxExamples {
		c.Examples[kind] = append(c.Examples[kind], op)
	}
}

// Check compares the record with counts (op → number of ledger rows,
// summed over every database that holds a ledger).
func (l *Ledger) Check(counts map[string]int) LedgerCheck {
	l.mu.Lock()
	defer l.mu.Unlock()
	var c LedgerCheck
	for _, n := range counts {
		c.Rows += n
	}
	// Ops are visited in a fixed order so the examples are reproducible.
	names := make([]string, 0, len(l.ops))
	for op := range l.ops {
		names = append(names, op)
	}
	sort.Strings(names)
	type txnSeen struct{ present, absent int }
	txns := map[int64]*txnSeen{}
	for _, op := range names {
		r := l.ops[op]
		n := counts[op]
		if n > 1 {
			c.Duplicated++
			c.example("duplicated", op)
		}
		switch r.fate {
		case FateAcked:
			c.Acked++
			if n == 0 {
				c.AckedMissing++
				c.example("acked_missing", op)
			}
		case FateFailed:
			c.Failed++
			if n > 0 {
				c.FailedPresent++
				c.example("failed_present", op)
			}
		case FateUnknown:
			c.Unknown++
			if n > 0 {
				c.UnknownPresent++
			} else {
				c.UnknownAbsent++
			}
			if r.txn != 0 {
				t := txns[r.txn]
				if t == nil {
					t = &txnSeen{}
					txns[r.txn] = t
				}
				if n > 0 {
					t.present++
				} else {
					t.absent++
				}
			}
		}
	}
	for _, t := range txns {
		if t.present > 0 && t.absent > 0 {
			c.PartialTxns++
		}
	}
	unexpected := make([]string, 0)
	for op := range counts {
		if _, ok := l.ops[op]; !ok {
			unexpected = append(unexpected, op)
		}
	}
	sort.Strings(unexpected)
	c.Unexpected = len(unexpected)
	for _, op := range unexpected {
		c.example("unexpected", op)
	}
	return c
}

// readLedger adds the ledger rows of db (connected straight to a database
// server, not through a proxy) to counts.
func readLedger(ctx context.Context, db *sql.DB, counts map[string]int) error {
	rows, err := db.QueryContext(ctx, "SELECT op, COUNT(*) FROM "+schemaName+".ledger GROUP BY op")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var op string
		var n int
		if err := rows.Scan(&op, &n); err != nil {
			return err
		}
		counts[op] += n
	}
	return rows.Err()
}
