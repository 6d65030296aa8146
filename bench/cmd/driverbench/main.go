// Command driverbench loads a proxy (or a server) the way a Go
// application does, through database/sql and go-sql-driver, and prints
// queries per second and, with --pid, that process's CPU per query:
//
//	go run ./bench/cmd/driverbench --addr 127.0.0.1:2883 --user root --db sbtest --pid <obgate pid>
//
// It reads sbtest1 of a sysbench-prepared database by primary key, in one
// of three ways (--pattern):
//   - args: db.QueryRowContext(ctx, sql, id), which the driver (with
//     interpolateParams off, its default) sends as a prepare, an execute
//     and a close per query: the most common pattern of Go code;
//   - prepared: one *sql.Stmt prepared before the run, executed per query
//     (sysbench's --db-ps-mode=auto);
//   - text: the id written into the SQL text, one COM_QUERY per query.
//
// It measures; it asserts nothing. Compare targets in one sitting, as the
// sysbench suite does.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"obgate/bench/suite"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "driverbench:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:2883", "address of the proxy or server")
	user := flag.String("user", "root", "user name (root@tenant#cluster through obgate in OceanBase mode)")
	db := flag.String("db", "sbtest", "database holding sbtest1")
	threads := flag.Int("threads", 8, "goroutines, each with its own connection")
	dur := flag.Duration("duration", 10*time.Second, "measured time")
	rows := flag.Int("rows", 10000, "ids 1..rows are read")
	pattern := flag.String("pattern", "args", "args, prepared or text (see the command's doc)")
	pid := flag.Int("pid", 0, "process whose CPU per query to report (0: none)")
	flag.Parse()

	cfg := mysql.NewConfig()
	cfg.Net, cfg.Addr, cfg.User, cfg.DBName = "tcp", *addr, *user, *db
	cfg.Timeout = 5 * time.Second
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	pool := sql.OpenDB(conn)
	defer pool.Close()
	pool.SetMaxOpenConns(*threads)
	pool.SetMaxIdleConns(*threads)
	const query = "SELECT c FROM sbtest1 WHERE id = ?"
	var stmt *sql.Stmt
	switch *pattern {
	case "args", "text":
	case "prepared":
		if stmt, err = pool.Prepare(query); err != nil {
			return err
		}
		defer stmt.Close()
	default:
		return fmt.Errorf("unknown --pattern %q", *pattern)
	}
	readOne := func(ctx context.Context, id int) error {
		var c string
		switch *pattern {
		case "args":
			return pool.QueryRowContext(ctx, query, id).Scan(&c)
		case "prepared":
			return stmt.QueryRowContext(ctx, id).Scan(&c)
		}
		return pool.QueryRowContext(ctx, "SELECT c FROM sbtest1 WHERE id = "+strconv.Itoa(id)).Scan(&c)
	}
	// Warm the pool: every connection open, every statement prepared.
	var wg sync.WaitGroup
	for range *threads {
		wg.Go(func() { _ = readOne(context.Background(), 1) })
	}
	wg.Wait()

	var done, failed atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), *dur)
	defer cancel()
	var cpu0 time.Duration
	if *pid != 0 {
		if cpu0, err = suite.CPUTime(*pid); err != nil {
			return err
		}
	}
	start := time.Now()
	for range *threads {
		wg.Go(func() {
			for ctx.Err() == nil {
				err := readOne(ctx, 1+rand.IntN(*rows))
				switch {
				case err == nil:
					done.Add(1)
				case !errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	n := done.Load()
	line := fmt.Sprintf("pattern=%s threads=%d qps=%.0f failed=%d", *pattern, *threads, float64(n)/elapsed.Seconds(), failed.Load())
	if *pid != 0 && n > 0 {
		cpu1, err := suite.CPUTime(*pid)
		if err != nil {
			return err
		}
		line += fmt.Sprintf(" cpu_us_per_query=%.1f", float64((cpu1-cpu0).Microseconds())/float64(n))
	}
	fmt.Println(line)
	return nil
}
