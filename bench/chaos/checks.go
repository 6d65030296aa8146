package chaos

import (
	"fmt"
	"time"
)

func (r *run) add(name string, s Status, format string, args ...any) {
	r.res.Checks = append(r.res.Checks, Check{Name: name, Status: s, Detail: fmt.Sprintf(format, args...)})
}

func (r *run) check(name string, ok bool, format string, args ...any) {
	s := Fail
	if ok {
		s = Pass
	}
	r.add(name, s, format, args...)
}

// timed marks the last check added as one on timing.
func (r *run) timed() {
	if n := len(r.res.Checks); n > 0 {
		r.res.Checks[n-1].Timing = true
	}
}

func (r *run) checkNoReadErrors() {
	l := r.res.Load
	r.check("no read fails", l.Reads.Failed == 0, "%d of %d reads failed (%s)",
		l.Reads.Failed, l.Reads.OK+l.Reads.Failed, formatErrors(l.Reads.Errors))
}

func (r *run) checkNoWriteErrors() {
	l := r.res.Load
	r.check("no write fails", l.Writes.Failed == 0, "%d of %d write statements failed (%s)",
		l.Writes.Failed, l.Writes.OK+l.Writes.Failed, formatErrors(l.Writes.Errors))
}

func (r *run) checkLedger() {
	r.check("ledger holds", r.res.Ledger.OK(), "%s", r.res.Ledger)
}

func (r *run) checkLeak() {
	l := r.res.Leak
	if l.OK {
		r.add("nothing leaked", Pass, "%s", l)
		return
	}
	r.add("nothing leaked", Fail, "%s; %v", l, l.Problems)
}

// checkWritesOnlyInFlight: write statements may fail only if they were
// in flight (begun, not yet answered) at one of the moments at.
func (r *run) checkWritesOnlyInFlight(what string, at ...float64) {
	const slack = 0.05 // clock reads around the fault call
	other, inFlight := 0, 0
	for _, f := range r.res.Load.Failures {
		if f.Kind != "write" || f.Worker >= dedicatedWorker {
			continue
		}
		hit := false
		for _, t := range at {
			if f.Start <= t+slack && f.End >= t-slack {
				hit = true
			}
		}
		if hit {
			inFlight++
		} else {
			other++
		}
	}
	detail := fmt.Sprintf("%d write statements failed: %d in flight at %s, %d others", inFlight+other, inFlight, what, other)
	if r.res.Load.FailuresDropped > 0 {
		detail += fmt.Sprintf(" (%d failures not kept one by one)", r.res.Load.FailuresDropped)
		other += r.res.Load.FailuresDropped
	}
	r.check("only writes in flight at "+what+" fail", other == 0, "%s", detail)
}

func fsec(d time.Duration) float64 { return d.Seconds() }

// checkDrain: the server gets no new request later than limit after the
// fault. When the obsim log is blind to the fault (a stopped node refuses
// connections, a hung one logs nothing), only obgate's own metric can
// tell.
func (r *run) checkDrain(w Window, limit time.Duration, why string) {
	defer r.timed()
	name := fmt.Sprintf("no new request to %s later than %.1f s after %s (%s)", r.res.Server, fsec(limit), w.Fault, why)
	switch {
	case w.MetricDrainS != nil:
		r.check(name, *w.MetricDrainS <= fsec(limit), "obgate metric: last request %.2f s after the fault", *w.MetricDrainS)
	case w.DrainS == nil && r.sc.Blind != SeesAll:
		r.add(name, Unknown, "the obsim log cannot show the requests this fault swallows, and obgate has no %s",
			ServerRequestsMetric)
	case w.DrainS == nil:
		r.add(name, Unknown, "no source of per-server requests")
	case w.Source == "obgate metric":
		r.check(name, *w.DrainS <= fsec(limit), "%s: last request %.2f s after the fault", w.Source, *w.DrainS)
	default:
		r.check(name, *w.DrainS <= fsec(limit), "%s: last request %.2f s after the fault, %d during it",
			w.Source, *w.DrainS, w.RequestsDuring)
	}
}

// checkReturn: the server gets traffic again within limit after repair.
func (r *run) checkReturn(w Window, limit time.Duration, why string) {
	defer r.timed()
	name := fmt.Sprintf("traffic returns to %s within %.1f s of the repair (%s)", r.res.Server, fsec(limit), why)
	if w.MetricReturnS != nil {
		r.check(name, *w.MetricReturnS <= fsec(limit), "obgate metric: first request %.2f s after the repair", *w.MetricReturnS)
		return
	}
	if w.Source == "" || (w.ReturnS == nil && r.sc.Blind == BlindBacklog) {
		r.add(name, Unknown, "no source of per-server requests that sees this fault")
		return
	}
	if w.ReturnS == nil {
		r.check(name, false, "%s: no request before the end (%.1f s after the repair)", w.Source, r.endAt-w.RecoverAt)
		return
	}
	note := ""
	if w.DrainS != nil && w.RecoverAt-(w.FaultAt+*w.DrainS) < 1 {
		note = " (it was never drained: it got requests until the repair)"
	}
	r.check(name, *w.ReturnS <= fsec(limit), "%s: first request %.2f s after the repair%s", w.Source, *w.ReturnS, note)
}

