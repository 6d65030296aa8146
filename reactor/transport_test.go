package reactor

import (
	"runtime"
	"testing"

	"obgate/config"
)

func TestPollerCount(t *testing.T) {
	cfg := config.Default()
	cfg.WorkThreadNum, cfg.AutomaticMatchWorkThread = 128, true
	if got, want := pollerCount(cfg), runtime.GOMAXPROCS(0)/20+1; got != want {
		t.Errorf("automatic: %d pollers, want %d", got, want)
	}
	cfg.WorkThreadNum = 1
	if got := pollerCount(cfg); got != 1 {
		t.Errorf("automatic, work_thread_num 1: %d pollers", got)
	}
	cfg.WorkThreadNum, cfg.AutomaticMatchWorkThread = 6, false
	if got := pollerCount(cfg); got != 6 {
		t.Errorf("work_thread_num 6: %d pollers", got)
	}
}
