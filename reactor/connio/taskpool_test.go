package connio

import (
	"sync"
	"testing"
)

// TestTaskPoolReusesWorkers: tasks handed over one after another run on
// the parked worker, not on new goroutines, and run never blocks.
func TestTaskPoolReusesWorkers(t *testing.T) {
	p := NewTaskPool(4)
	done := make(chan struct{})
	for range 1000 {
		p.Run(nil, func() { done <- struct{}{} })
		<-done
	}
	// The first task starts a worker; later ones find it parked, unless
	// the scheduler had not parked it yet.
	if n := p.spawned.Load(); n > 100 {
		t.Fatalf("1000 sequential tasks started %d goroutines", n)
	}
}

// TestTaskPoolNeverBlocks: more tasks at once than idle workers each get
// a goroutine; the idle set stays within maxIdle afterwards.
func TestTaskPoolNeverBlocks(t *testing.T) {
	p := NewTaskPool(2)
	var wg sync.WaitGroup
	release := make(chan struct{})
	wg.Add(50)
	for range 50 {
		p.Run(nil, func() { wg.Done(); <-release })
	}
	wg.Wait() // all 50 run at once: none waited for a worker
	close(release)
	for p.idle.Load() > 2 {
		t.Fatalf("%d idle workers, want at most 2", p.idle.Load())
	}
}
