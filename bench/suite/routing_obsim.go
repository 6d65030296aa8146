package suite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// What the routing suite reads from obsim's control endpoint
// (tools/obsim/README.md, "Fault control" and "Statement counters").

// Statement splits of obsim's counters: statements of clients that logged
// in as a proxy (__mysql_client_type=__ob_proxy: obgate) and of the others
// (sysbench straight to a node, also through HAProxy).
const (
	SplitProxy  = "proxy"
	SplitDirect = "direct"
)

// ObsimCounts are statement counts: Statements = Local + Remote; Weak
// counts the weak reads among them.
type ObsimCounts struct {
	Statements uint64 `json:"statements"`
	Local      uint64 `json:"local"`
	Remote     uint64 `json:"remote"`
	Weak       uint64 `json:"weak"`
}

// LocalRatio is Local / (Local + Remote), NaN when nothing was counted.
func (c ObsimCounts) LocalRatio() Num {
	n := c.Local + c.Remote
	if n == 0 {
		return NaN
	}
	return Num(float64(c.Local) / float64(n))
}

func (c *ObsimCounts) add(d ObsimCounts) {
	c.Statements += d.Statements
	c.Local += d.Local
	c.Remote += d.Remote
	c.Weak += d.Weak
}

// ObsimNodeStats are the counts of one node (or of the cluster): all
// clients, and the proxy and direct splits.
type ObsimNodeStats struct {
	ObsimCounts
	Proxy  ObsimCounts `json:"proxy"`
	Direct ObsimCounts `json:"direct"`
}

// Split returns the counts of split (SplitProxy or SplitDirect); any other
// name gets the counts of all clients.
func (s ObsimNodeStats) Split(split string) ObsimCounts {
	switch split {
	case SplitProxy:
		return s.Proxy
	case SplitDirect:
		return s.Direct
	}
	return s.ObsimCounts
}

// ObsimStats is the answer of GET /v1/stats.
type ObsimStats struct {
	Nodes map[string]ObsimNodeStats `json:"nodes"`
	Total ObsimNodeStats            `json:"total"`
}

// ParseObsimStats decodes GET /v1/stats. It checks that the counts add up
// (statements = local + remote in every split, the splits summing to the
// whole), so that a change in obsim's format shows as an error, not as a
// wrong ratio.
func ParseObsimStats(b []byte) (ObsimStats, error) {
	var s ObsimStats
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("obsim stats: %w", err)
	}
	check := func(where string, n ObsimNodeStats) error {
		for _, c := range []struct {
			name string
			c    ObsimCounts
		}{{"all", n.ObsimCounts}, {SplitProxy, n.Proxy}, {SplitDirect, n.Direct}} {
			if c.c.Statements != c.c.Local+c.c.Remote {
				return fmt.Errorf("obsim stats: %s %s: %d statements but %d local + %d remote", where, c.name, c.c.Statements, c.c.Local, c.c.Remote)
			}
		}
		if n.Statements != n.Proxy.Statements+n.Direct.Statements {
			return fmt.Errorf("obsim stats: %s: %d statements but %d proxy + %d direct", where, n.Statements, n.Proxy.Statements, n.Direct.Statements)
		}
		return nil
	}
	if err := check("total", s.Total); err != nil {
		return s, err
	}
	var sum ObsimNodeStats
	for name, n := range s.Nodes {
		if err := check("node "+name, n); err != nil {
			return s, err
		}
		sum.ObsimCounts.add(n.ObsimCounts)
		sum.Proxy.add(n.Proxy)
		sum.Direct.add(n.Direct)
	}
	if len(s.Nodes) > 0 && sum != s.Total {
		return s, fmt.Errorf("obsim stats: the nodes sum to %+v, total is %+v", sum, s.Total)
	}
	return s, nil
}

// ObsimNode is an entry of GET /v1/nodes.
type ObsimNode struct {
	Name string `json:"name"`
	Zone string `json:"zone"`
	Addr string `json:"addr"`
}

// ObsimControl talks to obsim's control endpoint (obsim serve --ctl).
type ObsimControl struct {
	Addr   string // host:port
	Client *http.Client
}

func (c *ObsimControl) do(ctx context.Context, method, path string, out any) error {
	hc := c.Client
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+c.Addr+path, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("obsim control %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("obsim control %s %s: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("obsim control %s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(body)))
	}
	switch o := out.(type) {
	case nil:
		return nil
	case *[]byte:
		*o = body
		return nil
	default:
		if err := json.Unmarshal(body, out); err != nil {
			return fmt.Errorf("obsim control %s %s: %w", method, path, err)
		}
		return nil
	}
}

// ResetStats sets the statement counters to zero (DELETE /v1/stats).
func (c *ObsimControl) ResetStats(ctx context.Context) error {
	return c.do(ctx, http.MethodDelete, "/v1/stats", nil)
}

// Stats reads the statement counters (GET /v1/stats) and returns them
// with the raw answer.
func (c *ObsimControl) Stats(ctx context.Context) (ObsimStats, []byte, error) {
	var body []byte
	if err := c.do(ctx, http.MethodGet, "/v1/stats", &body); err != nil {
		return ObsimStats{}, nil, err
	}
	s, err := ParseObsimStats(body)
	return s, body, err
}

// Nodes lists the cluster's nodes (GET /v1/nodes).
func (c *ObsimControl) Nodes(ctx context.Context) ([]ObsimNode, error) {
	var nodes []ObsimNode
	if err := c.do(ctx, http.MethodGet, "/v1/nodes", &nodes); err != nil {
		return nil, err
	}
	if len(nodes) == 0 {
		return nil, errors.New("obsim control: no nodes")
	}
	return nodes, nil
}

// RemotePlanCost reads the cluster's remote-plan cost (GET
// /v1/remote-plan-cost).
func (c *ObsimControl) RemotePlanCost(ctx context.Context) (time.Duration, error) {
	var body struct {
		Cost string `json:"cost"`
	}
	if err := c.do(ctx, http.MethodGet, "/v1/remote-plan-cost", &body); err != nil {
		return 0, err
	}
	d, err := time.ParseDuration(body.Cost)
	if err != nil {
		return 0, fmt.Errorf("obsim control: remote-plan cost %q: %w", body.Cost, err)
	}
	return d, nil
}
