package obsim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The control endpoint: the Go fault API over HTTP with JSON bodies, for
// scripts, the demo and `obsim ctl`. Routes (all under /v1):
//
//	GET    /cluster                      cluster, zones, tenants and nodes
//	GET    /nodes                        node states
//	GET    /nodes/{node}                 one node
//	POST   /nodes/{node}/stop            close listener and connections
//	POST   /nodes/{node}/start           listen again
//	POST   /nodes/{node}/hang            accept, never answer
//	POST   /nodes/{node}/unhang
//	POST   /nodes/{node}/slow            {"delay":"200ms"} ("0" removes it)
//	POST   /nodes/{node}/corrupt         {"frames":1}: next OB 2.0 response frames get a bad checksum
//	POST   /nodes/{node}/status          {"status":"INACTIVE","start_service_time":"null","stop_time":"now"}
//	POST   /zones/{zone}/status          {"status":"INACTIVE"}
//	GET    /tables                       tables with partitions and leaders
//	POST   /leader                       {"table":"test.orders","partition":"p1","node":"zone2-1"}
//	GET    /errors                       injected error rules
//	POST   /errors                       an ErrorRule → {"id":1}
//	DELETE /errors[/{id}]                remove all rules or one
//	GET    /remote-plan-cost             {"cost":"1ms"}
//	POST   /remote-plan-cost             {"cost":"2ms"} ("0" turns it off)
//	POST   /reset                        undo every fault
//	GET    /log?node=&since=&limit=      statement log entries (since: last seq seen)
//	DELETE /log                          clear the logs
//	GET    /stats                        statement counters per node and in total
//	DELETE /stats                        set the counters to zero
//
// Time values in status bodies are "null" (NULL), "now", or RFC 3339.

// ClusterState describes the cluster for GET /v1/cluster.
type ClusterState struct {
	Name    string        `json:"name"`
	ID      int64         `json:"id"`
	Version string        `json:"version"`
	MariaDB string        `json:"mariadb"`
	RSList  string        `json:"rslist"`
	Zones   []ZoneState   `json:"zones"`
	Tenants []TenantState `json:"tenants"`
	Nodes   []NodeState   `json:"nodes"`
}

// ZoneState is a zone and its current status.
type ZoneState struct {
	Name   string `json:"name"`
	Region string `json:"region"`
	IDC    string `json:"idc"`
	Type   string `json:"type"`
	Status string `json:"status"`
}

// TenantState is a tenant.
type TenantState struct {
	Name        string   `json:"name"`
	ID          int64    `json:"id"`
	PrimaryZone string   `json:"primary_zone"`
	Zones       []string `json:"zones"`
}

// State returns a snapshot of the cluster.
func (c *Cluster) State() ClusterState {
	st := ClusterState{Name: c.topo.Cluster, ID: c.topo.ClusterID, Version: c.topo.Version,
		MariaDB: c.mariaAddr, RSList: c.RSList()}
	c.mu.Lock()
	for _, z := range c.topo.Zones {
		st.Zones = append(st.Zones, ZoneState{z.Name, z.Region, z.IDC, z.Type, c.zoneStatus[z.Name]})
	}
	for _, t := range c.tenants {
		st.Tenants = append(st.Tenants, TenantState{t.name, t.id, t.primaryZone, append([]string(nil), t.zones...)})
	}
	c.mu.Unlock()
	for _, n := range c.nodeList {
		st.Nodes = append(st.Nodes, n.State())
	}
	return st
}

// StatusChange is the body of POST /v1/nodes/{node}/status; nil fields are
// left unchanged.
type StatusChange struct {
	Status           *string `json:"status,omitempty"`
	StartServiceTime *string `json:"start_service_time,omitempty"`
	StopTime         *string `json:"stop_time,omitempty"`
}

// parseTimeValue reads "null", "now" or RFC 3339.
func parseTimeValue(s string) (time.Time, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "null", "", "0":
		return time.Time{}, nil
	case "now":
		return time.Now(), nil
	}
	return time.Parse(time.RFC3339Nano, s)
}

