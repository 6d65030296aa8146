package suite

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat.
// sysconf(_SC_CLK_TCK) is 100 on every Linux architecture Go supports (the
// kernel reports in USER_HZ whatever HZ it runs at), and reading it would
// need cgo.
const clockTicks = 100

// CPUTime returns the CPU time (user + system, all threads) that process
// pid has used so far, read from /proc/<pid>/stat.
func CPUTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return parseProcStat(string(b))
}

// parseProcStat reads utime and stime (fields 14 and 15) from the content of
// /proc/<pid>/stat. The command name (field 2) is in parentheses and may hold
// spaces or parentheses, so fields are counted from the last ')'.
func parseProcStat(s string) (time.Duration, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("proc stat: no ')' in %q", s)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state), so field n is f[n-3].
	if len(f) < 13 {
		return 0, fmt.Errorf("proc stat: only %d fields after the name", len(f))
	}
	utime, err := strconv.ParseUint(f[14-3], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("proc stat utime: %w", err)
	}
	stime, err := strconv.ParseUint(f[15-3], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("proc stat stime: %w", err)
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}
