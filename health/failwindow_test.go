package health

import (
	"sync"
	"testing"
	"time"
)

func TestBinLengthAsODP(t *testing.T) {
	for _, c := range []struct{ window, bin time.Duration }{
		{120 * time.Second, 8 * time.Second}, {time.Second, time.Second}, {17 * time.Second, 2 * time.Second},
		{time.Hour, 212 * time.Second},
	} {
		if got := binLenFor(c.window); got != c.bin {
			t.Errorf("window %v: bin %v, want %v", c.window, got, c.bin)
		}
	}
}

func TestFailWindowSlides(t *testing.T) {
	var w failWindow
	w.configure(120 * time.Second) // 17 bins of 8 s
	base := time.Unix(1_000_000, 0).UnixNano()
	sec := int64(time.Second)
	for i := range 5 {
		w.add(base + int64(i)*sec)
	}
	if n := w.count(base + 5*sec); n != 5 {
		t.Fatalf("count = %d, want 5", n)
	}
	if n := w.count(base + 200*sec); n != 0 {
		t.Fatalf("events survived past the window: %d", n)
	}
	if n := w.add(base + 200*sec); n != 1 {
		t.Fatalf("count after a late event = %d, want 1", n)
	}
}

func TestFailWindowConcurrentAdds(t *testing.T) {
	var w failWindow
	w.configure(120 * time.Second)
	now := time.Unix(1_000_000, 0).UnixNano()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				w.add(now)
			}
		}()
	}
	wg.Wait()
	if n := w.count(now); n != 8000 {
		t.Fatalf("count = %d, want 8000", n)
	}
}
