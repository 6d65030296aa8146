// Command chaos-suite breaks servers under load and reports, per scenario,
// what the clients saw and whether obgate behaved as ODP should (PASS,
// FAIL or UNKNOWN per expectation). It runs every scenario even when some
// fail, and exits non-zero when any expectation failed.
//
//	make build && go run ./bench/cmd/chaos-suite            # everything, about 6 minutes
//	go run ./bench/cmd/chaos-suite -quick                     # the short form, about a minute
//	go run ./bench/cmd/chaos-suite -scenarios stop,hang -duration 2
//
// See bench/README.md for the scenarios and what is measured.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"obgate/bench/chaos"
	"obgate/bench/internal/cli"
	"obgate/bench/suite"
)

func main() {
	code, err := run(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos-suite:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

func run(args []string) (int, error) {
	fs := flag.NewFlagSet("chaos-suite", flag.ContinueOnError)
	var all []string
	for _, sc := range chaos.Scenarios() {
		all = append(all, sc.Name)
	}
	var (
		scenarios = fs.String("scenarios", "", "comma-separated scenarios (default all; with -quick "+strings.Join(chaos.QuickScenarios, ",")+"): "+strings.Join(all, ", "))
		quick     = fs.Bool("quick", false, "the short form: short phases, a smaller table and load, the quick scenarios")
		scale     = fs.Float64("duration", 1, "multiply every phase of every scenario by this")
		workers   = fs.Int("workers", 16, "load clients (8 with -quick)")
		writers   = fs.Int("writers", 0, "how many of the clients write (0: a quarter)")
		rate      = fs.Int("rate", 0, "statements per second of the whole load, 0 for no bound (default 2000, 500 with -quick)")
		tableSize = fs.Int("table-size", 0, "rows of sbtest1 (default 5000, 1000 with -quick)")
		out       = fs.String("out", "", "directory for the JSON results and logs (default bench/results/chaos-<date>)")
		plots     = fs.String("plots", "bench/plots", "directory for the PNG plots ('' for none)")
		obgateBin = fs.String("obgate", "bin/obgate", "obgate binary")
		obsimBin  = fs.String("obsim", "bin/obsim", "obsim binary")
		haproxy   = fs.String("haproxy", "haproxy", "haproxy binary")
		root      = fs.String("root", "", "repository root (default: found from the working directory)")
		extra     cli.List
	)
	fs.Var(&extra, "obgate-opt", "an extra obgate -o option (key=value) for every obgate run; repeatable")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, nil
		}
		return 2, err
	}
	rootDir, err := suite.FindRoot(*root)
	if err != nil {
		return 2, err
	}
	abs := func(p string) string { return suite.UnderRoot(rootDir, p) }
	set := chaos.Settings{
		Obgate: abs(*obgateBin), OBSim: abs(*obsimBin),
		Workers: *workers, Writers: *writers, Rate: *rate, TableSize: *tableSize,
		Scale: *scale, Quick: *quick, PlotDir: abs(*plots), ExtraOpts: extra, Progress: os.Stderr,
		Root: rootDir,
	}
	if set.HAProxy, err = suite.LookPath(*haproxy, "/usr/sbin", "/usr/local/sbin"); err != nil {
		return 2, err
	}
	for _, bin := range []string{set.Obgate, set.OBSim} {
		if _, err := os.Stat(bin); err != nil {
			return 2, fmt.Errorf("%s: %w (run `make build` first)", bin, err)
		}
	}
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	if !explicit["rate"] {
		set.Rate = 2000
		if *quick {
			set.Rate = 500
		}
	}
	if set.TableSize == 0 {
		set.TableSize = 5000
		if *quick {
			set.TableSize = 1000
		}
	}
	if *quick && !explicit["workers"] {
		set.Workers = 8
	}
	names := all
	if *quick {
		names = chaos.QuickScenarios
	}
	if *scenarios != "" {
		names = strings.Split(*scenarios, ",")
	}
	list, err := chaos.Lookup(names)
	if err != nil {
		return 2, err
	}
	outDir := abs(*out)
	if outDir == "" {
		outDir = filepath.Join(rootDir, "bench", "results", "chaos-"+time.Now().Format("20060102-150405"))
	}
	set.OutDir = outDir
	set.WorkDir = filepath.Join(outDir, "logs")
	if err := os.MkdirAll(set.WorkDir, 0o755); err != nil {
		return 2, err
	}

	ctx, stop := cli.SignalContext()
	defer stop()

	reportFile, err := os.Create(filepath.Join(outDir, "report.txt"))
	if err != nil {
		return 2, err
	}
	defer reportFile.Close()
	report := io.MultiWriter(os.Stdout, reportFile) // the report is kept with the results
	build := obgateBuild(ctx, set.Obgate)
	fmt.Fprintf(report, "chaos suite: %d scenarios, %d workers (%d writers), rate %s, table %d rows, phases ×%g%s\n",
		len(list), set.Workers, set.LoadWriters(), rateText(set.Rate), set.TableSize, set.Scale, quickText(*quick))
	fmt.Fprintf(report, "obgate %s (%s); results in %s\n", set.Obgate, build, outDir)
	s := chaos.NewSuite(set)
	defer s.Close()
	var results []*chaos.Result
	for _, sc := range list {
		if ctx.Err() != nil {
			break
		}
		rs := s.Run(ctx, sc)
		for _, r := range rs {
			if r.Target == "obgate" {
				r.Build = build
			}
			r.WriteText(report)
		}
		if len(rs) == 2 {
			chaos.WriteSideBySide(report, rs[0], rs[1])
		}
		results = append(results, rs...)
	}
	chaos.WriteSummary(report, results)
	if err := suite.WriteJSON(filepath.Join(outDir, "summary.json"), results); err != nil {
		fmt.Fprintln(os.Stderr, "chaos-suite: summary.json:", err)
	}
	failed := 0
	for _, r := range results {
		if r.Failed() {
			failed++
		}
	}
	if ctx.Err() != nil {
		return 130, nil
	}
	if failed > 0 {
		fmt.Fprintf(report, "\n%d of %d runs had a failed expectation or could not run\n", failed, len(results))
		return 1, nil
	}
	fmt.Fprintf(report, "\nevery expectation held (UNKNOWN ones aside)\n")
	return 0, nil
}

// obgateBuild is what the binary says of itself (its --version line).
func obgateBuild(ctx context.Context, bin string) string {
	b, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "unknown build: " + err.Error()
	}
	return strings.TrimSpace(string(b))
}

func rateText(r int) string {
	if r <= 0 {
		return "unbounded"
	}
	return fmt.Sprintf("%d stmt/s", r)
}

func quickText(q bool) string {
	if q {
		return " (quick)"
	}
	return ""
}
