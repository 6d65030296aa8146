package suite

import "time"

// cleanups are what a suite run undoes before it returns, whatever
// happens (Ctrl-C included): the processes it started, its temporary
// files.
type cleanups []func()

// add has run call f.
func (c *cleanups) add(f func()) { *c = append(*c, f) }

// run calls what was added, the last added first.
func (c *cleanups) run() {
	for i := len(*c) - 1; i >= 0; i-- {
		(*c)[i]()
	}
}

// stopping returns what stops p, giving it 10 s before it is killed, and
// logs a failure to stop it as "stopping name: ...".
func stopping(p *Process, name string, logf func(string, ...any)) func() {
	return func() {
		if err := p.Stop(10 * time.Second); err != nil {
			logf("stopping %s: %v", name, err)
		}
	}
}