// ControlHandler returns the HTTP handler of the control API.
func (c *Cluster) ControlHandler() http.Handler {
	mux := http.NewServeMux()
	node := func(w http.ResponseWriter, r *http.Request) *Node {
		n := c.Node(r.PathValue("node"))
		if n == nil {
			writeError(w, http.StatusNotFound, fmt.Errorf("unknown node %q", r.PathValue("node")))
		}
		return n
	}
	mux.HandleFunc("GET /v1/cluster", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, c.State()) })
	mux.HandleFunc("GET /v1/nodes", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, c.State().Nodes) })
	mux.HandleFunc("GET /v1/nodes/{node}", func(w http.ResponseWriter, r *http.Request) {
		if n := node(w, r); n != nil {
			writeJSON(w, n.State())
		}
	})
	mux.HandleFunc("POST /v1/nodes/{node}/{action}", func(w http.ResponseWriter, r *http.Request) {
		n := node(w, r)
		if n == nil {
			return
		}
		var err error
		switch r.PathValue("action") {
		case "stop":
			err = n.Stop()
		case "start":
			err = n.Start()
		case "hang":
			n.Hang()
		case "unhang":
			n.Unhang()
		case "hang-sql":
			n.HangSQL()
		case "unhang-sql":
			n.UnhangSQL()
		case "slow":
			var body struct {
				Delay string `json:"delay"`
			}
			if err = readJSON(r, &body); err == nil {
				var d time.Duration
				if body.Delay != "" && body.Delay != "0" {
					d, err = time.ParseDuration(body.Delay)
				}
				if err == nil {
					n.Slow(d)
				}
			}
		case "corrupt":
			var body struct {
				Frames int `json:"frames"`
			}
			if err = readJSON(r, &body); err == nil {
				n.CorruptFrames(body.Frames)
			}
		case "status":
			var body StatusChange
			if err = readJSON(r, &body); err == nil {
				err = c.applyStatus(n, body)
			}
		default:
			writeError(w, http.StatusNotFound, fmt.Errorf("unknown action %q", r.PathValue("action")))
			return
		}
		if err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		writeJSON(w, n.State())
	})
	mux.HandleFunc("POST /v1/zones/{zone}/status", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Status string `json:"status"`
		}
		err := readJSON(r, &body)
		if err == nil {
			err = c.SetZoneStatus(r.PathValue("zone"), body.Status)
		}
		if err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		writeJSON(w, c.State().Zones)
	})
	mux.HandleFunc("GET /v1/tables", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, c.Tables()) })
	mux.HandleFunc("POST /v1/leader", func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Table, Partition, Node string }
		err := readJSON(r, &body)
		if err == nil {
			err = c.MoveLeader(body.Table, body.Partition, body.Node)
		}
		if err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		writeJSON(w, map[string]string{"table": body.Table, "partition": body.Partition, "leader": body.Node})
	})
	mux.HandleFunc("GET /v1/errors", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, c.ErrorRules()) })
	mux.HandleFunc("POST /v1/errors", func(w http.ResponseWriter, r *http.Request) {
		var rule ErrorRule
		err := readJSON(r, &rule)
		id := 0
		if err == nil {
			id, err = c.InjectError(rule)
		}
		if err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		writeJSON(w, map[string]int{"id": id})
	})
	mux.HandleFunc("DELETE /v1/errors", func(w http.ResponseWriter, r *http.Request) {
		c.ClearErrors()
		writeJSON(w, map[string]bool{"ok": true})
	})
	mux.HandleFunc("DELETE /v1/errors/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.Atoi(r.PathValue("id"))
		if err != nil || !c.RemoveError(id) {
			writeError(w, http.StatusNotFound, fmt.Errorf("no error rule %q", r.PathValue("id")))
			return
		}
		writeJSON(w, map[string]bool{"ok": true})
	})
	mux.HandleFunc("GET /v1/remote-plan-cost", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]string{"cost": c.RemotePlanCost().String()})
	})
	mux.HandleFunc("POST /v1/remote-plan-cost", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Cost string `json:"cost"`
		}
		err := readJSON(r, &body)
		var d time.Duration
		if err == nil {
			if body.Cost == "" {
				err = errors.New(`the body needs "cost"`)
			} else {
				d, err = parseRemotePlanCost(body.Cost)
			}
		}
		if err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		c.SetRemotePlanCost(d)
		writeJSON(w, map[string]string{"cost": c.RemotePlanCost().String()})
	})
	mux.HandleFunc("POST /v1/reset", func(w http.ResponseWriter, r *http.Request) {
		if err := c.Reset(); err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		writeJSON(w, c.State())
	})
	mux.HandleFunc("GET /v1/log", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		var entries []LogEntry
		if name := q.Get("node"); name != "" {
			n := c.Node(name)
			if n == nil {
				writeError(w, http.StatusNotFound, fmt.Errorf("unknown node %q", name))
				return
			}
			entries = n.Log()
		} else {
			entries = c.Log()
		}
		if since, err := strconv.ParseUint(q.Get("since"), 10, 64); err == nil {
			i := 0
			for i < len(entries) && entries[i].Seq <= since {
				i++
			}
			entries = entries[i:]
		}
		if limit, err := strconv.Atoi(q.Get("limit")); err == nil && limit >= 0 && limit < len(entries) {
			entries = entries[len(entries)-limit:]
		}
		if entries == nil {
			entries = []LogEntry{}
		}
		writeJSON(w, entries)
	})
	mux.HandleFunc("DELETE /v1/log", func(w http.ResponseWriter, r *http.Request) {
		c.ClearLogs()
		writeJSON(w, map[string]bool{"ok": true})
	})
	mux.HandleFunc("GET /v1/stats", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, c.Stats()) })
	mux.HandleFunc("DELETE /v1/stats", func(w http.ResponseWriter, r *http.Request) {
		c.ResetStats()
		writeJSON(w, map[string]bool{"ok": true})
	})
	return mux
}

