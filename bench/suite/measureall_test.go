package suite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestMeasureAllOrder(t *testing.T) {
	cfg := RunConfig{Workloads: []string{"w1", "w2"}, Threads: []int{1, 8}, Rounds: 2}
	targets := []target{{TargetInfo: TargetInfo{Name: "a"}}, {TargetInfo: TargetInfo{Name: "b"}}, {TargetInfo: TargetInfo{Name: "c"}}}
	var got []string
	err := measureAll(context.Background(), cfg, targets,
		func(t target, w string, th, round int) string {
			return fmt.Sprintf("%s/%d/%d/%s", w, th, round, t.Name)
		},
		func(r string, n, total int) error {
			if n != len(got)+1 || total != 24 {
				t.Errorf("%s: n %d, total %d", r, n, total)
			}
			got = append(got, r)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	// The targets' order rotates by one from round to round, across cells.
	want := "w1/1/1/a w1/1/1/b w1/1/1/c w1/1/2/b w1/1/2/c w1/1/2/a " +
		"w1/8/1/c w1/8/1/a w1/8/1/b w1/8/2/a w1/8/2/b w1/8/2/c " +
		"w2/1/1/b w2/1/1/c w2/1/1/a w2/1/2/c w2/1/2/a w2/1/2/b " +
		"w2/8/1/a w2/8/1/b w2/8/1/c w2/8/2/b w2/8/2/c w2/8/2/a"
	if strings.Join(got, " ") != want {
		t.Errorf("order:\n%s\nwant:\n%s", strings.Join(got, " "), want)
	}
}

func TestMeasureAllStops(t *testing.T) {
	cfg := RunConfig{Workloads: []string{"w"}, Threads: []int{1}, Rounds: 3}
	targets := []target{{TargetInfo: TargetInfo{Name: "a"}}, {TargetInfo: TargetInfo{Name: "b"}}}

	// A cancellation during a run: that run is not recorded.
	ctx, cancel := context.WithCancelCause(context.Background())
	stopped := errors.New("stopped")
	recorded := 0
	err := measureAll(ctx, cfg, targets,
		func(target, string, int, int) int {
			if recorded == 2 {
				cancel(stopped)
			}
			return recorded
		},
		func(int, int, int) error { recorded++; return nil })
	if !errors.Is(err, stopped) || recorded != 2 {
		t.Errorf("cancelled: %v after %d runs", err, recorded)
	}

	// The first error of record ends it.
	broken := errors.New("disk full")
	calls := 0
	err = measureAll(context.Background(), cfg, targets,
		func(target, string, int, int) int { return 0 },
		func(int, int, int) error { calls++; return broken })
	if !errors.Is(err, broken) || calls != 1 {
		t.Errorf("record error: %v after %d calls", err, calls)
	}
}

func TestRunKeyFiles(t *testing.T) {
	k := Measurement{Workload: "oltp_read_write", Threads: 8, Target: "obgate-net", Round: 2}.key()
	if k.jsonFile() != "oltp_read_write-t008-obgate-net-r2.json" || k.rawFile() != "raw/oltp_read_write-t008-obgate-net-r2.txt" {
		t.Errorf("files %q, %q", k.jsonFile(), k.rawFile())
	}
	if (RoutingRun{Workload: "w", Threads: 16, Target: "haproxy-rr", Round: 1}).key().jsonFile() != "w-t016-haproxy-rr-r1.json" {
		t.Error("routing run file")
	}
	runs := []RoutingRun{{Error: "x"}, {}, {Error: "y"}}
	if n := countFailures(runs); n != 2 {
		t.Errorf("countFailures = %d", n)
	}
}
