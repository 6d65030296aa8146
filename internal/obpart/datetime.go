package obpart

// Dates and times as OceanBase holds them: a DATE is its day number
// counted from 1970-01-01 (an int32), a DATETIME the microseconds since
// 1970-01-01 00:00:00 of its wall-clock value, a TIMESTAMP the
// microseconds since the epoch in UTC (ObTimeConverter, obproxy
// src/lib/timezone/ob_time_convert.cpp, ob_time_to_date and
// ob_time_to_datetime).

const (
	usecPerDay = 86400 * 1000000
	// daysZeroToEpoch is the day number of 1970-01-01 counted from year 0,
	// as TO_DAYS counts (DAYS_FROM_ZERO_TO_BASE).
	daysZeroToEpoch = 719528
)

var daysBeforeMonth = [2][13]int32{
	{0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365},
	{0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335, 366},
}

func isLeap(y int32) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func leapYears(y int32) int32 { return y/4 - y/100 + y/400 }

// DayNumber returns the day number of a valid date y-m-d (year 1..9999).
func DayNumber(y, m, d int32) int32 {
	leap := 0
	if isLeap(y) {
		leap = 1
	}
	yday := daysBeforeMonth[leap][m-1] + d
	return (y-1970)*365 + leapYears(y-1) - leapYears(1969) + yday - 1
}

// YearOf returns the year of day number days.
func YearOf(days int32) int32 {
	y := 1970 + days/365
	for DayNumber(y, 1, 1) > days {
		y--
	}
	for DayNumber(y+1, 1, 1) <= days {
		y++
	}
	return y
}

// ToDays is MySQL's TO_DAYS of day number days.
func ToDays(days int32) int64 { return int64(days) + daysZeroToEpoch }

// ParseDate reads a DATE literal, 'YYYY-MM-DD' (months and days of one or
// two digits), and returns its day number. Zero dates and dates that do
// not exist report false.
func ParseDate(text []byte) (int32, bool) {
	days, rest, ok := parseDatePart(trimBlanks(text))
	return days, ok && len(rest) == 0
}

// ParseDatetime reads a DATETIME literal, 'YYYY-MM-DD[ hh:mm:ss[.ffffff]]'
// ('T' may separate the parts), for a column with fsp fraction digits,
// and returns its microseconds since 1970-01-01 00:00:00. A fraction with
// more digits than fsp that are not all zeros reports false: the server
// would round it.
func ParseDatetime(text []byte, fsp int) (int64, bool) {
	days, rest, ok := parseDatePart(trimBlanks(text))
	if !ok {
		return 0, false
	}
	v := int64(days) * usecPerDay
	if len(rest) == 0 {
		return v, true
	}
	if rest[0] != ' ' && rest[0] != 'T' {
		return 0, false
	}
	rest = rest[1:]
	h, rest, ok1 := digitsUpTo(rest, 2)
	if !ok1 || len(rest) == 0 || rest[0] != ':' {
		return 0, false
	}
	mi, rest, ok2 := digitsUpTo(rest[1:], 2)
	if !ok2 || len(rest) == 0 || rest[0] != ':' {
		return 0, false
	}
	sec, rest, ok3 := digitsUpTo(rest[1:], 2)
	if !ok3 || h > 23 || mi > 59 || sec > 59 {
		return 0, false
	}
	v += ((int64(h)*60+int64(mi))*60 + int64(sec)) * 1000000
	if len(rest) == 0 {
		return v, true
	}
	if rest[0] != '.' || len(rest) == 1 {
		return 0, false
	}
	var frac int64
	for i, c := range rest[1:] {
		if c < '0' || c > '9' {
			return 0, false
		}
		if i >= fsp || i >= 6 {
			if c != '0' {
				return 0, false
			}
			continue
		}
		frac = frac*10 + int64(c-'0')
	}
	for i := min(len(rest)-1, fsp, 6); i < 6; i++ {
		frac *= 10
	}
	return v + frac, true
}

// parseDatePart reads YYYY-M[M]-D[D] at the start of s.
func parseDatePart(s []byte) (int32, []byte, bool) {
	if len(s) < 5 || s[4] != '-' {
		return 0, nil, false // four-digit years only: MySQL reads '24-1-1' as 2024
	}
	y, s, ok := digitsUpTo(s, 4)
	if !ok || len(s) == 0 || s[0] != '-' {
		return 0, nil, false
	}
	m, s, ok := digitsUpTo(s[1:], 2)
	if !ok || len(s) == 0 || s[0] != '-' {
		return 0, nil, false
	}
	d, s, ok := digitsUpTo(s[1:], 2)
	if !ok || y < 1 || m < 1 || m > 12 || d < 1 {
		return 0, nil, false
	}
	leap := 0
	if isLeap(y) {
		leap = 1
	}
	if d > daysBeforeMonth[leap][m]-daysBeforeMonth[leap][m-1] {
		return 0, nil, false
	}
	return DayNumber(y, m, d), s, true
}

// digitsUpTo reads 1 to n decimal digits at the start of s.
func digitsUpTo(s []byte, n int) (int32, []byte, bool) {
	var v int32
	i := 0
	for ; i < len(s) && i < n && s[i] >= '0' && s[i] <= '9'; i++ {
		v = v*10 + int32(s[i]-'0')
	}
	return v, s[i:], i > 0
}