// applyStatus applies a StatusChange.
func (c *Cluster) applyStatus(n *Node, ch StatusChange) error {
	if ch.Status != nil {
		if err := n.SetStatus(*ch.Status); err != nil {
			return err
		}
	}
	if ch.StartServiceTime != nil {
		t, err := parseTimeValue(*ch.StartServiceTime)
		if err != nil {
			return err
		}
		if err := n.SetStartServiceTime(t); err != nil {
			return err
		}
	}
	if ch.StopTime != nil {
		t, err := parseTimeValue(*ch.StopTime)
		if err != nil {
			return err
		}
		if err := n.SetStopTime(t); err != nil {
			return err
		}
	}
	return nil
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}

func readJSON(r *http.Request, v any) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// ControlServer is a running control endpoint.
type ControlServer struct {
	srv *http.Server
	ln  net.Listener
}

// ServeControl serves the control API on addr, which must be a loopback
// address ("127.0.0.1:0" picks a port).
func (c *Cluster) ServeControl(addr string) (*ControlServer, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("obsim: the control endpoint listens on loopback only, not %q", host)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	cs := &ControlServer{ln: ln, srv: &http.Server{Handler: c.ControlHandler(), ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = cs.srv.Serve(ln) }()
	return cs, nil
}

// Addr is the address the endpoint listens on.
func (cs *ControlServer) Addr() string { return cs.ln.Addr().String() }

// Close stops the endpoint.
func (cs *ControlServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return cs.srv.Shutdown(ctx)
}

// ControlClient talks to a control endpoint.
type ControlClient struct {
	// Addr is host:port of the endpoint.
	Addr string
	// HTTP is the client used; nil means one with a 30 s timeout.
	HTTP *http.Client
}

// Do sends a request and decodes a JSON answer into out (when not nil).
func (cc *ControlClient) Do(method, path string, in, out any) error {
	hc := cc.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+cc.Addr+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var e struct{ Error string }
		if json.Unmarshal(raw, &e) == nil && e.Error != "" {
			return errors.New(e.Error)
		}
		return fmt.Errorf("obsim ctl: %s %s: %s", method, path, resp.Status)
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// NodeAction runs stop, start, hang or unhang on a node.
func (cc *ControlClient) NodeAction(node, action string) error {
	return cc.Do(http.MethodPost, "/v1/nodes/"+url.PathEscape(node)+"/"+action, nil, nil)
}

// Corrupt makes a node send its next frames OB 2.0 frames with a bad
// payload checksum.
func (cc *ControlClient) Corrupt(node string, frames int) error {
	return cc.Do(http.MethodPost, "/v1/nodes/"+url.PathEscape(node)+"/corrupt", map[string]int{"frames": frames}, nil)
}

// Slow sets a node's added latency.
func (cc *ControlClient) Slow(node string, d time.Duration) error {
	return cc.Do(http.MethodPost, "/v1/nodes/"+url.PathEscape(node)+"/slow", map[string]string{"delay": d.String()}, nil)
}

// SetStatus changes a node's view state.
func (cc *ControlClient) SetStatus(node string, ch StatusChange) error {
	return cc.Do(http.MethodPost, "/v1/nodes/"+url.PathEscape(node)+"/status", ch, nil)
}

// SetZoneStatus changes a zone's status.
func (cc *ControlClient) SetZoneStatus(zone, status string) error {
	return cc.Do(http.MethodPost, "/v1/zones/"+url.PathEscape(zone)+"/status", map[string]string{"status": status}, nil)
}

// MoveLeader moves a partition's leader.
func (cc *ControlClient) MoveLeader(table, partition, node string) error {
	return cc.Do(http.MethodPost, "/v1/leader", map[string]string{"table": table, "partition": partition, "node": node}, nil)
}

// InjectError adds an error rule and returns its id.
func (cc *ControlClient) InjectError(r ErrorRule) (int, error) {
	var out struct{ ID int }
	err := cc.Do(http.MethodPost, "/v1/errors", r, &out)
	return out.ID, err
}

// RemotePlanCost reads the cluster's remote-plan cost.
func (cc *ControlClient) RemotePlanCost() (time.Duration, error) {
	var out struct{ Cost string }
	if err := cc.Do(http.MethodGet, "/v1/remote-plan-cost", nil, &out); err != nil {
		return 0, err
	}
	return time.ParseDuration(out.Cost)
}

// SetRemotePlanCost sets the cluster's remote-plan cost (0 turns it off).
func (cc *ControlClient) SetRemotePlanCost(d time.Duration) error {
	return cc.Do(http.MethodPost, "/v1/remote-plan-cost", map[string]string{"cost": d.String()}, nil)
}

// Reset undoes every fault.
func (cc *ControlClient) Reset() error { return cc.Do(http.MethodPost, "/v1/reset", nil, nil) }

// Log reads statement log entries: node "" for all, since the last seq
// seen (0 for all), limit 0 for no limit.
func (cc *ControlClient) Log(node string, since uint64, limit int) ([]LogEntry, error) {
	q := url.Values{}
	if node != "" {
		q.Set("node", node)
	}
	if since > 0 {
		q.Set("since", strconv.FormatUint(since, 10))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out []LogEntry
	err := cc.Do(http.MethodGet, "/v1/log?"+q.Encode(), nil, &out)
	return out, err
}

// Stats reads the statement counters.
func (cc *ControlClient) Stats() (Stats, error) {
	var st Stats
	err := cc.Do(http.MethodGet, "/v1/stats", nil, &st)
	return st, err
}

// ResetStats sets the statement counters to zero.
func (cc *ControlClient) ResetStats() error { return cc.Do(http.MethodDelete, "/v1/stats", nil, nil) }

// State reads the cluster state.
func (cc *ControlClient) State() (ClusterState, error) {
	var st ClusterState
	err := cc.Do(http.MethodGet, "/v1/cluster", nil, &st)
	return st, err
}
