package suite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSysbenchStats(t *testing.T) {
	dir := t.TempDir()
	good := readTestdata(t, "oltp_read_write-histogram.txt")
	raw := filepath.Join(dir, "good.txt")
	st, err := sysbenchStats(good, nil, raw)
	if err != nil || st.QPS <= 0 {
		t.Fatalf("good output: %+v, %v", st, err)
	}
	if b, err := os.ReadFile(raw); err != nil || string(b) != string(good) {
		t.Errorf("raw output not kept: %v", err)
	}
	exit := errors.New("exit status 1")
	for _, c := range []struct {
		out    []byte
		runErr error
		want   string
	}{
		{good, exit, "sysbench: exit status 1"},
		{[]byte("FATAL: no such table\n"), exit, "sysbench: exit status 1: "},
		{[]byte("nothing\n"), nil, ""},
	} {
		_, err := sysbenchStats(c.out, c.runErr, filepath.Join(dir, "bad.txt"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q, %v: %v, want an error containing %q", c.out, c.runErr, err, c.want)
		}
	}
}

func TestSysbenchArgv(t *testing.T) {
	tg := target{TargetInfo: TargetInfo{Name: "obgate", Port: 3307, User: "u"}}
	base := sysbenchArgv("sysbench", "oltp_point_select", []string{"--tables=1"}, tg, 8)
	want := "sysbench oltp_point_select --tables=1 --mysql-user=u --mysql-port=3307 --threads=8 --events=0 --report-interval=0"
	if strings.Join(base, " ") != want {
		t.Errorf("base: %q", base)
	}
	run := measuredArgv(base, 20)
	if strings.Join(run, " ") != want+" --time=20 --percentile=95 --histogram=on run" || len(base) != 8 {
		t.Errorf("measured: %q (base now %q)", run, base)
	}
	if argv, err := warmUp(context.Background(), base, 0); argv != nil || err != nil {
		t.Errorf("no warm-up: %q, %v", argv, err)
	}
}

func TestPerQuery(t *testing.T) {
	if got := perQuery(2*time.Millisecond, 1000); got != 2 {
		t.Errorf("perQuery = %v, want 2 µs", got)
	}
	if perQuery(time.Second, 0).Valid() {
		t.Error("perQuery of no queries is known")
	}
	if _, ok := cpuTime(nil); ok {
		t.Error("cpuTime of a process that did not start")
	}
	if err := exitedError(nil, "before the run"); err != nil {
		t.Error(err)
	}
}
