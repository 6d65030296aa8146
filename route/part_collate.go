package route

import (
	"bytes"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// utf8mb4_general_ci as partition keys need it: every character has a
// 16-bit sort weight, and two strings compare as their weight sequences
// with trailing spaces ignored.
//
// The weights are exact for U+0000..U+00FF: ASCII letters fold to upper
// case; Latin-1 letters fold to their unaccented capital, except Æ Ð × Ø Þ
// ÷ which keep a weight of their own, ß which sorts as S and ÿ as Y; µ
// sorts as Greek capital mu. Characters beyond the Basic Multilingual
// Plane weigh U+FFFD. Elsewhere in the BMP the weight is the upper case
// of the first character of the canonical decomposition (which drops
// accents), the same rule the simulator uses; it differs from the
// collation's own table for a few hundred rarely used characters.

// latin1CI are the weights of U+00C0..U+00FF.
var latin1CI = [64]uint16{
	// À Á Â Ã Ä Å Æ Ç È É Ê Ë Ì Í Î Ï
	'A', 'A', 'A', 'A', 'A', 'A', 0xC6, 'C', 'E', 'E', 'E', 'E', 'I', 'I', 'I', 'I',
	// Ð Ñ Ò Ó Ô Õ Ö × Ø Ù Ú Û Ü Ý Þ ß
	0xD0, 'N', 'O', 'O', 'O', 'O', 'O', 0xD7, 0xD8, 'U', 'U', 'U', 'U', 'Y', 0xDE, 'S',
	// à á â ã ä å æ ç è é ê ë ì í î ï
	'A', 'A', 'A', 'A', 'A', 'A', 0xC6, 'C', 'E', 'E', 'E', 'E', 'I', 'I', 'I', 'I',
	// ð ñ ò ó ô õ ö ÷ ø ù ú û ü ý þ ÿ
	0xD0, 'N', 'O', 'O', 'O', 'O', 'O', 0xF7, 0xD8, 'U', 'U', 'U', 'U', 'Y', 0xDE, 'Y',
}

// Hangul syllables decompose algorithmically; their first component is
// the leading consonant.
const (
	hangulBase  = 0xAC00
	hangulLast  = 0xD7A3
	hangulLBase = 0x1100
	hangulPerL  = 21 * 28
)

// ciWeightAt returns the weight of the character that starts s and its
// length in bytes; the length is 0 when s does not start with valid
// UTF-8 (or is empty).
func ciWeightAt(s []byte) (uint16, int) {
	if len(s) == 0 {
		return 0, 0
	}
	if c := s[0]; c < utf8.RuneSelf {
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		return uint16(c), 1
	}
	r, size := utf8.DecodeRune(s)
	if r == utf8.RuneError && size <= 1 {
		return 0, 0
	}
	return ciWeightRune(r, s[:size]), size
}

// ciWeightRune is the weight of r, whose UTF-8 encoding is enc.
func ciWeightRune(r rune, enc []byte) uint16 {
	switch {
	case r < 0xC0:
		if r == 0xB5 {
			return 0x39C
		}
		return uint16(r)
	case r < 0x100:
		return latin1CI[r-0xC0]
	case r > 0xFFFF:
		return 0xFFFD
	case r >= hangulBase && r <= hangulLast:
		r = hangulLBase + (r-hangulBase)/hangulPerL
	default:
		if d := norm.NFD.Properties(enc).Decomposition(); len(d) > 0 {
			if base, n := utf8.DecodeRune(d); n > 0 && base != utf8.RuneError {
				r = base
			}
		}
	}
	if up := unicode.ToUpper(r); up <= 0xFFFF {
		r = up
	}
	return uint16(r)
}

// compareCI compares two strings in utf8mb4_general_ci. An invalid byte
// weighs U+FFFD.
func compareCI(a, b []byte) int {
	a, b = trimTrailingSpaces(a), trimTrailingSpaces(b)
	for len(a) > 0 && len(b) > 0 {
		wa, na := ciWeightOrBad(a)
		wb, nb := ciWeightOrBad(b)
		if wa != wb {
			if wa < wb {
				return -1
			}
			return 1
		}
		a, b = a[na:], b[nb:]
	}
	switch {
	case len(a) > 0:
		return 1
	case len(b) > 0:
		return -1
	}
	return 0
}

// ciWeightOrBad is ciWeightAt reading an invalid byte as U+FFFD.
func ciWeightOrBad(s []byte) (uint16, int) {
	if w, n := ciWeightAt(s); n > 0 {
		return w, n
	}
	return 0xFFFD, 1
}

// compareBin compares two binary-collated strings, trailing spaces
// ignored.
func compareBin(a, b []byte) int { return bytes.Compare(trimTrailingSpaces(a), trimTrailingSpaces(b)) }
