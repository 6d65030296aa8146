package suite

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Markers of the routing suite's section of BENCHMARKS.md.
const (
	RoutingBeginMarker = "<!-- routing:begin -->"
	RoutingEndMarker   = "<!-- routing:end -->"
)

// RenderRoutingReport returns the BENCHMARKS.md section for s, markers
// included.
func RenderRoutingReport(s *RoutingSummary, plots []Plot, links ReportLinks) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	e, st := s.Environment, s.Settings

	p("%s\n", RoutingBeginMarker)
	p("## Partition routing: obgate against round robin on a three-zone cluster\n\n")
	p("What routing each statement to its partition's leader buys when a statement that runs elsewhere costs the cluster one more internal round trip. ")
	p("Every target runs against the same simulated OceanBase cluster (`tools/obsim`, data in one MariaDB): three zones of one node each, and a node that runs a statement whose partitions it does not lead waits the remote-plan cost (%s) before it answers. ", st.RemotePlanCost)
	p("obsim counts where each statement ran, which gives the local-plan ratio.\n\n")
	reportHeader(p, "routing-suite", links, st.Quick, s.CommandLine, e)
	if e.ObgateCommit != "" || e.ObgateVersion != "" {
		p("| obgate | commit %s; %s |\n", cellText(orDash(e.ObgateCommit)), cellText(orDash(e.ObgateVersion)))
	}
	p("| Go | %s |\n", e.GoVersion)
	tables := "`sbtest.sbtest1`"
	if st.Tables > 1 {
		tables = fmt.Sprintf("`sbtest.sbtest1` … `sbtest%d`", st.Tables)
	}
	p("| cluster | `%s`: zone1, zone2 (region hangzhou), zone3 (shanghai), one node each; tenant `%s` in every zone; %s HASH(id) in %d partitions, leaders rotating over the nodes (each table starts one node further than the one before) |\n",
		st.Cluster, RoutingTenant, tables, st.Partitions)
	p("| remote-plan cost | %s per statement a node runs without leading all its partitions |\n", st.RemotePlanCost)
	p("| data | %s × %d rows |\n", plural(st.Tables, "table"), st.TableSize)
	warm := "no warm-up"
	if st.WarmupSeconds > 0 {
		warm = fmt.Sprintf("%d s warm-up (a separate sysbench run)", st.WarmupSeconds)
	}
	p("| runs | %d s measured after %s, %s per (workload, threads, target), medians; targets interleaved, the order rotating from round to round |\n",
		st.TimeSeconds, warm, plural(st.Rounds, "round"))
	p("| sysbench options | `%s` |\n", strings.Join(st.SysbenchArgs, " "))
	p("| obsim command | `%s` |\n", cellText(strings.Join(s.OBSim.Command, " ")))
	for _, t := range s.Targets {
		switch {
		case len(t.Command) > 0:
			p("| %s | `%s`, sysbench as `%s` |\n", t.Name, cellText(strings.Join(t.Command, " ")), t.user())
		case t.Kind == KindOBSim && len(s.OBSim.Nodes) > 0:
			p("| %s | sysbench straight to node %s (port %d) as `%s` |\n", t.Name, s.OBSim.Nodes[0].Name, t.Port, t.user())
		}
	}
	if s.Settings.HAProxyConfig != "" {
		p("| HAProxy settings | mode tcp, balance roundrobin over the three nodes, nbthread %d, maxconn %d, no logging |\n", st.HAProxy.Threads, st.HAProxy.MaxConn)
	}
	if links.ResultsDir != "" {
		p("| raw results | [%s](%s) |\n", links.ResultsDir, links.ResultsDir)
	}
	p("\n")
	p("QPS: queries per second (BEGIN and COMMIT count). p95/p99: latency of one sysbench event (a transaction) in ms, from sysbench's histogram. ")
	p("local-plan %%: of the statements obsim counted during the measured run, the share that ran on the leader of every partition they touch (statements without a table, such as BEGIN and COMMIT, count as local); ")
	p("obgate's statements are those of proxied sessions, HAProxy's and the direct login's those of direct sessions. ")
	p("errors: errors sysbench ignored and reconnects, summed over the rounds (with `--mysql-ignore-errors=%s`", st.IgnoreErrors)
	if st.IgnoreErrors == "none" {
		p(" any error ends the run, which then counts as failed")
	}
	p("). proxy CPU µs/q: CPU time of the proxy process during the measured run divided by the queries. ")
	p("The last two columns divide by the figure of %s at the same workload and thread count. On a small shared machine sysbench, the proxy, obsim and MariaDB compete for the same cores: compare targets within one run.\n\n", RoutingBaseline)

	head, rows := routingTable(s)
	writeRow(&b, head)
	aligns := make([]string, len(head))
	for i := range aligns {
		aligns[i] = "---:"
	}
	aligns[0], aligns[2] = "---", "---"
	writeRow(&b, aligns)
	for _, r := range rows {
		writeRow(&b, r)
	}
	p("\n")
	var imgs []string
	for _, pl := range plots {
		imgs = append(imgs, fmt.Sprintf("![%s: QPS and p99 by target](%s)", pl.Workload, path.Join(links.PlotsDir, pl.File)))
	}
	if len(imgs) > 0 {
		p("%s\n\n", strings.Join(imgs, " "))
	}

	p("<details><summary>Statements counted, where they ran, obsim and MariaDB CPU per query</summary>\n\n")
	writeRoutingDetails(&b, s)
	p("\n</details>\n\n")

	writeFailedRuns(p, s.Failures, s.Cells)
	p("%s\n", RoutingEndMarker)
	return b.String()
}

