package suite

import "time"

// Target kinds.
const (
	KindDirect  = "direct"  // sysbench straight to MariaDB
	KindHAProxy = "haproxy" // through HAProxy in TCP mode
	KindObgate  = "obgate"  // through an obgate process
	KindOBSim   = "obsim"   // sysbench straight to the node of a simulated OceanBase cluster
)

// TargetInfo describes one endpoint sysbench ran against.
type TargetInfo struct {
	Name    string   `json:"name"`
	Kind    string   `json:"kind"`
	Port    int      `json:"port"`
	Command []string `json:"command,omitempty"` // how the proxy was started
	// User is the login name sysbench uses; empty means root.
	User string `json:"user,omitempty"`
	// Mode is ModeOceanBase for the targets in front of obsim (obsim
	// itself and obgate in OceanBase mode), empty for those in front of
	// MariaDB.
	Mode string `json:"mode,omitempty"`
}

func (t TargetInfo) user() string {
	if t.User == "" {
		return "root"
	}
	return t.User
}

// IsProxy reports whether the target is a proxy process whose CPU time
// and system calls are measured.
func (t TargetInfo) IsProxy() bool { return t.Kind == KindHAProxy || t.Kind == KindObgate }

// Measurement is one measured sysbench run: a workload, a thread count and a target.
type Measurement struct {
	Workload string    `json:"workload"`
	Threads  int       `json:"threads"`
	Target   string    `json:"target"`
	Kind     string    `json:"kind"`
	Round    int       `json:"round"`
	Started  time.Time `json:"started"`
	Command  []string  `json:"command"`
	RawFile  string    `json:"raw_file"` // sysbench's output, relative to the results directory
	Error    string    `json:"error,omitempty"`
	Stats    Stats     `json:"sysbench"`

	// CPU time (user + system) used during the measured run and divided by
	// the queries sysbench executed. Proxy figures are absent for direct runs.
	ProxyCPUSeconds      Num `json:"proxy_cpu_s"`
	ProxyCPUUsPerQuery   Num `json:"proxy_cpu_us_per_query"`
	MariaDBCPUSeconds    Num `json:"mariadb_cpu_s"`
	MariaDBCPUUsPerQuery Num `json:"mariadb_cpu_us_per_query"`
	ClientCPUSeconds     Num `json:"sysbench_cpu_s"`
	ClientCPUUsPerQuery  Num `json:"sysbench_cpu_us_per_query"`

	// System calls of the proxy process (all threads) during the measured
	// run, counted by the kernel (perf stat -e raw_syscalls:sys_enter -p),
	// and divided by the queries; absent for direct runs and when perf
	// could not count, which SyscallError then says.
	ProxySyscalls         int64  `json:"proxy_syscalls,omitempty"`
	ProxySyscallsPerQuery Num    `json:"proxy_syscalls_per_query"`
	SyscallError          string `json:"syscall_error,omitempty"`
	// ProxyFutexPerQuery (futex calls: threads waking each other) and
	// ProxyContextSwitchesPerQuery come from the same counter, per query;
	// NaN when it did not count them.
	ProxyFutexPerQuery           Num `json:"proxy_futex_per_query"`
	ProxyContextSwitchesPerQuery Num `json:"proxy_context_switches_per_query"`
}

// Cell aggregates the rounds of one (workload, threads, target): each figure
// is the median over the successful rounds.
type Cell struct {
	CellRounds
	QPS                  Num    `json:"qps"`
	TPS                  Num    `json:"tps"`
	P95Ms                Num    `json:"p95_ms"`
	P99Ms                Num    `json:"p99_ms"`
	IgnoredErrors        uint64 `json:"ignored_errors"` // summed over rounds
	Reconnects           uint64 `json:"reconnects"`     // summed over rounds
	ProxyCPUUsPerQuery   Num    `json:"proxy_cpu_us_per_query"`
	MariaDBCPUUsPerQuery Num    `json:"mariadb_cpu_us_per_query"`
	ClientCPUUsPerQuery  Num    `json:"sysbench_cpu_us_per_query"`
	// ProxySyscallsPerQuery is the median of the rounds' proxy system
	// calls per query; the futex calls and context switches likewise.
	ProxySyscallsPerQuery        Num `json:"proxy_syscalls_per_query"`
	ProxyFutexPerQuery           Num `json:"proxy_futex_per_query"`
	ProxyContextSwitchesPerQuery Num `json:"proxy_context_switches_per_query"`
}

