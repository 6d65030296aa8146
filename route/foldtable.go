package route

// foldTable finds a word among a fixed set of upper-case ASCII names,
// ignoring ASCII case, without allocating: an open-addressing hash table
// over foldHash with at least twice as many slots as names, so every
// probe ends at an empty slot. It is built once and only read after.
type foldTable struct {
	names  []string
	slots  []uint16 // 1 + index into names; 0 is empty
	maxLen int
}

// newFoldTable builds the table of names; an empty name is left out and
// its index never found.
func newFoldTable(names []string) *foldTable {
	n := 16
	for n < 2*len(names) {
		n *= 2
	}
	t := &foldTable{names: names, slots: make([]uint16, n)}
	for i, name := range names {
		if name == "" {
			continue
		}
		t.maxLen = max(t.maxLen, len(name))
		var h uint32
		for j := 0; j < len(name); j++ {
			h = foldHash(h, name[j])
		}
		s := h & uint32(n-1)
		for t.slots[s] != 0 {
			s = (s + 1) & uint32(n-1)
		}
		t.slots[s] = uint16(i + 1)
	}
	return t
}

// foldHash adds byte c to the hash h of a word, ignoring ASCII case.
func foldHash(h uint32, c byte) uint32 { return h*31 + uint32(c|0x20) }

// index returns the index of the name w spells, or -1.
func (t *foldTable) index(w []byte) int {
	if len(w) == 0 || len(w) > t.maxLen {
		return -1
	}
	var h uint32
	for _, c := range w {
		h = foldHash(h, c)
	}
	return t.indexHash(w, h)
}

// indexHash is index for a word whose foldHash is h.
func (t *foldTable) indexHash(w []byte, h uint32) int {
	if len(w) == 0 || len(w) > t.maxLen {
		return -1
	}
	mask := uint32(len(t.slots) - 1)
	for s := h & mask; ; s = (s + 1) & mask {
		i := int(t.slots[s]) - 1
		if i < 0 {
			return -1
		}
		if name := t.names[i]; len(name) == len(w) && EqualFold(w, name) {
			return i
		}
	}
}

// foldMap is a map from upper-case names to values read through a
// foldTable.
type foldMap[V any] struct {
	table *foldTable
	vals  []V
}

// newFoldMap builds a foldMap holding the entries of m.
func newFoldMap[V any](m map[string]V) foldMap[V] {
	names := make([]string, 0, len(m))
	vals := make([]V, 0, len(m))
	for k, v := range m {
		names = append(names, k)
		vals = append(vals, v)
	}
	return foldMap[V]{table: newFoldTable(names), vals: vals}
}

// get looks word up, ignoring ASCII case.
func (m foldMap[V]) get(word []byte) (V, bool) {
	if i := m.table.index(word); i >= 0 {
		return m.vals[i], true
	}
	var zero V
	return zero, false
}
