// Command demo starts obgate in front of a throwaway database and prints
// how to connect; Ctrl-C stops everything. `make demo` runs it.
package main

import (
	"context"
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
)

func main() {
	if err := run(); err != nil {
		log.Fatalf("demo: %v", err)
	}
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	work, err := os.MkdirTemp("", "obgate-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	fmt.Println("starting MariaDB ...")
	db, err := mariadbd.Start(ctx, mariadbd.Options{})
	if err != nil {
		return err
	}
	defer db.Stop()
	if err := db.Exec(ctx,
		"CREATE DATABASE IF NOT EXISTS demo",
		"CREATE TABLE demo.orders (id BIGINT PRIMARY KEY, customer VARCHAR(64), amount DECIMAL(10,2), created DATETIME(6))",
		"INSERT INTO demo.orders SELECT seq, CONCAT('customer-', seq % 97), seq * 1.5, NOW(6) FROM seq_1_to_1000",
	); err != nil {
		return err
	}

	bin, err := filepath.Abs("bin/obgate")
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "-N", "-p", "2883", "-l", "2884", "-r", db.Addr(),
		"-o", "server_routing_mode=mysql", "--config-dir", filepath.Join(work, "etc"))
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
	fmt.Printf(`
obgate is listening on 127.0.0.1:2883 (metrics on http://127.0.0.1:2884/metrics),
in front of MariaDB at %s (server_routing_mode=mysql).

  mysql -h127.0.0.1 -P2883 -uroot@sys#demo demo     # a database session (root has no password)
  mysql -h127.0.0.1 -P2883 -uroot@proxysys           # obgate's admin: SHOW PROXYCONFIG, SHOW PROXYSESSION

Press Ctrl-C to stop.
`, db.Addr())
	<-ctx.Done()
	fmt.Println("\nstopping ...")
	return nil
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