// Settings are the parameters of a suite run, recorded with its results.
type Settings struct {
	Quick          bool            `json:"quick"`
	Tables         int             `json:"tables"`
	TableSize      int             `json:"table_size"`
	TimeSeconds    int             `json:"time_s"`
	WarmupSeconds  int             `json:"warmup_s"`
	Rounds         int             `json:"rounds"`
	Workloads      []string        `json:"workloads"`
	Threads        []int           `json:"threads"`
	SysbenchArgs   []string        `json:"sysbench_args"` // common to every run
	MariaDBArgs    []string        `json:"mariadb_args"`  // beyond the mariadbd package's defaults
	BufferPoolSize int64           `json:"innodb_buffer_pool_size"`
	HAProxy        HAProxySettings `json:"haproxy"`
	HAProxyConfig  string          `json:"haproxy_config,omitempty"`
	// SyscallCounter is how the proxies' system calls were counted
	// (CounterPerf), or empty when they were not.
	SyscallCounter string `json:"syscall_counter,omitempty"`
	OBSimTopology  string `json:"obsim_topology,omitempty"`
}

// Summary is everything summary.json holds and the report is made from.
type Summary struct {
	CommandLine string       `json:"command_line"`
	Environment Environment  `json:"environment"`
	Settings    Settings     `json:"settings"`
	Targets     []TargetInfo `json:"targets"`
	Cells       []Cell       `json:"cells"`
	RunFiles    []string     `json:"run_files"`
	Failures    int          `json:"failures"`
}

// Cell returns the cell for (workload, threads, target), or nil.
func (s *Summary) Cell(workload string, threads int, target string) *Cell {
	return findCell(s.Cells, workload, threads, target)
}

// haproxyOf returns the first HAProxy target in front of mode's servers
// (MariaDB for "", obsim for ModeOceanBase), or nil.
func (s *Summary) haproxyOf(mode string) *TargetInfo {
	for i := range s.Targets {
		if s.Targets[i].Kind == KindHAProxy && s.Targets[i].Mode == mode {
			return &s.Targets[i]
		}
	}
	return nil
}

// TargetOfKind returns the first target of kind, or nil.
func (s *Summary) TargetOfKind(kind string) *TargetInfo {
	for i := range s.Targets {
		if s.Targets[i].Kind == kind {
			return &s.Targets[i]
		}
	}
	return nil
}

// Summarize groups runs into cells, in the order of workloads, threads and
// targets.
func Summarize(runs []Measurement, workloads []string, threads []int, targets []TargetInfo) []Cell {
	var cells []Cell
	for _, g := range groupCells(runs, workloads, threads, targets) {
		c := Cell{CellRounds: g.CellRounds}
		for _, r := range g.ok {
			c.IgnoredErrors += r.Stats.IgnoredErrors
			c.Reconnects += r.Stats.Reconnects
		}
		c.QPS = medianOf(g.ok, func(r Measurement) Num { return Num(r.Stats.QPS) })
		c.TPS = medianOf(g.ok, func(r Measurement) Num { return Num(r.Stats.TPS) })
		c.P95Ms = medianOf(g.ok, func(r Measurement) Num { return r.Stats.P95Ms })
		c.P99Ms = medianOf(g.ok, func(r Measurement) Num { return r.Stats.P99Ms })
		c.ProxyCPUUsPerQuery = medianOf(g.ok, func(r Measurement) Num { return r.ProxyCPUUsPerQuery })
		c.MariaDBCPUUsPerQuery = medianOf(g.ok, func(r Measurement) Num { return r.MariaDBCPUUsPerQuery })
		c.ClientCPUUsPerQuery = medianOf(g.ok, func(r Measurement) Num { return r.ClientCPUUsPerQuery })
		c.ProxySyscallsPerQuery = medianOf(g.ok, func(r Measurement) Num { return r.ProxySyscallsPerQuery })
		c.ProxyFutexPerQuery = medianOf(g.ok, func(r Measurement) Num { return r.ProxyFutexPerQuery })
		c.ProxyContextSwitchesPerQuery = medianOf(g.ok, func(r Measurement) Num { return r.ProxyContextSwitchesPerQuery })
		cells = append(cells, c)
	}
	return cells
}
