package obpart

import (
	"strconv"
	"strings"
	"time"
)

// ParseTimeZone reads a time_zone value as MySQL and OceanBase take it:
// an offset from UTC ('+08:00', '+8:00', '-05:30') or a zone name
// ('Asia/Shanghai', from the system's zone database). SYSTEM, the
// server's own zone, cannot be known from here: it gives nil, as does
// anything else it cannot read.
func ParseTimeZone(v string) *time.Location {
	v = strings.TrimSpace(v)
	if len(v) > 1 && (v[0] == '+' || v[0] == '-') {
		h, m, ok := strings.Cut(v[1:], ":")
		hh, err1 := strconv.Atoi(h)
		mm, err2 := strconv.Atoi(m)
		if !ok || err1 != nil || err2 != nil || len(m) != 2 || hh > 14 || mm > 59 {
			return nil
		}
		off := (hh*60 + mm) * 60
		if v[0] == '-' {
			off = -off
		}
		return time.FixedZone(v, off)
	}
	if v == "" || strings.EqualFold(v, "SYSTEM") || strings.ContainsAny(v, " .") {
		return nil
	}
	if strings.EqualFold(v, "UTC") {
		return time.UTC
	}
	loc, err := time.LoadLocation(v)
	if err != nil {
		return nil
	}
	return loc
}