// pollSlack is the congestion sampling period: a state can be seen up to
// this late.
const pollSlack = 1.0

// checkListedWithin: SHOW PROXYCONGESTION lists the server within limit
// of the fault (and before its repair).
func (r *run) checkListedWithin(w Window, limit time.Duration, why string) {
	defer r.timed()
	name := fmt.Sprintf("%s listed congested within %.1f s (%s)", r.res.Server, fsec(limit), why)
	c := r.res.Congestion
	if !c.Available {
		r.add(name, Unknown, "%s", c.Unavailable)
		return
	}
	end := w.RecoverAt
	if end < 0 {
		end = r.endAt
	}
	t, ok := c.firstListed(w.FaultAt, end)
	if !ok {
		r.check(name, false, "never listed between the fault and the repair (%.1f s)", end-w.FaultAt)
		return
	}
	r.check(name, t-w.FaultAt <= fsec(limit)+pollSlack, "first listed %.1f s after the fault (sampled each second)", t-w.FaultAt)
}

// checkAliveCongested: listed as alive-congested at some point of the
// fault.
func (r *run) checkAliveCongested(w Window, why string) {
	name := fmt.Sprintf("%s alive-congested during %s (%s)", r.res.Server, w.Fault, why)
	c := r.res.Congestion
	if !c.Available {
		r.add(name, Unknown, "%s", c.Unavailable)
		return
	}
	end := w.RecoverAt + pollSlack
	for _, s := range c.Samples {
		if s.T >= w.FaultAt && s.T < end && s.Alive {
			r.check(name, true, "alive_congested first %.1f s after the fault", s.T-w.FaultAt)
			return
		}
	}
	r.check(name, false, "alive_congested never set between the fault and the repair")
}

// checkNeverListed: the server is never listed during the window.
func (r *run) checkNeverListed(w Window, why string) {
	name := fmt.Sprintf("%s never listed congested (%s)", r.res.Server, why)
	c := r.res.Congestion
	if !c.Available {
		r.add(name, Unknown, "%s", c.Unavailable)
		return
	}
	listed, n := c.listedCount(0, r.endAt+pollSlack)
	r.check(name, listed == 0 && n > 0, "listed in %d of %d samples", listed, n)
}

// checkCleared: after the repair the server stops being listed within
// limit and stays so.
func (r *run) checkCleared(w Window, limit time.Duration, why string) {
	defer r.timed()
	name := fmt.Sprintf("%s no longer listed within %.1f s of the repair (%s)", r.res.Server, fsec(limit), why)
	c := r.res.Congestion
	if !c.Available {
		r.add(name, Unknown, "%s", c.Unavailable)
		return
	}
	t, ok := c.clearedAt(w.RecoverAt)
	if !ok {
		r.check(name, false, "still listed at the end (%.1f s after the repair)", r.endAt-w.RecoverAt)
		return
	}
	r.check(name, t-w.RecoverAt <= fsec(limit)+pollSlack, "cleared %.1f s after the repair", t-w.RecoverAt)
}

// window returns the i-th fault window, or a zero one.
func (r *run) windowAt(i int) (Window, bool) {
	if i < len(r.res.Windows) {
		return r.res.Windows[i], true
	}
	return Window{}, false
}

// checkReached: the load reached the faulted node before the fault, or
// the scenario tested nothing.
func (r *run) checkReached() {
	if r.logs == nil || len(r.res.Windows) == 0 {
		return
	}
	w := r.res.Windows[0]
	n := countIn(r.logs.nodeTimes(r.res.Server), 0, w.FaultAt)
	r.check(fmt.Sprintf("the load reached %s before the fault", r.res.Server), n > 0,
		"%d requests in the %.1f s before it", n, w.FaultAt)
}

// checkNoConnectFailures: every connection the clients opened succeeded.
func (r *run) checkNoConnectFailures() {
	l := r.res.Load
	r.check("no connect fails", l.ConnectFailures == 0, "%d of %d connects failed", l.ConnectFailures, l.Connects)
}

// writeFailuresAllowed are the errors a write may fail with when its
// server breaks under it: its outcome is unknown (ERR 4012, SQLSTATE
// 25000), or its transaction was rolled back with the server (ERR 6002).
var writeFailuresAllowed = map[string]bool{"4012": true, "6002": true}

// checkWritesFailOnlyAsUnknownOrBroken: a write statement fails only with
// an error that says its outcome is unknown or its transaction is gone;
// never with a timeout, a broken connection or another error.
func (r *run) checkWritesFailOnlyAsUnknownOrBroken() {
	l := r.res.Load
	var other int64
	for class, n := range l.Writes.Errors {
		if !writeFailuresAllowed[class] {
			other += n
		}
	}
	r.check("writes fail only as unknown outcome (4012) or broken transaction (6002)", other == 0,
		"%d of %d write statements failed (%s); %d otherwise", l.Writes.Failed, l.Writes.OK+l.Writes.Failed,
		formatErrors(l.Writes.Errors), other)
}
