// Command obsim runs a simulated OceanBase cluster on loopback ports for
// tests, benchmarks and the demo, and controls a running one.
//
//	obsim serve --demo
//	obsim serve --topology cluster.json --ctl 127.0.0.1:28800
//	obsim serve --cluster c1 --zones zone1:hz,zone2:hz,zone3:sh --tenants test
//	obsim ctl stop zone2-1
//	obsim topology --demo > demo.json
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"obgate/tools/obsim"
)

func main() {
	if len(os.Args) < 2 {
		usage(os.Stderr)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "ctl":
		err = ctl(os.Args[2:], os.Stdout)
	case "topology":
		err = topology(os.Args[2:])
	case "-h", "--help", "help":
		usage(os.Stdout)
		return
	default:
		usage(os.Stderr)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "obsim:", err)
		os.Exit(1)
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
  obsim serve [--demo | --topology FILE | --cluster NAME --zones SPEC [--tenants SPEC]]
              [--ctl 127.0.0.1:PORT] [--mariadb DSN] [--base-port N]
              [--remote-plan-cost DURATION] [--ssl-cert FILE --ssl-key FILE] [-v]
  obsim ctl [--addr 127.0.0.1:PORT] VERB [ARGS]   (obsim ctl help lists the verbs)
  obsim topology --demo                           print the demo topology as JSON
`)
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	demo := fs.Bool("demo", false, "run the demo cluster (cluster demo, 3 zones, tenant test with test.orders)")
	topoFile := fs.String("topology", "", "JSON topology file")
	cluster := fs.String("cluster", "", "cluster name (with --zones, instead of a file)")
	clusterID := fs.Int64("cluster-id", 1, "cluster id (with --zones)")
	zones := fs.String("zones", "", "zones as name:region:idc:type:servers,… (with --cluster)")
	tenants := fs.String("tenants", "", "tenants as name[:primary_zone],… (with --cluster)")
	ctlAddr := fs.String("ctl", "", "serve the control endpoint on this loopback address (default "+obsim.DemoCtlAddr+" with --demo)")
	mariaDSN := fs.String("mariadb", "", "use this MariaDB (go-sql-driver DSN) instead of starting one")
	basePort := fs.Int("base-port", -1, "nodes listen on base-port+1, +2, … (0: free ports)")
	remoteCost := fs.String("remote-plan-cost", "", "time added to every statement a node runs as a remote plan (default: the topology's remote_plan_cost, else 1ms; 0 turns it off)")
	verbose := fs.Bool("v", false, "log obsim's activity")
	sslCert := fs.String("ssl-cert", "", "PEM certificate chain: nodes accept TLS from clients (with --ssl-key)")
	sslKey := fs.String("ssl-key", "", "PEM private key of --ssl-cert")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var tlsCfg *tls.Config
	if *sslCert != "" || *sslKey != "" {
		cert, err := tls.LoadX509KeyPair(*sslCert, *sslKey)
		if err != nil {
			return fmt.Errorf("--ssl-cert/--ssl-key: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	var topo *obsim.Topology
	var err error
	switch {
	case *demo:
		topo = obsim.DemoTopology()
		if *ctlAddr == "" {
			*ctlAddr = obsim.DemoCtlAddr
		}
	case *topoFile != "":
		if topo, err = obsim.LoadTopology(*topoFile); err != nil {
			return err
		}
	case *cluster != "" && *zones != "":
		zs, err := obsim.ParseZonesFlag(*zones)
		if err != nil {
			return err
		}
		topo = &obsim.Topology{Cluster: *cluster, ClusterID: *clusterID, Zones: zs, Tenants: obsim.ParseTenantsFlag(*tenants)}
	default:
		return errors.New("serve needs --demo, --topology FILE or --cluster with --zones")
	}
	if *basePort >= 0 {
		topo.BasePort = *basePort
	}
	if *remoteCost != "" {
		topo.RemotePlanCost = *remoteCost
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	start := time.Now()
	c, err := obsim.Start(ctx, obsim.Config{Topology: topo, MariaDBDSN: *mariaDSN, Logger: logger, TLS: tlsCfg})
	cancel()
	if err != nil {
		return err
	}
	defer c.Close()
	var cs *obsim.ControlServer
	if *ctlAddr != "" {
		if cs, err = c.ServeControl(*ctlAddr); err != nil {
			return err
		}
		defer cs.Close()
	}
	printBanner(os.Stdout, c, cs, *demo, time.Since(start))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	fmt.Println("obsim: shutting down")
	return nil
}

func printBanner(w io.Writer, c *obsim.Cluster, cs *obsim.ControlServer, demo bool, took time.Duration) {
	fmt.Fprintf(w, "obsim: cluster %s (id %d, OceanBase %s) started in %v; data in MariaDB at %s\n",
		c.Name(), c.ID(), c.Version(), took.Round(time.Millisecond), c.MariaDBAddr())
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  NODE\tZONE\tREGION\tIDC\tSQL ADDRESS")
	for _, n := range c.State().Nodes {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", n.Name, n.Zone, n.Region, n.IDC, n.Addr)
	}
	tw.Flush()
	fmt.Fprintf(w, "rslist (ODP -r): %s\n", c.RSList())
	first := c.Nodes()[0].Addr()
	host, port, _ := strings.Cut(first, ":")
	fmt.Fprintf(w, "connect to a node directly:  mysql -h%s -P%s -uroot@sys   (or -uroot@<tenant>)\n", host, port)
	if demo {
		fmt.Fprintf(w, `
through obgate on 2883 (started as: obgate -p 2883 -r '%s' -c demo):
  mysql -h127.0.0.1 -P2883 -uroot@test#demo     (then: SELECT * FROM test.orders LIMIT 5;)
  mysql -h127.0.0.1 -P2883 -uroot@sys#demo
  mysql -h127.0.0.1 -P2883 -uroot@proxysys
root has no password in every tenant.
`, c.RSList())
	}
	if cs != nil {
		fmt.Fprintf(w, `
control endpoint: http://%[1]s/v1/cluster
break a node:    obsim ctl --addr %[1]s stop zone2-1      (start zone2-1 brings it back)
                 curl -X POST http://%[1]s/v1/nodes/zone2-1/stop
other faults:    obsim ctl --addr %[1]s help
`, cs.Addr())
	}
	fmt.Fprintln(w, "press Ctrl-C to stop")
}

func topology(args []string) error {
	fs := flag.NewFlagSet("topology", flag.ContinueOnError)
	demo := fs.Bool("demo", false, "print the demo topology")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !*demo {
		return errors.New("topology needs --demo")
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(obsim.DemoTopology())
}

const ctlHelp = `verbs:
  state                                  cluster, zones, tenants, nodes (JSON)
  nodes                                  node table
  stop NODE | start NODE                 close / reopen a node's port and connections
  hang NODE | unhang NODE                accept but never answer / recover
  hang-sql NODE | unhang-sql NODE        log clients in but answer no statement / recover
  slow NODE DURATION                     add latency to every reply (0 removes it)
  corrupt NODE FRAMES                    send the next OB 2.0 response frames with a bad checksum
  status NODE STATUS                     DBA_OB_SERVERS.STATUS (ACTIVE, INACTIVE, DELETING)
  start-service-time NODE null|now|TIME  DBA_OB_SERVERS.START_SERVICE_TIME
  stop-time NODE null|now|TIME           DBA_OB_SERVERS.STOP_TIME
  zone-status ZONE STATUS                DBA_OB_ZONES.STATUS (ACTIVE, INACTIVE)
  tables                                 partitions and their leaders
  leader TABLE PARTITION NODE            move a partition's leader (TABLE: [tenant.]db.table)
  error [-node N] [-count N] [-prob P] [-login] [-message M] CODE [PATTERN]
                                         answer matching statements with error CODE
  errors | clear-errors                  list / remove injected errors
  remote-plan-cost [DURATION]            show / set the time a remote plan adds (0 turns it off)
  reset                                  undo every fault
  log [-node N] [-n COUNT]               statement log
  stats [-json]                          statements per node: local, remote, weak; proxied and direct
  clear-stats                            set the statement counters to zero
`

func ctl(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("ctl", flag.ContinueOnError)
	addr := fs.String("addr", envOr("OBSIM_CTL", obsim.DemoCtlAddr), "control endpoint address (env OBSIM_CTL)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 || rest[0] == "help" {
		fmt.Fprint(out, ctlHelp)
		return nil
	}
	cc := &obsim.ControlClient{Addr: *addr}
	verb, a := rest[0], rest[1:]
	need := func(n int) error {
		if len(a) != n {
			return fmt.Errorf("%s takes %d argument(s); see obsim ctl help", verb, n)
		}
		return nil
	}
	printJSON := func(v any) error {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	switch verb {
	case "state":
		st, err := cc.State()
		if err != nil {
			return err
		}
		return printJSON(st)
	case "nodes":
		st, err := cc.State()
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NODE\tZONE\tADDR\tRUNNING\tHUNG\tDELAY\tSTATUS\tZONE STATUS\tSESSIONS")
		for _, n := range st.Nodes {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%v\t%s\t%s\t%s\t%d\n", n.Name, n.Zone, n.Addr, n.Running, n.Hung, n.Delay, n.Status, n.ZoneStatus, n.Sessions)
		}
		return tw.Flush()
	case "stop", "start", "hang", "unhang", "hang-sql", "unhang-sql":
		if err := need(1); err != nil {
			return err
		}
		if err := cc.NodeAction(a[0], verb); err != nil {
			return err
		}
		fmt.Fprintf(out, "%s: %s done\n", a[0], verb)
		return nil
	case "slow":
		if err := need(2); err != nil {
			return err
		}
		d := time.Duration(0)
		if a[1] != "0" {
			var err error
			if d, err = time.ParseDuration(a[1]); err != nil {
				return err
			}
		}
		return cc.Slow(a[0], d)
	case "corrupt":
		if err := need(2); err != nil {
			return err
		}
		k, err := strconv.Atoi(a[1])
		if err != nil {
			return err
		}
		return cc.Corrupt(a[0], k)
	case "status", "start-service-time", "stop-time":
		if err := need(2); err != nil {
			return err
		}
		v := a[1]
		var ch obsim.StatusChange
		switch verb {
		case "status":
			ch.Status = &v
		case "start-service-time":
			ch.StartServiceTime = &v
		default:
			ch.StopTime = &v
		}
		return cc.SetStatus(a[0], ch)
	case "zone-status":
		if err := need(2); err != nil {
			return err
		}
		return cc.SetZoneStatus(a[0], a[1])
	case "tables":
		var tables []obsim.TableInfo
		if err := cc.Do("GET", "/v1/tables", nil, &tables); err != nil {
			return err
		}
		tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TABLE\tPARTITION\tTABLET\tLEADER\tREPLICAS")
		for _, t := range tables {
			for _, p := range t.Partitions {
				fmt.Fprintf(tw, "%s.%s.%s\t%s\t%d\t%s\t%s\n", t.Tenant, t.Database, t.Name, p.Name, p.TabletID, p.Leader, strings.Join(p.Replicas, ","))
			}
		}
		return tw.Flush()
	case "leader":
		if err := need(3); err != nil {
			return err
		}
		return cc.MoveLeader(a[0], a[1], a[2])
	case "error":
		efs := flag.NewFlagSet("error", flag.ContinueOnError)
		node := efs.String("node", "", "only this node")
		count := efs.Int("count", 0, "fire this many times (0: until removed)")
		prob := efs.Float64("prob", 0, "probability of firing (0: always)")
		login := efs.Bool("login", false, "apply to logins")
		msg := efs.String("message", "", "error message")
		if err := efs.Parse(a); err != nil {
			return err
		}
		ea := efs.Args()
		if len(ea) < 1 || len(ea) > 2 {
			return errors.New("error takes CODE [PATTERN]")
		}
		code, err := strconv.ParseUint(ea[0], 10, 16)
		if err != nil {
			return fmt.Errorf("bad code %q", ea[0])
		}
		rule := obsim.ErrorRule{Node: *node, Code: uint16(code), Count: *count, Probability: *prob, Login: *login, Message: *msg}
		if len(ea) == 2 {
			rule.Pattern = ea[1]
		}
		id, err := cc.InjectError(rule)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "error rule %d added\n", id)
		return nil
	case "errors":
		var rules []obsim.ErrorRule
		if err := cc.Do("GET", "/v1/errors", nil, &rules); err != nil {
			return err
		}
		return printJSON(rules)
	case "clear-errors":
		return cc.Do("DELETE", "/v1/errors", nil, nil)
	case "remote-plan-cost":
		if len(a) > 1 {
			return errors.New("remote-plan-cost takes at most one argument")
		}
		if len(a) == 1 {
			d := time.Duration(0)
			if a[0] != "0" {
				var err error
				if d, err = time.ParseDuration(a[0]); err != nil {
					return err
				}
			}
			if err := cc.SetRemotePlanCost(d); err != nil {
				return err
			}
		}
		d, err := cc.RemotePlanCost()
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "remote plan cost: %v\n", d)
		return nil
	case "reset":
		return cc.Reset()
	case "log":
		lfs := flag.NewFlagSet("log", flag.ContinueOnError)
		node := lfs.String("node", "", "only this node")
		n := lfs.Int("n", 20, "show the last n entries (0: all)")
		if err := lfs.Parse(a); err != nil {
			return err
		}
		entries, err := cc.Log(*node, 0, *n)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TIME\tNODE\tSESSION\tCLIENT\tPROTO\tTENANT\tWHERE\tRESULT\tSQL")
		for _, e := range entries {
			where := "local"
			if !e.Local {
				where = "remote"
			}
			res := e.Result
			if e.Code != 0 {
				res = fmt.Sprintf("%s %d", e.Result, e.Code)
			}
			sql := e.SQL
			if len(sql) > 80 {
				sql = sql[:77] + "..."
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s %s\n", e.Time.Format("15:04:05.000"), e.Node, e.Session,
				e.Client, e.Protocol, e.Tenant, where, res, e.Command, strings.ReplaceAll(sql, "\n", " "))
		}
		return tw.Flush()
	case "stats":
		sfs := flag.NewFlagSet("stats", flag.ContinueOnError)
		asJSON := sfs.Bool("json", false, "print the JSON of GET /v1/stats")
		if err := sfs.Parse(a); err != nil {
			return err
		}
		st, err := cc.Stats()
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(st)
		}
		return printStats(out, st)
	case "clear-stats":
		return cc.ResetStats()
	}
	return fmt.Errorf("unknown verb %q; see obsim ctl help", verb)
}

// printStats writes the statement counters as a table, nodes in name
// order and the total last.
func printStats(out io.Writer, st obsim.Stats) error {
	names := make([]string, 0, len(st.Nodes))
	for name := range st.Nodes {
		names = append(names, name)
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "NODE\tSTATEMENTS\tLOCAL\tREMOTE\tWEAK\tPROXY\tPROXY REMOTE\tDIRECT\tDIRECT REMOTE\t")
	row := func(name string, s obsim.NodeStats) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", name, s.Statements, s.Local, s.Remote, s.Weak,
			s.Proxy.Statements, s.Proxy.Remote, s.Direct.Statements, s.Direct.Remote)
	}
	for _, name := range names {
		row(name, st.Nodes[name])
	}
	row("total", st.Total)
	return tw.Flush()
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
