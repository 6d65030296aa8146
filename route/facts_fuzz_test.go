package route

import (
	"bytes"
	"strconv"
	"testing"
	"unsafe"
)

// FuzzLex checks that Lex and LexPrefix never panic and that their facts
// hang together: borrowed slices lie inside the input, the kind is
// Classify's, repeated runs agree, careful facts stay careful, and KILL
// reads as the reactor's grammar reads it where no comment can differ.
func FuzzLex(f *testing.F) {
	for _, c := range factsCases {
		f.Add([]byte(c.sql))
	}
	f.Add([]byte(benchPointSelect))
	f.Add([]byte(benchUpdate))
	f.Fuzz(func(t *testing.T, b []byte) {
		fa := Lex(b)
		checkFacts(t, b, fa)
		if fb := Lex(b); summarize(fa) != summarize(fb) || !sameTables(fa, fb) {
			t.Fatalf("Lex(%q) differs between runs", b)
		}
		info := Classify(b)
		if info.Kind != fa.Kind || info.Second != fa.Second {
			t.Fatalf("Lex(%q) kind %v/%q, Classify %v/%q", b, fa.Kind, fa.Second, info.Kind, info.Second)
		}
		if fa.ReadOnly && (fa.MultiStatement || fa.Incomplete || fa.Pins != 0) {
			t.Fatalf("Lex(%q) read-only with %+v", b, summarize(fa))
		}
		if fa.PlainBegin && (fa.Txn != TxnBegin || fa.MultiStatement) {
			t.Fatalf("Lex(%q) plain begin with %+v", b, summarize(fa))
		}
		if fa.Incomplete && (fa.Txn != TxnNone || fa.Kill.OK || fa.ReadOnly || fa.PlainBegin) {
			t.Fatalf("Lex(%q) incomplete with %+v", b, summarize(fa))
		}
		if !bytes.Contains(b, []byte("/*")) {
			id, query, ok := refParseKill(b)
			if ok != fa.Kill.OK || (ok && (id != fa.Kill.ID || query != fa.Kill.Query)) {
				t.Fatalf("Lex(%q) kill %+v, reference %v %v %v", b, fa.Kill, id, query, ok)
			}
		}
		fp := LexPrefix(b)
		checkFacts(t, b, fp)
		if !fp.Incomplete || fp.ReadOnly || fp.Txn != TxnNone || fp.Kill.OK {
			t.Fatalf("LexPrefix(%q) = %+v", b, summarize(fp))
		}
		if fp.Pins&^fa.Pins != 0 {
			t.Fatalf("LexPrefix(%q) pins %v, Lex %v", b, fp.Pins, fa.Pins)
		}
	})
}

// checkFacts checks the table references of f against its input b.
func checkFacts(t *testing.T, b []byte, f Facts) {
	t.Helper()
	if f.NumTables < 0 || f.NumTables > len(f.Tables) {
		t.Fatalf("Lex(%q): NumTables %d", b, f.NumTables)
	}
	if f.MoreTables && f.NumTables != len(f.Tables) {
		t.Fatalf("Lex(%q): MoreTables with %d tables", b, f.NumTables)
	}
	for i := 0; i < f.NumTables; i++ {
		within(t, b, f.Tables[i].DB)
		within(t, b, f.Tables[i].Name)
	}
	within(t, b, f.TargetDBServer)
	for i := f.NumTables; i < len(f.Tables); i++ {
		if f.Tables[i].DB != nil || f.Tables[i].Name != nil {
			t.Fatalf("Lex(%q): table %d set beyond NumTables", b, i)
		}
	}
}

// within fails unless part is empty or a sub-slice of b.
func within(t *testing.T, b, part []byte) {
	t.Helper()
	if len(part) == 0 {
		return
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(part)))
	if p < base || p+uintptr(len(part)) > base+uintptr(len(b)) {
		t.Fatalf("Lex(%q): %q is not part of the input", b, part)
	}
}

func sameTables(a, b Facts) bool {
	for i := range a.Tables {
		if unsafe.SliceData(a.Tables[i].Name) != unsafe.SliceData(b.Tables[i].Name) ||
			unsafe.SliceData(a.Tables[i].DB) != unsafe.SliceData(b.Tables[i].DB) {
			return false
		}
	}
	return true
}

// refParseKill is the KILL grammar the reactor used before Facts:
// KILL [CONNECTION | QUERY] [-]digits, then only ';' and comments.
func refParseKill(sql []byte) (uint32, bool, bool) {
	pos := SkipSpace(sql, 0)
	word, pos := Word(sql, pos)
	if !EqualFold(word, "KILL") {
		return 0, false, false
	}
	pos = SkipSpace(sql, pos)
	next, after := Word(sql, pos)
	query := false
	switch {
	case EqualFold(next, "QUERY"):
		query = true
		pos = SkipSpace(sql, after)
	case EqualFold(next, "CONNECTION"):
		pos = SkipSpace(sql, after)
	}
	negative := pos < len(sql) && sql[pos] == '-' && !isDashComment(sql, pos)
	if negative {
		pos = SkipSpace(sql, pos+1)
	}
	digits, pos := Word(sql, pos)
	id, err := strconv.ParseUint(string(digits), 10, 32)
	if err != nil || negative && (id == 0 || id > 1<<31) {
		return 0, false, false
	}
	if negative {
		id = 1<<32 - id
	}
	pos = SkipSpace(sql, pos)
	for pos < len(sql) && sql[pos] == ';' {
		pos = SkipSpace(sql, pos+1)
	}
	if pos != len(sql) {
		return 0, false, false
	}
	return uint32(id), query, true
}
