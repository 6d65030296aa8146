package reactor_test

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"obgate/internal/testkit"
)

// sysbenchStat reads "name: N" (the first number after the name) from
// sysbench's report.
func sysbenchStat(out, name string) (int64, bool) {
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(name) + `:\s+(\d+)`).FindStringSubmatch(out)
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	return n, err == nil
}

// TestE2ESysbench runs sysbench oltp_read_write through obgate for a few
// seconds (1 table of 1000 rows, 4 threads, server-side prepared
// statements), twice:
//
//   - the standard mix. Four threads on 1000 rows make MariaDB itself
//     report deadlocks (ERR 1213) now and then, through obgate or not, so
//     this run lets sysbench retry 1213 and nothing else: any other error,
//     obgate's included, aborts the run and fails the test;
//   - a mix with one locking statement per transaction (no index updates,
//     no delete+insert), which cannot deadlock: zero errors.
//
// Both must finish with zero reconnects, and obgate must have counted at
// least the statements sysbench sent.
func TestE2ESysbench(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sysbench for several seconds; skipped with -short")
	}
	if _, err := exec.LookPath("sysbench"); err != nil {
		t.Fatal("sysbench is not installed (apt-get install sysbench)")
	}
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)
		p := startProxy(t, mode)
		db := "sbtest_" + mode
		if err := maria(t).Exec(context.Background(), "DROP DATABASE IF EXISTS "+db, "CREATE DATABASE "+db); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = maria(t).Exec(context.Background(), "DROP DATABASE IF EXISTS "+db) })
		host, port, _ := strings.Cut(p.Addr, ":")
		sysbench := func(cmd string, extra ...string) string {
			args := append([]string{"oltp_read_write", "--db-driver=mysql",
				"--mysql-host=" + host, "--mysql-port=" + port, "--mysql-user=root", "--mysql-password=",
				"--mysql-db=" + db, "--tables=1", "--table-size=1000", "--db-ps-mode=auto"}, extra...)
			args = append(args, cmd)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			out, err := exec.CommandContext(ctx, "sysbench", args...).CombinedOutput()
			if err != nil {
				t.Fatalf("sysbench %s: %v\n%s", cmd, err, out)
			}
			return string(out)
		}
		sysbench("prepare")
		run := func(name string, wantNoErrors bool, extra ...string) {
			counted := func() float64 {
				n, _ := testkit.MetricSum(p.MetricsText(), "odp_sql_request_total")
				return n
			}
			before := counted()
			out := sysbench("run", append([]string{"--threads=4", "--time=3", "--report-interval=0"}, extra...)...)
			txns, ok1 := sysbenchStat(out, "transactions")
			queries, ok2 := sysbenchStat(out, "queries")
			errs, ok3 := sysbenchStat(out, "ignored errors")
			reconnects, ok4 := sysbenchStat(out, "reconnects")
			if !ok1 || !ok2 || !ok3 || !ok4 {
				t.Fatalf("%s: cannot read sysbench's report:\n%s", name, out)
			}
			t.Logf("%s through obgate (%s): %d transactions, %d queries, %d ignored errors, %d reconnects",
				name, mode, txns, queries, errs, reconnects)
			if txns == 0 || reconnects != 0 || (wantNoErrors && errs != 0) {
				t.Errorf("%s: %d transactions, %d ignored errors, %d reconnects\n%s", name, txns, errs, reconnects, out)
			}
			// obgate counts a statement just after its answer went out.
			testkit.EventuallyDescribe(t, hangLimit, func() bool { return int64(counted()-before) >= queries }, func() string {
				return fmt.Sprintf("%s: obgate counted %v statements during the run, sysbench sent %d", name, counted()-before, queries)
			})
		}
		run("standard mix", false, "--mysql-ignore-errors=1213")
		run("deadlock-free mix", true, "--mysql-ignore-errors=1213", "--index_updates=0", "--delete_inserts=0")
		sysbench("cleanup")
	})
}
