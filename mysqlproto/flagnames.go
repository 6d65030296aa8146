package mysqlproto

import (
	"strconv"
	"strings"
)

// flagNames lists the bits set in v separated by '|', names[i] naming bit
// i; the set bits past names follow as one hex number (0x…). No bit set
// is "".
func flagNames(v uint64, names []string) string {
	var sb strings.Builder
	for i, name := range names {
		if v&(1<<uint(i)) != 0 {
			if sb.Len() > 0 {
				sb.WriteByte('|')
			}
			sb.WriteString(name)
		}
	}
	if rest := v &^ (1<<uint(len(names)) - 1); rest != 0 {
		if sb.Len() > 0 {
			sb.WriteByte('|')
		}
		sb.WriteString("0x" + strconv.FormatUint(rest, 16))
	}
	return sb.String()
}
