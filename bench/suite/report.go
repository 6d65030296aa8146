package suite

import (
	"fmt"
	"path"
	"strconv"
	"strings"
)

// Markers delimit the suite's section of BENCHMARKS.md; everything outside
// them is left alone.
const (
	BeginMarker = "<!-- sysbench:begin -->"
	EndMarker   = "<!-- sysbench:end -->"
)

// Plot names one chart of the report.
type Plot struct {
	Workload string
	Kind     string // "qps" or "cpu"
	File     string // base name, e.g. "qps-oltp_read_only.png"
}

// ReportLinks says where the report points to, as slash-separated paths
// relative to the report file.
type ReportLinks struct {
	PlotsDir   string // e.g. "bench/plots"
	ResultsDir string // e.g. "bench/results/20260101-120000"
	Readme     string // e.g. "bench/README.md"
}

// RenderReport returns the BENCHMARKS.md section for s, markers included.
func RenderReport(s *Summary, plots []Plot, links ReportLinks) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	e, st := s.Environment, s.Settings

	p("%s\n", BeginMarker)
	p("## sysbench: direct MariaDB, HAProxy and obgate\n\n")
	if s.TargetOfKind(KindOBSim) != nil {
		p("OceanBase mode: obgate in front of a one-node simulated OceanBase cluster (`tools/obsim`, its data in the same MariaDB), with obsim directly as its reference")
		if s.haproxyOf(ModeOceanBase) != nil {
			p(", and HAProxy in TCP mode in front of the same node as the proxy reference")
		}
		p(".\n\n")
	}
	reportHeader(p, "sysbench-suite", links, st.Quick, s.CommandLine, e)
	if t := s.TargetOfKind(KindObgate); t != nil {
		p("| obgate | commit %s; %s |\n", cellText(orDash(e.ObgateCommit)), cellText(orDash(e.ObgateVersion)))
	}
	p("| Go | %s |\n", e.GoVersion)
	p("| data | %d tables × %d rows |\n", st.Tables, st.TableSize)
	p("| runs | %d s measured after %d s warm-up (a separate sysbench run), %d round(s) per cell; targets interleaved within each (workload, threads) cell |\n",
		st.TimeSeconds, st.WarmupSeconds, st.Rounds)
	p("| sysbench options | `%s` |\n", strings.Join(st.SysbenchArgs, " "))
	p("| MariaDB options | `%s` |\n", strings.Join(st.MariaDBArgs, " "))
	if s.TargetOfKind(KindHAProxy) != nil {
		p("| HAProxy settings | mode tcp, nbthread %d, maxconn %d, timeouts connect 5s / client 1h / server 1h, no logging |\n", st.HAProxy.Threads, st.HAProxy.MaxConn)
	}
	for _, t := range s.Targets {
		if len(t.Command) > 0 {
			p("| %s command | `%s` |\n", t.Name, cellText(strings.Join(t.Command, " ")))
		}
	}
	if links.ResultsDir != "" {
		p("| raw results | [%s](%s) |\n", links.ResultsDir, links.ResultsDir)
	}
	p("\n")
	p("QPS: queries per second. p95/p99: latency percentiles of one sysbench event (a transaction) in ms, read from sysbench's histogram. ")
	p("CPU µs/query: CPU time (user + system) the proxy process used during the measured run divided by the queries executed. ")
	if st.SyscallCounter != "" {
		p("syscalls/q: system calls of the proxy process (all threads) during the measured run divided by the queries executed, counted by the kernel (`perf stat -e raw_syscalls:sys_enter -p`). ")
	}
	p("Ratios compare QPS. On a small shared machine sysbench, MariaDB and the proxy compete for the same cores: compare targets within one run, not numbers across runs.\n\n")

	for _, w := range st.Workloads {
		p("### %s\n\n", w)
		writeMainTable(&b, s, w)
		p("\n")
		var imgs []string
		for _, pl := range plots {
			if pl.Workload == w {
				alt := "QPS by threads"
				if pl.Kind == "cpu" {
					alt = "proxy CPU µs per query"
				}
				imgs = append(imgs, fmt.Sprintf("![%s: %s](%s)", w, alt, path.Join(links.PlotsDir, pl.File)))
			}
		}
		if len(imgs) > 0 {
			p("%s\n\n", strings.Join(imgs, " "))
		}
		p("<details><summary>%s: TPS, MariaDB and sysbench CPU per query, errors</summary>\n\n", w)
		writeContextTable(&b, s, w)
		p("\n</details>\n\n")
	}
	writeFailedRuns(p, s.Failures, s.Cells)
	p("%s\n", EndMarker)
	return b.String()
}

