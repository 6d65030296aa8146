package route

import "math"

// readHints reads the OceanBase hints obgate acts on from the body of a
// /*+ ... */ comment: read_consistency(weak|strong|frozen) and
// query_timeout(N). Names and values are case-insensitive, blanks may
// surround the parentheses, and other hints (with their arguments) are
// skipped. The first valid hint of each kind counts.
func (l *lexer) readHints(h []byte) {
	for i := 0; i < len(h); {
		if !isIdentByte(h[i]) {
			i++
			continue
		}
		start := i
		for i < len(h) && isIdentByte(h[i]) {
			i++
		}
		name := h[start:i]
		j := i
		for j < len(h) && isBlank(h[j]) {
			j++
		}
		if j >= len(h) || h[j] != '(' {
			continue
		}
		depth, k := 1, j+1
		for ; k < len(h) && depth > 0; k++ {
			switch h[k] {
			case '(':
				depth++
			case ')':
				depth--
			}
		}
		if depth != 0 {
			return
		}
		arg := trimBlanks(h[j+1 : k-1])
		switch {
		case EqualFold(name, "READ_CONSISTENCY") && l.consistency == ConsistencyDefault:
			switch {
			case EqualFold(arg, "WEAK"):
				l.consistency = ConsistencyWeak
			case EqualFold(arg, "STRONG"):
				l.consistency = ConsistencyStrong
			case EqualFold(arg, "FROZEN"):
				l.consistency = ConsistencyFrozen
			}
		case EqualFold(name, "QUERY_TIMEOUT") && l.timeout == 0:
			if n, ok := parseDecimal(arg, math.MaxInt64); ok {
				l.timeout = int64(n)
			}
		}
		i = k
	}
}

// trimBlanks returns b without leading and trailing blanks.
func trimBlanks(b []byte) []byte {
	for len(b) > 0 && isBlank(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isBlank(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// parseDecimal reads b, a non-empty run of ASCII digits, as a number no
// greater than max.
func parseDecimal(b []byte, max uint64) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (max-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}