// plural writes "1 table", "8 tables".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// routingTable is the main table: one row per (workload, threads, target).
func routingTable(s *RoutingSummary) ([]string, [][]string) {
	head := []string{"workload", "threads", "target", "QPS", "p95 ms", "p99 ms", "local-plan %", "errors", "proxy CPU µs/q"}
	baseline := false
	for _, t := range s.Targets {
		baseline = baseline || t.Name == RoutingBaseline
	}
	if baseline {
		head = append(head, "QPS / "+RoutingBaseline, "p99 / "+RoutingBaseline)
	}
	var rows [][]string
	for _, w := range s.Settings.Workloads {
		for _, th := range s.Settings.Threads {
			base := s.Cell(w, th, RoutingBaseline)
			for _, t := range s.Targets {
				c := s.Cell(w, th, t.Name)
				if c == nil {
					continue
				}
				row := []string{w, strconv.Itoa(th), t.Name}
				if c.Failed == c.Rounds {
					row = append(row, "failed", "–", "–", "–")
				} else {
					row = append(row, fmtNum(c.QPS, 0), fmtNum(c.P95Ms, 3), fmtNum(c.P99Ms, 3), fmtNum(c.LocalRatio*100, 1))
				}
				errs := strconv.FormatUint(c.IgnoredErrors+c.Reconnects, 10)
				if c.Failed > 0 {
					errs += fmt.Sprintf("; %d of %d runs failed", c.Failed, c.Rounds)
				}
				row = append(row, errs, fmtNum(c.ProxyCPUUsPerQuery, 1))
				if baseline {
					row = append(row, ratio(c.QPS, baseOf(base).QPS), ratio(c.P99Ms, baseOf(base).P99Ms))
				}
				rows = append(rows, row)
			}
		}
	}
	return head, rows
}

// baseOf returns c, or a cell of unknown figures when c is nil.
func baseOf(c *RoutingCell) RoutingCell {
	if c == nil || c.Failed == c.Rounds {
		return RoutingCell{QPS: NaN, P95Ms: NaN, P99Ms: NaN}
	}
	return *c
}

// ratio formats n/d with two decimals, "–" when either is unknown or d is 0.
func ratio(n, d Num) string {
	if !n.Valid() || !d.Valid() || d == 0 {
		return "–"
	}
	return fmtNum(n/d, 2)
}

func writeRoutingDetails(b *strings.Builder, s *RoutingSummary) {
	head := []string{"workload", "threads", "target", "sysbench queries", "statements counted", "local", "remote"}
	for _, n := range s.OBSim.Nodes {
		head = append(head, n.Name+" %")
	}
	head = append(head, "obsim CPU µs/q", "MariaDB CPU µs/q", "rounds ok")
	writeRow(b, head)
	aligns := make([]string, len(head))
	for i := range aligns {
		aligns[i] = "---:"
	}
	aligns[0], aligns[2] = "---", "---"
	writeRow(b, aligns)
	for _, w := range s.Settings.Workloads {
		for _, th := range s.Settings.Threads {
			for _, t := range s.Targets {
				c := s.Cell(w, th, t.Name)
				if c == nil {
					continue
				}
				row := []string{w, strconv.Itoa(th), t.Name, strconv.FormatUint(c.Queries, 10),
					strconv.FormatUint(c.Counted.Statements, 10), strconv.FormatUint(c.Counted.Local, 10), strconv.FormatUint(c.Counted.Remote, 10)}
				for _, n := range s.OBSim.Nodes {
					share := NaN
					if c.Counted.Statements > 0 {
						share = Num(float64(c.NodeStatements[n.Name]) * 100 / float64(c.Counted.Statements))
					}
					row = append(row, fmtNum(share, 1))
				}
				row = append(row, fmtNum(c.OBSimCPUUsPerQuery, 1), fmtNum(c.MariaDBCPUUsPerQuery, 1), fmt.Sprintf("%d/%d", c.Rounds-c.Failed, c.Rounds))
				writeRow(b, row)
			}
		}
	}
}

// RoutingTextTable is the main table as aligned plain text, for the
// terminal.
func RoutingTextTable(s *RoutingSummary) string {
	head, rows := routingTable(s)
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
	return b.String()
}

// UpdateRoutingSection puts section (markers included) into doc: in place
// of the routing section when doc has one, else right after the sysbench
// section, else at the end. The rest of doc is left as it is.
func UpdateRoutingSection(doc, section string) string {
	if strings.Contains(doc, RoutingBeginMarker) || !strings.Contains(doc, EndMarker) {
		return UpdateMarkedSection(doc, RoutingBeginMarker, RoutingEndMarker, section)
	}
	section = strings.TrimRight(section, "\n") + "\n"
	i := strings.Index(doc, EndMarker) + len(EndMarker)
	head, rest := doc[:i]+"\n", strings.TrimPrefix(doc[i:], "\n")
	rest = strings.TrimLeft(rest, "\n")
	if rest == "" {
		return head + "\n" + section
	}
	return head + "\n" + section + "\n" + rest
}