func writeMainTable(b *strings.Builder, s *Summary, workload string) {
	direct := s.TargetOfKind(KindDirect)
	haproxy, haproxyOB := s.haproxyOf(""), s.haproxyOf(ModeOceanBase)
	obsim := s.TargetOfKind(KindOBSim)
	syscalls := s.Settings.SyscallCounter != ""
	head := []string{"threads"}
	for _, t := range s.Targets {
		head = append(head, t.Name+" QPS", t.Name+" p95 ms", t.Name+" p99 ms")
		if t.IsProxy() {
			head = append(head, t.Name+" CPU µs/q")
			if syscalls {
				head = append(head, t.Name+" syscalls/q")
			}
		}
	}
	// obgate in mysql mode compares with HAProxy and MariaDB, in
	// OceanBase mode with obsim: each proxy with the server behind it.
	type ratio struct{ num, den string }
	var ratios []ratio
	for _, t := range s.Targets {
		switch {
		case t.Kind == KindObgate && t.Mode == "" && haproxy != nil:
			ratios = append(ratios, ratio{t.Name, haproxy.Name})
		case t.Kind == KindObgate && t.Mode == ModeOceanBase && haproxyOB != nil:
			ratios = append(ratios, ratio{t.Name, haproxyOB.Name})
		}
	}
	for _, t := range s.Targets {
		switch {
		case t.IsProxy() && t.Mode == "" && direct != nil:
			ratios = append(ratios, ratio{t.Name, direct.Name})
		case t.IsProxy() && t.Mode == ModeOceanBase && obsim != nil:
			ratios = append(ratios, ratio{t.Name, obsim.Name})
		}
	}
	for _, r := range ratios {
		head = append(head, r.num+"/"+r.den+" QPS")
	}
	writeRow(b, head)
	aligns := make([]string, len(head))
	for i := range aligns {
		aligns[i] = "---:"
	}
	writeRow(b, aligns)

	for _, th := range s.Settings.Threads {
		row := []string{strconv.Itoa(th)}
		for _, t := range s.Targets {
			c := s.Cell(workload, th, t.Name)
			switch {
			case c == nil:
				row = append(row, "–", "–", "–")
			case c.Failed == c.Rounds:
				row = append(row, "failed", "–", "–")
			default:
				row = append(row, fmtNum(c.QPS, 0), fmtNum(c.P95Ms, 3), fmtNum(c.P99Ms, 3))
			}
			if t.IsProxy() {
				switch {
				case c == nil && syscalls:
					row = append(row, "–", "–")
				case c == nil:
					row = append(row, "–")
				case syscalls:
					row = append(row, fmtNum(c.ProxyCPUUsPerQuery, 1), fmtNum(c.ProxySyscallsPerQuery, 2))
				default:
					row = append(row, fmtNum(c.ProxyCPUUsPerQuery, 1))
				}
			}
		}
		for _, r := range ratios {
			n, d := s.Cell(workload, th, r.num), s.Cell(workload, th, r.den)
			if n == nil || d == nil || !n.QPS.Valid() || !d.QPS.Valid() || d.QPS == 0 {
				row = append(row, "–")
				continue
			}
			row = append(row, fmtNum(n.QPS/d.QPS, 2))
		}
		writeRow(b, row)
	}
}

