package mariadbd

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Defaults for the zero values of Options.
const (
	DefaultMaxConnections = 6000
	DefaultBufferPoolSize = 128 << 20
	DefaultLogFileSize    = 48 << 20
	DefaultStartTimeout   = 60 * time.Second
	DefaultStopTimeout    = 30 * time.Second
)

// portAttempts bounds how often Start picks another port when the one it
// chose was taken before the server could bind it.
const portAttempts = 5

// Options configure a server. The zero value is a good test server.
type Options struct {
	// Dir holds the server's data, socket, pid file and error log. It must
	// be empty or absent. Empty means a new directory under os.TempDir().
	Dir string
	// KeepDir leaves Dir on disk after Stop, for post-mortems.
	KeepDir bool
	// Port is the TCP port on 127.0.0.1. Zero picks a free port (and another
	// one if it is taken before the server binds it).
	Port int
	// MaxConnections sets max_connections; zero means DefaultMaxConnections.
	MaxConnections int
	// BufferPoolSize sets innodb_buffer_pool_size in bytes; zero means
	// DefaultBufferPoolSize.
	BufferPoolSize int64
	// LogFileSize sets innodb_log_file_size in bytes; zero means
	// DefaultLogFileSize.
	LogFileSize int64
	// Args are extra mariadbd options, placed last so that they win, such
	// as "--ssl-cert=...".
	Args []string
	// CacheDir holds the initialised template datadirs. Empty means
	// $XDG_CACHE_HOME/obgate (~/.cache/obgate), or a directory under
	// os.TempDir() when that cannot be created.
	CacheDir string
	// StartTimeout bounds Start when ctx has no deadline; zero means
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// StopTimeout bounds the graceful shutdown in Stop before the server is
	// killed; zero means DefaultStopTimeout.
	StopTimeout time.Duration
}

func (o *Options) setDefaults() {
	if o.MaxConnections <= 0 {
		o.MaxConnections = DefaultMaxConnections
	}
	if o.BufferPoolSize <= 0 {
		o.BufferPoolSize = DefaultBufferPoolSize
	}
	if o.LogFileSize <= 0 {
		o.LogFileSize = DefaultLogFileSize
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = DefaultStopTimeout
	}
	if o.CacheDir == "" {
		o.CacheDir = defaultCacheDir()
	}
}

// Server is a running mariadbd. Its methods are safe for concurrent use.
type Server struct {
	opts    Options
	bin     binaries
	dir     string
	dataDir string
	socket  string
	pidFile string
	errLog  string
	port    int
	started time.Duration

	cmd     *exec.Cmd
	exited  chan struct{} // closed once the process has been reaped
	waitErr error         // the result of cmd.Wait; read only after exited is closed

	db *sql.DB // root pool for Exec

	stopOnce sync.Once
	stopErr  error
}

// Start creates a server directory, copies the cached template datadir into
// it (building the template first if needed), starts mariadbd on 127.0.0.1
// and returns once the server accepts a root login over TCP. ctx bounds the
// start; without a deadline Options.StartTimeout applies. On error nothing is
// left running, and the directory is removed unless Options.KeepDir is set.
func Start(ctx context.Context, opts Options) (*Server, error) {
	begin := time.Now()
	opts.setDefaults()
	bin, err := findBinaries()
	if err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.StartTimeout)
		defer cancel()
	}
	tmpl, err := ensureTemplate(ctx, bin, opts.CacheDir)
	if err != nil {
		return nil, err
	}

	dir, err := makeDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts:    opts,
		bin:     bin,
		dir:     dir,
		dataDir: filepath.Join(dir, "data"),
		socket:  filepath.Join(dir, "mariadbd.sock"),
		pidFile: filepath.Join(dir, "mariadbd.pid"),
		errLog:  filepath.Join(dir, "error.log"),
	}
	if len(s.socket) > 100 { // sun_path holds 108 bytes
		s.removeDir()
		return nil, fmt.Errorf("mariadbd: socket path %q is too long; use a shorter Options.Dir", s.socket)
	}
	if err := os.Mkdir(filepath.Join(dir, "tmp"), 0o700); err != nil {
		s.removeDir()
		return nil, fmt.Errorf("mariadbd: %w", err)
	}

	for attempt := 1; ; attempt++ {
		err = s.launch(ctx, tmpl, attempt)
		if err == nil {
			break
		}
		if opts.Port != 0 || attempt >= portAttempts || !errors.Is(err, errPortTaken) || ctx.Err() != nil {
			s.removeDir()
			return nil, err
		}
	}

	cfg := s.config("root", "", "")
	cfg.Logger = &mysql.NopLogger{}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		_ = s.Stop()
		return nil, fmt.Errorf("mariadbd: %w", err)
	}
	s.db = sql.OpenDB(conn)
	s.db.SetMaxIdleConns(1)
	s.started = time.Since(begin)
	return s, nil
}

