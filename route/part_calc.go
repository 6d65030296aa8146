package route

import "time"

// PartResult is where Calculate found a statement goes. The caller owns
// it and may reuse it: Calculate resets every field but Explain, and
// reuses the capacity of Keys.
type PartResult struct {
	// Known says the statement touches exactly one tablet, TabletID.
	Known    bool
	TabletID int64
	// Part and Sub are the first-level and sub-partition indexes found
	// (partition order: ascending bounds for RANGE, partition ids
	// otherwise); -1 when not known. Part may be known without Sub.
	Part, Sub int
	// How is a static explanation (one of the How* constants); it never
	// allocates.
	How string

	// Explain asks Calculate to fill Keys with the key values it found,
	// as text ("id=7", "day IN [20240101,20250101)"); only then does it
	// allocate.
	Explain bool
	Keys    []string
	// TZ is the session's time zone, in which TIMESTAMP key literals are
	// read; nil leaves such keys unknown. Calculate keeps it.
	TZ *time.Location
}

// The explanations PartResult.How takes.
const (
	HowKeys        = "key values"
	HowPartition   = "PARTITION()"
	HowOutOfRange  = "out of range → partition 0"
	HowNoKey       = "no key in WHERE"
	HowNoKeyInsert = "key column not in INSERT"
	HowSeveral     = "several partitions"
	HowUnsupported = "unsupported expression"
	HowNoParam     = "placeholder value unknown"
	HowBadValue    = "value does not fit the key column"
	HowTooMany     = "too many key values"
	HowEmpty       = "conditions match no row"
	HowNoTable     = "table not in statement"
	HowTwice       = "table named more than once"
	HowStatement   = "statement not supported"
	HowMulti       = "multi-statement"
	HowIncomplete  = "incomplete statement"
	HowKeyType     = "unsupported key type"
	HowPartExpr    = "partitioning expression not computed"
	HowNoTimeZone  = "TIMESTAMP key without a known session time zone"
	HowBadName     = "unknown partition name"
)

// Partition index sentinels of an evaluation.
const (
	idxUnknown = -1
	idxSeveral = -2
)

// eval is the outcome of one set of key values: one WHERE branch or one
// INSERT row.
type eval struct {
	part, sub int // index, idxUnknown or idxSeveral
	oor       bool
	how       string // why part or sub is unknown
}

// tally folds evaluations: a statement touches one tablet only if every
// evaluation gives the same one.
type tally struct {
	n         int
	part, sub int
	oor       bool
	how       string
}

// mergeIdx merges two partition indexes of evaluations.
func mergeIdx(a, b int) int {
	switch {
	case a == b:
		return a
	case a == idxUnknown || b == idxUnknown:
		return idxUnknown
	}
	return idxSeveral
}

func (t *tally) add(e eval) {
	if t.how == "" && (e.part == idxUnknown || e.sub == idxUnknown) {
		t.how = e.how
	}
	t.oor = t.oor || e.oor
	if t.n == 0 {
		t.n, t.part, t.sub = 1, e.part, e.sub
		return
	}
	t.n++
	same := t.part == e.part && t.part >= 0
	t.part = mergeIdx(t.part, e.part)
	if same {
		t.sub = mergeIdx(t.sub, e.sub)
	} else {
		t.sub = idxUnknown
	}
}

// Calculate computes which tablet of this table stmt touches. stmt is the
// whole text of a COM_QUERY or COM_STMT_PREPARE; f, when not nil, is its
// Lex facts; table names the table of the statement this description
// belongs to (the statement may name others); params gives placeholder
// values and may be nil. The result goes to r.
//
// Calculate does not allocate (unless r.Explain) and never panics. It
// keeps nothing of stmt, f, table or params once it returns, and d is only
// read, so any number of goroutines may calculate on one description. It
// only reports a tablet it has read from the text: anything it cannot
// read leaves the result unknown, with How saying why. A value that no
// partition holds goes to partition 0 (and sub-partition 0), as ODP
// routes it.
//
// What it reads: the first statement of the text, SELECT ... FROM,
// UPDATE, DELETE, INSERT/REPLACE ... VALUES or SET; conjunctions of
// col = v, v = col, col <=> v, col IN (...), col BETWEEN a AND b,
// comparisons and col IS NULL in WHERE and in the ON of inner joins;
// columns qualified by the table's name or alias; PARTITION (name) after
// the table; literals and '?' placeholders. A WHERE with a top-level OR
// has one tablet when every branch has the same one. HASH and KEY levels
// need equalities; RANGE levels also take ranges.
func (d *PartDesc) Calculate(stmt []byte, f *Facts, table TableRef, params Params, r *PartResult) {
	explain, keys, tz := r.Explain, r.Keys[:0], r.TZ
	*r = PartResult{Part: -1, Sub: -1, Explain: explain, Keys: keys, TZ: tz}
	switch {
	case f != nil && f.MultiStatement:
		r.How = HowMulti
		return
	case f != nil && f.Incomplete:
		r.How = HowIncomplete
		return
	}
	var st calcState
	st.init(d, stmt, table, params, explain, keys)
	st.tz = tz
	st.statement()
	st.finish(r)
}

// finish turns the tally into the result.
func (st *calcState) finish(r *PartResult) {
	r.Keys = st.keys
	t := &st.tally
	if st.how != "" {
		r.How = st.how
		return
	}
	if st.lx.unclosed {
		r.How = HowIncomplete
		return
	}
	if t.n == 0 {
		r.How = HowNoKey
		return
	}
	d := st.d
	if t.part >= 0 {
		r.Part = t.part
		if d.level == 1 {
			r.Known = true
		} else if t.sub >= 0 {
			r.Sub, r.Known = t.sub, true
		}
	}
	switch {
	case r.Known:
		r.TabletID, _ = d.Tablet(r.Part, r.Sub)
		switch {
		case t.oor:
			r.How = HowOutOfRange
		case st.named:
			r.How = HowPartition
		default:
			r.How = HowKeys
		}
	case t.part == idxSeveral || (t.part >= 0 && t.sub == idxSeveral):
		r.How = HowSeveral
	case t.how != "":
		r.How = t.how
	default:
		r.How = HowNoKey
	}
}