func writeContextTable(b *strings.Builder, s *Summary, workload string) {
	writeRow(b, []string{"threads", "target", "TPS", "MariaDB CPU µs/q", "sysbench CPU µs/q", "proxy futex/q", "proxy context switches/q", "ignored errors", "reconnects", "rounds ok"})
	writeRow(b, []string{"---:", "---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"})
	for _, th := range s.Settings.Threads {
		for _, t := range s.Targets {
			c := s.Cell(workload, th, t.Name)
			if c == nil {
				continue
			}
			writeRow(b, []string{
				strconv.Itoa(th), t.Name, fmtNum(c.TPS, 0),
				fmtNum(c.MariaDBCPUUsPerQuery, 1), fmtNum(c.ClientCPUUsPerQuery, 1),
				fmtNum(c.ProxyFutexPerQuery, 2), fmtNum(c.ProxyContextSwitchesPerQuery, 2),
				strconv.FormatUint(c.IgnoredErrors, 10), strconv.FormatUint(c.Reconnects, 10),
				fmt.Sprintf("%d/%d", c.Rounds-c.Failed, c.Rounds),
			})
		}
	}
}

func writeRow(b *strings.Builder, cells []string) {
	b.WriteString("|")
	for _, c := range cells {
		b.WriteString(" ")
		b.WriteString(c)
		b.WriteString(" |")
	}
	b.WriteString("\n")
}

// fmtNum formats n with prec decimals, or "–" when unknown.
func fmtNum(n Num, prec int) string {
	if !n.Valid() {
		return "–"
	}
	return strconv.FormatFloat(float64(n), 'f', prec, 64)
}

// cellText makes s safe inside a Markdown table cell.
func cellText(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "G"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "M"
	default:
		return strconv.FormatInt(n, 10)
	}
}

// UpdateSection replaces the part of doc between the markers (inclusive)
// with section, or appends section when doc has no markers. An empty doc
// gets a title first.
func UpdateSection(doc, section string) string {
	section = strings.TrimRight(section, "\n") + "\n"
	i := strings.Index(doc, BeginMarker)
	if i >= 0 {
		if j := strings.Index(doc[i:], EndMarker); j >= 0 {
			rest := doc[i+j+len(EndMarker):]
			rest = strings.TrimPrefix(rest, "\n")
			return doc[:i] + section + rest
		}
	}
	if strings.TrimSpace(doc) == "" {
		return "# Benchmarks\n\n" + section
	}
	return strings.TrimRight(doc, "\n") + "\n\n" + section
}

// writeFailedRuns writes the report's list of the cells with failed
// rounds, when failures says there are any.
func writeFailedRuns[C interface{ rounds() CellRounds }](p func(string, ...any), failures int, cells []C) {
	if failures <= 0 {
		return
	}
	p("### Failed runs\n\n")
	for _, cell := range cells {
		if c := cell.rounds(); c.Failed > 0 {
			p("- %s, %d threads, %s: %d of %d round(s) failed: %s\n", c.Workload, c.Threads, c.Target, c.Failed, c.Rounds, cellText(firstLine(c.Error)))
		}
	}
	p("\n")
}

// reportHeader writes what every suite's section starts with: where it
// comes from, a warning for a smoke run, the command line, and the first
// rows of the environment table (date, machine, MariaDB, HAProxy,
// sysbench); the caller adds its own rows.
func reportHeader(p func(string, ...any), tool string, links ReportLinks, quick bool, commandLine string, e Environment) {
	p("Generated by `bench/cmd/%s`", tool)
	if links.Readme != "" {
		p(" (see [bench/README.md](%s))", links.Readme)
	}
	p("; rerun it rather than editing this section.\n\n")
	if quick {
		p("> **Quick smoke run** (`--quick`): tiny data and very short runs. These numbers only show that the pipeline works; do not compare them with anything.\n\n")
	}
	p("```\n%s\n```\n\n", commandLine)
	p("| | |\n|---|---|\n")
	p("| date | %s |\n", e.Date)
	p("| machine | %s, nproc %d, kernel %s |\n", cellText(orDash(e.CPUModel)), e.NProc, cellText(orDash(e.Kernel)))
	p("| MariaDB | %s |\n", cellText(orDash(e.MariaDBVersion)))
	if e.HAProxyVersion != "" {
		p("| HAProxy | %s |\n", cellText(e.HAProxyVersion))
	}
	p("| sysbench | %s |\n", cellText(orDash(e.Sysbench)))
}