// makeDir returns dir (created if absent, refused unless empty) or a new
// temporary directory.
func makeDir(dir string) (string, error) {
	if dir == "" {
		sweepStale()
		d, err := os.MkdirTemp("", tempPrefix)
		if err != nil {
			return "", fmt.Errorf("mariadbd: %w", err)
		}
		return d, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("mariadbd: %w", err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("mariadbd: %w", err)
	}
	ents, err := os.ReadDir(abs)
	if err != nil {
		return "", fmt.Errorf("mariadbd: %w", err)
	}
	if len(ents) != 0 {
		return "", fmt.Errorf("mariadbd: Options.Dir %s is not empty", abs)
	}
	return abs, nil
}

// tempPrefix names the directories Start creates under os.TempDir().
const tempPrefix = "obgate-mariadb-"

var errPortTaken = errors.New("port already in use")

// launch copies the template into a fresh datadir, starts mariadbd and waits
// until it accepts a root login.
func (s *Server) launch(ctx context.Context, tmpl string, attempt int) error {
	port := s.opts.Port
	if port == 0 {
		var err error
		if port, err = pickPort(); err != nil {
			return fmt.Errorf("mariadbd: picking a port: %w", err)
		}
	}
	s.port = port
	if err := os.RemoveAll(s.dataDir); err != nil {
		return fmt.Errorf("mariadbd: %w", err)
	}
	if err := copyTree(tmpl, s.dataDir); err != nil {
		return fmt.Errorf("mariadbd: copying template %s: %w", tmpl, err)
	}
	logf, err := os.OpenFile(s.errLog, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("mariadbd: %w", err)
	}
	fmt.Fprintf(logf, "---- obgate: starting %s on 127.0.0.1:%d (attempt %d)\n", s.bin.server, port, attempt)

	cmd := exec.Command(s.bin.server, s.args()...)
	cmd.Dir = s.dir
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = sysProcAttr()
	exited := make(chan struct{})
	startErr := make(chan error, 1)
	go func() {
		// Pdeathsig follows the thread that forked the server, so that thread
		// must live as long as the server: keep it locked to this goroutine
		// until the server has been reaped (the thread then exits with it).
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			startErr <- err
			return
		}
		startErr <- nil
		s.waitErr = cmd.Wait()
		close(exited)
	}()
	err = <-startErr
	logf.Close() // the child holds its own copy
	if err != nil {
		return fmt.Errorf("mariadbd: starting %s: %w", s.bin.server, err)
	}
	s.cmd = cmd
	s.exited = exited

	if err := s.waitReady(ctx); err != nil {
		s.kill()
		log := fileTail(s.errLog, 30)
		if errors.Is(err, errPortTaken) || strings.Contains(log, "Address already in use") || strings.Contains(log, "another server running on port") {
			if !errors.Is(err, errPortTaken) {
				err = errPortTaken
			}
			return fmt.Errorf("mariadbd: 127.0.0.1:%d: %w\nerror log tail:\n%s", port, err, log)
		}
		return fmt.Errorf("mariadbd: server in %s did not start: %w\nerror log tail:\n%s", s.dir, err, log)
	}
	return nil
}

// args is the mariadbd command line.
func (s *Server) args() []string {
	o := s.opts
	a := []string{
		"--no-defaults", // must come first
		"--datadir=" + s.dataDir,
		"--socket=" + s.socket,
		"--pid-file=" + s.pidFile,
		"--tmpdir=" + filepath.Join(s.dir, "tmp"),
		"--port=" + strconv.Itoa(s.port),
		"--bind-address=127.0.0.1",
		"--skip-name-resolve",
		"--max-connections=" + strconv.Itoa(o.MaxConnections),
		"--max-allowed-packet=1G",
		"--max-prepared-stmt-count=1048576",
		"--innodb-buffer-pool-size=" + strconv.FormatInt(o.BufferPoolSize, 10),
		"--innodb-log-file-size=" + strconv.FormatInt(o.LogFileSize, 10),
		"--local-infile=1",
		"--character-set-server=utf8mb4",
		"--collation-server=utf8mb4_general_ci",
		// Speed over durability: these servers only hold test and benchmark
		// data, and their directory is thrown away afterwards.
		"--skip-log-bin",
		"--sync-binlog=0",
		"--innodb-flush-log-at-trx-commit=2",
		"--innodb-doublewrite=0",
		"--innodb-buffer-pool-load-at-startup=0",
		"--innodb-buffer-pool-dump-at-shutdown=0",
		"--performance-schema=0",
	}
	if os.Geteuid() == 0 {
		a = append(a, "--user=root")
	}
	return append(a, o.Args...)
}

