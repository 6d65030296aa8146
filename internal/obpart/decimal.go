package obpart

import (
	"cmp"
	"encoding/binary"
	"math/bits"
)

// Decimal is a DECIMAL value as OceanBase 4.x holds it (ObDecimalIntType):
// the unscaled integer, value × 10^scale at the column's scale, here as a
// 256-bit little-endian two's-complement number (wide enough for
// DECIMAL(65, s)).
type Decimal [32]byte

// MaxDecimalPrecision is MySQL's largest DECIMAL precision.
const MaxDecimalPrecision = 65

// words returns d as four little-endian 64-bit words.
func (d *Decimal) words() (w [4]uint64) {
	for i := range w {
		w[i] = binary.LittleEndian.Uint64(d[8*i:])
	}
	return w
}

func (d *Decimal) setWords(w [4]uint64) {
	for i := range w {
		binary.LittleEndian.PutUint64(d[8*i:], w[i])
	}
}

func (d *Decimal) negative() bool { return d[31]&0x80 != 0 }

// negate returns the two's complement of w.
func negate(w [4]uint64) [4]uint64 {
	var carry uint64 = 1
	for i := range w {
		w[i], carry = bits.Add64(^w[i], 0, carry)
	}
	return w
}

// ParseDecimal reads text as a DECIMAL(precision, scale) value: optional
// blanks, an optional sign, digits with an optional point, optional
// blanks. It reports false when the text is anything else, when the value
// needs more integer digits than precision-scale allows, or when it has
// more fraction digits than scale that are not zeros (the server would
// round it; obgate does not guess how).
func ParseDecimal(text []byte, precision, scale int) (Decimal, bool) {
	var d Decimal
	if precision < 1 || precision > MaxDecimalPrecision || scale < 0 || scale > precision {
		return d, false
	}
	s := trimBlanks(text)
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	var w [4]uint64
	intDigits, fracDigits, digits, point := 0, 0, 0, false
	for _, c := range s {
		switch {
		case c == '.' && !point:
			point = true
			continue
		case c < '0' || c > '9':
			return d, false
		}
		digits++
		if point {
			fracDigits++
			if fracDigits > scale {
				if c != '0' {
					return d, false
				}
				continue
			}
		} else if intDigits > 0 || c != '0' {
			intDigits++
		}
		if !mulAdd(&w, uint64(c-'0')) {
			return d, false
		}
	}
	if digits == 0 || intDigits > precision-scale {
		return d, false
	}
	for range scale - min(fracDigits, scale) {
		if !mulAdd(&w, 0) {
			return d, false
		}
	}
	if neg {
		w = negate(w)
	}
	d.setWords(w)
	return d, true
}

// DecimalFromInt returns the integer v (unsigned when uns) as a
// DECIMAL(precision, scale) value, or false when it does not fit.
func DecimalFromInt(v int64, uns bool, precision, scale int) (Decimal, bool) {
	var buf [21]byte
	n := len(buf)
	u, neg := uint64(v), false
	if !uns && v < 0 {
		u, neg = -u, true
	}
	for {
		n--
		buf[n] = byte('0' + u%10)
		if u /= 10; u == 0 {
			break
		}
	}
	if neg {
		n--
		buf[n] = '-'
	}
	return ParseDecimal(buf[n:], precision, scale)
}

// mulAdd sets w = w*10 + digit and reports false on overflow past 255
// bits (the value must stay positive).
func mulAdd(w *[4]uint64, digit uint64) bool {
	carry := digit
	for i := range w {
		hi, lo := bits.Mul64(w[i], 10)
		var c uint64
		lo, c = bits.Add64(lo, carry, 0)
		w[i], carry = lo, hi+c
	}
	return carry == 0 && w[3]>>63 == 0
}

// DecimalFromBytes reads a serialized decimal integer: its little-endian
// two's-complement bytes, at most 32 of them (the value of an ObObj of
// ObDecimalIntType). Empty bytes are zero.
func DecimalFromBytes(b []byte) (Decimal, bool) {
	var d Decimal
	if len(b) > len(d) {
		return d, false
	}
	copy(d[:], b)
	if len(b) > 0 && b[len(b)-1]&0x80 != 0 {
		for i := len(b); i < len(d); i++ {
			d[i] = 0xFF
		}
	}
	return d, true
}

// Compare orders two decimals of one scale.
func (d *Decimal) Compare(o *Decimal) int {
	if dn, on := d.negative(), o.negative(); dn != on {
		if dn {
			return -1
		}
		return 1
	}
	a, b := d.words(), o.words()
	for i := 3; i >= 0; i-- {
		if c := cmp.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

// HashDecimal is the KEY hash of a decimal (wide::PartitionHash): its
// 32-bit words, least significant first, cut to the fewest that keep its
// value and sign, so the column's width does not matter.
func HashDecimal(d *Decimal, seed uint64) uint64 {
	word := func(i int) uint32 { return binary.LittleEndian.Uint32(d[4*i:]) }
	const sign = 1 << 31
	last := len(d)/4 - 1
	switch word(last) {
	case 0xFFFFFFFF:
		for last > 0 && word(last) == 0xFFFFFFFF && word(last-1)&sign != 0 {
			last--
		}
	case 0:
		for last > 0 && word(last) == 0 && word(last-1)&sign == 0 {
			last--
		}
	}
	return Murmur64A(d[:4*(last+1)], seed)
}

// trimBlanks returns s without leading and trailing spaces, tabs and line
// breaks.
func trimBlanks(s []byte) []byte {
	blank := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	for len(s) > 0 && blank(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && blank(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// Text writes d, of scale scale, in decimal notation ("-12.34").
func (d *Decimal) Text(scale int) string {
	w := d.words()
	neg := d.negative()
	if neg {
		w = negate(w)
	}
	var digits []byte
	for w != [4]uint64{} || len(digits) <= scale {
		var rem uint64
		for i := 3; i >= 0; i-- {
			w[i], rem = bits.Div64(rem, w[i], 10)
		}
		digits = append(digits, byte('0'+rem))
	}
	out := make([]byte, 0, len(digits)+2)
	if neg {
		out = append(out, '-')
	}
	for i := len(digits) - 1; i >= 0; i-- {
		if i == scale-1 {
			out = append(out, '.')
		}
		out = append(out, digits[i])
	}
	return string(out)
}
