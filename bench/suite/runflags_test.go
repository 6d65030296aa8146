package suite

import (
	"flag"
	"io"
	"strings"
	"testing"
)

func TestRunFlags(t *testing.T) {
	parse := func(args ...string) (RunConfig, error) {
		var cfg RunConfig
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f := AddRunFlags(fs, &cfg, RunDefaults{Workloads: "a,b", Threads: "1,8", Rounds: 3, BufferPool: "1G"})
		if err := fs.Parse(args); err != nil {
			return cfg, err
		}
		return cfg, f.Resolve()
	}
	cfg, err := parse()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.Workloads, ",") != "a,b" || len(cfg.Threads) != 2 || cfg.Rounds != 3 || cfg.Tables != 8 ||
		cfg.BufferPoolSize != 1<<30 || cfg.LogFileSize != 256<<20 || cfg.HAProxy.Threads != DefaultHAProxySettings.Threads ||
		cfg.ObgateBin != "bin/obgate" || cfg.PlotsDir != "bench/plots" || cfg.Root == "" {
		t.Errorf("defaults: %+v", cfg)
	}
	cfg, err = parse("--threads", "4", "--tables", "2", "--buffer-pool", "256M", "--sysbench", "/usr/bin/sysbench")
	if err != nil || cfg.Threads[0] != 4 || cfg.Tables != 2 || cfg.BufferPoolSize != 256<<20 || cfg.SysbenchBin != "/usr/bin/sysbench" {
		t.Errorf("given: %+v, %v", cfg, err)
	}
	for _, c := range []struct{ flag, value string }{{"threads", "1,x"}, {"buffer-pool", "lots"}, {"log-file-size", "0"}} {
		if _, err := parse("--"+c.flag, c.value); err == nil || !strings.Contains(err.Error(), "--"+c.flag) {
			t.Errorf("--%s %s: %v", c.flag, c.value, err)
		}
	}
}
