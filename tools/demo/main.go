// Command demo starts obgate in front of a simulated three-zone OceanBase
// cluster (tools/obsim, cluster "demo") and prints how to connect and how
// to break a node; Ctrl-C stops everything. `make demo` runs it.
//
// With -mysql it starts a plain MariaDB instead and runs obgate in
// server_routing_mode=mysql.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"obgate/internal/mariadbd"
	"obgate/tools/obsim"
)

func main() {
	mysqlMode := flag.Bool("mysql", false, "front a plain MariaDB (server_routing_mode=mysql) instead of the simulated cluster")
	flag.Parse()
	if err := run(*mysqlMode); err != nil {
		log.Fatalf("demo: %v", err)
	}
}

func run(mysqlMode bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	work, err := os.MkdirTemp("", "obgate-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	var args []string
	var banner string
	if mysqlMode {
		db, err := startMariaDB(ctx)
		if err != nil {
			return err
		}
		defer db.Stop()
		args = []string{"-r", db.Addr(), "-o", "server_routing_mode=mysql"}
		banner = fmt.Sprintf(`obgate (server_routing_mode=mysql) is listening on 127.0.0.1:2883, in front of MariaDB at %s.

  mysql -h127.0.0.1 -P2883 -uroot demo           # a database session (root has no password)
  mysql -h127.0.0.1 -P2883 -uroot@proxysys       # obgate's admin: SHOW PROXYCONFIG, SHOW PROXYSESSION
`, db.Addr())
	} else {
		fmt.Println("starting the simulated cluster ...")
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		cluster, err := obsim.Start(sctx, obsim.Config{Topology: obsim.DemoTopology()})
		cancel()
		if err != nil {
			return err
		}
		defer cluster.Close()
		ctl, err := cluster.ServeControl(obsim.DemoCtlAddr)
		if err != nil {
			return err
		}
		defer ctl.Close()
		args = []string{"-r", cluster.RSList(), "-c", cluster.Name()}
		banner = demoBanner(cluster, ctl.Addr())
	}

	bin, err := filepath.Abs("bin/obgate")
	if err != nil {
		return err
	}
	diagDir := filepath.Join(work, "log")
	cmdArgs := append([]string{"-N", "-p", "2883", "-l", "2884", "--config-dir", filepath.Join(work, "etc"), "-o", "log_dir=" + diagDir}, args...)
	cmd := exec.Command(bin, cmdArgs...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start obgate (run `make build` first): %w", err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	if err := waitPort(ctx, "127.0.0.1:2883"); err != nil {
		return err
	}
	fmt.Printf("\n%s\nmetrics: http://127.0.0.1:2884/metrics (also /healthz, /readyz)\ndiagnosis log (one JSON line per disconnect, failed login, retry, blocklist change):\n  tail -f %s | jq .\nPress Ctrl-C to stop.\n",
		banner, filepath.Join(diagDir, "obgate_diagnosis.log"))
	<-ctx.Done()
	fmt.Println("\nstopping ...")
	return nil
}

func demoBanner(c *obsim.Cluster, ctl string) string {
	nodes := ""
	for _, n := range c.State().Nodes {
		nodes += fmt.Sprintf("  %-8s zone %-6s region %-9s %s\n", n.Name, n.Zone, n.Region, n.Addr)
	}
	return fmt.Sprintf(`obgate is listening on 127.0.0.1:2883, in front of the simulated OceanBase cluster %q:
%s
  mysql -h127.0.0.1 -P2883 -uroot@test#demo      # tenant test: SELECT * FROM test.orders LIMIT 5;
  mysql -h127.0.0.1 -P2883 -uroot@sys#demo       # tenant sys: SELECT * FROM oceanbase.DBA_OB_SERVERS;
  mysql -h127.0.0.1 -P2883 -uroot@proxysys       # obgate's admin: SHOW PROXYSESSION, SHOW PROXYROUTE
root has no password in every tenant.

Break a node and watch sessions carry on (their next statement moves to another node):
  bin/obsim ctl --addr %[3]s stop zone2-1     (start zone2-1 brings it back)
  curl -X POST http://%[3]s/v1/nodes/zone2-1/stop
  bin/obsim ctl --addr %[3]s help             (every fault: hang, slow, errors, ...)
`, c.Name(), nodes, ctl)
}

func startMariaDB(ctx context.Context) (*mariadbd.Server, error) {
	fmt.Println("starting MariaDB ...")
	db, err := mariadbd.Start(ctx, mariadbd.Options{})
	if err != nil {
		return nil, err
	}
	if err := db.Exec(ctx,
		"CREATE DATABASE IF NOT EXISTS demo",
		"CREATE TABLE demo.orders (id BIGINT PRIMARY KEY, customer VARCHAR(64), amount DECIMAL(10,2), created DATETIME(6))",
		"INSERT INTO demo.orders SELECT seq, CONCAT('customer-', seq % 97), seq * 1.5, NOW(6) FROM demo.seq_1_to_1000",
	); err != nil {
		db.Stop()
		return nil, err
	}
	return db, nil
}

func waitPort(ctx context.Context, addr string) error {
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