// waitReady polls a root login over TCP until it works, the process exits or
// ctx ends.
func (s *Server) waitReady(ctx context.Context) error {
	cfg := s.config("root", "", "")
	cfg.Timeout = time.Second
	cfg.ReadTimeout = 5 * time.Second
	cfg.WriteTimeout = 5 * time.Second
	cfg.Logger = &mysql.NopLogger{} // refusals during start-up are expected
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	db.SetMaxIdleConns(0)

	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		select {
		case <-s.exited:
			return fmt.Errorf("mariadbd exited: %v", s.waitErr)
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("%w (last login attempt: %v)", context.Cause(ctx), last)
			}
			return context.Cause(ctx)
		case <-tick.C:
		}
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		var sock string
		last = db.QueryRowContext(pctx, "SELECT @@socket").Scan(&sock)
		cancel()
		if last == nil {
			if sock != s.socket {
				// Another server owns the port (taken between freePort and
				// our bind); ours will fail to bind.
				return fmt.Errorf("%w by a server with socket %s", errPortTaken, sock)
			}
			return nil
		}
	}
}

// pickPort chooses the port for Options.Port == 0; tests replace it.
var pickPort = freePort

// freePort returns a port that was free a moment ago. Another process may
// take it before the server binds it; launch then reports errPortTaken and
// Start tries again.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) config(user, pass, db string) *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User = user
	cfg.Passwd = pass
	cfg.Net = "tcp"
	cfg.Addr = s.Addr()
	cfg.DBName = db
	return cfg
}

// Addr returns "127.0.0.1:port".
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Port returns the TCP port the server listens on.
func (s *Server) Port() int { return s.port }

// Socket returns the path of the server's Unix socket.
func (s *Server) Socket() string { return s.socket }

// Dir returns the directory holding the server's data, socket and logs.
func (s *Server) Dir() string { return s.dir }

// ErrorLog returns the path of the file that receives the server's output.
func (s *Server) ErrorLog() string { return s.errLog }

// Args returns the mariadbd command line options the server runs with.
func (s *Server) Args() []string { return s.args() }

// PID returns the server's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Version returns the server version, e.g. "10.11.19-MariaDB-0+deb12u1".
func (s *Server) Version() string { return s.bin.version }

// StartupTime returns how long Start took, template copy and wait included.
func (s *Server) StartupTime() time.Duration { return s.started }

// DSN returns a go-sql-driver/mysql data source name for user over TCP,
// e.g. "root@tcp(127.0.0.1:40123)/test". db may be empty.
func (s *Server) DSN(user, pass, db string) string { return s.config(user, pass, db).FormatDSN() }

// Exec runs the statements in order as root on one connection, so session
// state such as USE carries from one to the next. It stops at the first
// error.
func (s *Server) Exec(ctx context.Context, stmts ...string) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("mariadbd: %w", err)
	}
	defer conn.Close()
	for _, q := range stmts {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("mariadbd: %s: %w", q, err)
		}
	}
	return nil
}

// Stop shuts the server down (SIGTERM, then SIGKILL after
// Options.StopTimeout) and removes its directory unless Options.KeepDir is
// set. It reports an error if the server had already died on its own or had
// to be killed. Calling Stop again returns the first result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() { s.stopErr = s.stop() })
	return s.stopErr
}

func (s *Server) stop() error {
	var errs []error
	select {
	case <-s.exited:
		if s.waitErr != nil {
			errs = append(errs, fmt.Errorf("mariadbd: server had exited before Stop: %v\n%s", s.waitErr, fileTail(s.errLog, 20)))
		}
	default:
		if !s.opts.KeepDir && s.db != nil {
			// The files are deleted next: skip flushing dirty pages and the
			// redo log on shutdown (crash recovery would handle it).
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = s.Exec(ctx, "SET GLOBAL innodb_fast_shutdown = 3")
			cancel()
		}
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		t := time.NewTimer(s.opts.StopTimeout)
		select {
		case <-s.exited:
			t.Stop()
		case <-t.C:
			s.kill()
			errs = append(errs, fmt.Errorf("mariadbd: server did not stop within %v and was killed", s.opts.StopTimeout))
		}
	}
	if s.db != nil {
		s.db.Close()
	}
	if !s.opts.KeepDir {
		if err := os.RemoveAll(s.dir); err != nil {
			errs = append(errs, fmt.Errorf("mariadbd: %w", err))
		}
	}
	return errors.Join(errs...)
}

// kill sends SIGKILL and waits for the process to be reaped.
func (s *Server) kill() {
	_ = s.cmd.Process.Kill()
	<-s.exited
}

func (s *Server) removeDir() {
	if !s.opts.KeepDir {
		_ = os.RemoveAll(s.dir)
	}
}
