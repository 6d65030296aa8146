package chaos

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// dedicatedWorker numbers the scenario's own clients, apart from the load's.
const dedicatedWorker = 900

// txnBreak is what the dedicated client of the txnbreak scenario saw.
type txnBreak struct {
	OpA, OpB string
	// SetupErr says the transaction could not be opened before the fault.
	SetupErr string
	// ErrAt is where the client got its error ("second INSERT", "COMMIT"),
	// ErrClass the error's bucket; empty when it got none.
	ErrAt, ErrClass string
	// Committed: the COMMIT was acknowledged (the transaction survived the
	// loss of its server, which it must not).
	Committed bool
	// Later are the autocommit writes after the error.
	Later    []string
	LaterErr []string
}

func txnBreakScenario() *Scenario {
	return &Scenario{Name: "txnbreak", Title: "stop the node that holds an open write transaction", Opts: withHA(),
		Blind: BlindDuring,
		play:  playTxnBreak, judge: judgeTxnBreak}
}

// playTxnBreak: a dedicated client runs BEGIN and an INSERT, the node the
// INSERT ran on (from obsim's log) is stopped, then the client sends the
// second INSERT (and COMMIT if that got through), then more writes in
// autocommit, while the node is down and after it is back.
func playTxnBreak(ctx context.Context, r *run) error {
	tb := &txnBreak{}
	r.extra["txn"] = tb
	if err := sleepCtx(ctx, r.warm()); err != nil {
		return err
	}
	w, err := r.load.newWorker(dedicatedWorker)
	if err != nil {
		return err
	}
	w.seq = 1
	tb.OpA, tb.OpB = w.op("-a"), w.op("-b")
	txn := r.load.txnSeq.Add(1)
	tx, _, err := w.openTxn()
	if err != nil {
		tb.SetupErr = "BEGIN: " + err.Error()
		return nil
	}
	if _, err := w.exec(tx, "txn_insert", insertSQL, tb.OpA, w.id, w.seq); err != nil {
		_ = tx.Rollback()
		r.ledger.Note(tb.OpA, FateFailed, w.class(err), txn)
		tb.SetupErr = "first INSERT: " + err.Error()
		return nil
	}
	node, err := findNode(ctx, r, tb.OpA)
	if err != nil {
		_ = tx.Rollback()
		r.ledger.Note(tb.OpA, FateFailed, "rolled back", txn)
		tb.SetupErr = err.Error()
		return nil
	}
	r.target(node)
	if err := r.fault("stop "+node+" (it holds the open transaction)", func() error {
		return r.sim.Ctl.NodeAction(node, "stop")
	}); err != nil {
		return err
	}
	_, errB := w.exec(tx, "txn_insert", insertSQL, tb.OpB, w.id, w.seq)
	switch {
	case errB != nil:
		tb.ErrAt, tb.ErrClass = "second INSERT", w.class(errB)
		_ = tx.Rollback()
		r.ledger.Note(tb.OpA, FateFailed, tb.ErrClass, txn)
		r.ledger.Note(tb.OpB, FateFailed, tb.ErrClass, txn)
	default:
		if errC := w.commit(tx); errC != nil {
			tb.ErrAt, tb.ErrClass = "COMMIT", w.class(errC)
			r.ledger.Note(tb.OpA, FateUnknown, tb.ErrClass, txn)
			r.ledger.Note(tb.OpB, FateUnknown, tb.ErrClass, txn)
		} else {
			tb.Committed = true
			r.ledger.Note(tb.OpA, FateAcked, "", txn)
			r.ledger.Note(tb.OpB, FateAcked, "", txn)
		}
	}
	later := func() {
		for range 3 {
			w.seq++
			op, err := w.autocommitWrite()
			if op == "" {
				return
			}
			tb.Later = append(tb.Later, op)
			if err != nil {
				tb.LaterErr = append(tb.LaterErr, op+": "+w.class(err))
			}
		}
	}
	later()
	holdErr := sleepCtx(ctx, r.set.phase(8*time.Second, 4*time.Second))
	if err := r.repair("start "+node, func() error { return r.sim.Ctl.NodeAction(node, "start") }); err != nil {
		return err
	}
	if holdErr != nil {
		return holdErr
	}
	later()
	return sleepCtx(ctx, r.set.phase(6*time.Second, 4*time.Second))
}

// findNode looks the statement that wrote op up in obsim's log.
func findNode(ctx context.Context, r *run, op string) (string, error) {
	deadline := time.Now().Add(3 * time.Second)
	for {
		entries, err := r.sim.Ctl.Log("", 0, 2000)
		if err != nil {
			return "", err
		}
		for i := len(entries) - 1; i >= 0; i-- {
			if e := entries[i]; e.Client == "proxy" && strings.Contains(e.SQL, op) {
				return e.Node, nil
			}
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("the INSERT of %s is not in the obsim log", op)
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return "", err
		}
	}
}

func judgeTxnBreak(r *run) {
	tb, _ := r.extra["txn"].(*txnBreak)
	if tb == nil {
		return
	}
	if tb.SetupErr != "" {
		r.add("open a write transaction before the fault", Fail, "%s", tb.SetupErr)
	} else {
		r.check("the client gets an ERR for the broken transaction", tb.ErrAt != "" && !tb.Committed,
			"%s", describeTxnOutcome(tb))
		a, b := r.counts[tb.OpA], r.counts[tb.OpB]
		r.check("the broken transaction's writes are not in the ledger", a == 0 && b == 0,
			"%s ×%d, %s ×%d", tb.OpA, a, tb.OpB, b)
		acked, once := 0, 0
		for _, op := range tb.Later {
			if f, _ := r.ledger.Fate(op); f == FateAcked {
				acked++
			}
			if r.counts[op] == 1 {
				once++
			}
		}
		detail := fmt.Sprintf("%d of %d acknowledged, %d in the ledger once", acked, len(tb.Later), once)
		if len(tb.LaterErr) > 0 {
			detail += "; failed: " + strings.Join(tb.LaterErr, ", ")
		}
		r.check("later writes are in the ledger", len(tb.Later) > 0 && acked == len(tb.Later) && once == len(tb.Later), "%s", detail)
	}
	r.checkNoReadErrors()
	if w, ok := r.windowAt(0); ok {
		r.checkWritesOnlyInFlight("the stop", w.FaultAt)
	}
	r.checkLedger()
	r.checkLeak()
}

func describeTxnOutcome(tb *txnBreak) string {
	switch {
	case tb.Committed:
		return "the COMMIT was acknowledged although the transaction's server was gone"
	case tb.ErrAt != "":
		return fmt.Sprintf("ERR on the %s (%s)", tb.ErrAt, tb.ErrClass)
	}
	return "no error"
}
