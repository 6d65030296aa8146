package suite

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// Environment describes the machine and the software a run used.
type Environment struct {
	Date           string `json:"date"`
	Host           string `json:"host"`
	NProc          int    `json:"nproc"`
	CPUModel       string `json:"cpu_model"`
	Kernel         string `json:"kernel"`
	GoVersion      string `json:"go_version"`
	MariaDBVersion string `json:"mariadb_version"`
	HAProxyVersion string `json:"haproxy_version,omitempty"`
	Sysbench       string `json:"sysbench_version"`
	ObgateCommit   string `json:"obgate_commit,omitempty"`
	ObgateVersion  string `json:"obgate_version,omitempty"`
}

// CollectEnvironment fills in what can be read without a server; the caller
// adds the MariaDB version and obgate's.
func CollectEnvironment(ctx context.Context, sysbenchBin, haproxyBin string) Environment {
	e := Environment{
		Date:      time.Now().UTC().Format(time.RFC3339),
		NProc:     runtime.NumCPU(),
		CPUModel:  cpuModel(),
		Kernel:    strings.TrimSpace(readFile("/proc/sys/kernel/osrelease")),
		GoVersion: runtime.Version(),
		Sysbench:  firstLine(commandOutput(ctx, sysbenchBin, "--version")),
	}
	e.Host, _ = os.Hostname()
	if haproxyBin != "" {
		e.HAProxyVersion = firstLine(commandOutput(ctx, haproxyBin, "-v"))
	}
	return e
}

// GitCommit returns the short commit of the work tree at dir, with
// "-dirty" when it has changes, or "" when there is none.
func GitCommit(ctx context.Context, dir string) string {
	c := strings.TrimSpace(commandOutput(ctx, "git", "-C", dir, "rev-parse", "--short", "HEAD"))
	if c == "" || strings.ContainsAny(c, " \n") {
		return ""
	}
	if st := commandOutput(ctx, "git", "-C", dir, "status", "--porcelain", "--untracked-files=no"); strings.TrimSpace(st) != "" {
		c += "-dirty"
	}
	return c
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

// commandOutput runs a short command and returns its combined output, or ""
// if it fails.
func commandOutput(ctx context.Context, name string, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return ""
	}
	return string(out)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
