// Package mariadbd starts throwaway MariaDB servers on the loopback interface
// for tests, the simulator and benchmarks.
//
// A server lives in its own directory (data, socket, pid file, error log) and
// listens on 127.0.0.1 on a port the package picks. The system tables are
// created once per MariaDB version by mariadb-install-db into a per-user cache
// directory (the template); every Start copies that template, so a new server
// is up in about a second instead of paying for install-db each time.
//
// The servers trade durability for speed (no binary log, no doublewrite, redo
// log written at commit but flushed once a second, and no flushing at shutdown
// when the directory is about to be removed): they are for tests and must
// never hold data anyone wants to keep.
//
// Typical use in a test:
//
//	srv := mariadbd.StartForTest(t, mariadbd.Options{})
//	db, err := sql.Open("mysql", srv.DSN("root", "", ""))
package mariadbd
