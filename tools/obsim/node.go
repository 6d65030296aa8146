package obsim

import (
	"fmt"
	"io"
	"net"
	"obgate/mysqlproto"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// nodeView is what the views report about a node. Guarded by Cluster.mu.
type nodeView struct {
	status       string    // ACTIVE, INACTIVE, DELETING
	startService time.Time // zero: NULL
	stopTime     time.Time // zero: NULL
}

// Node is one simulated OBServer: a listener on its own loopback port whose
// sessions relay SQL to the shared MariaDB.
//
// Fault knobs: Stop closes the listener and every connection (clients then
// see "connection refused"); Start listens again on the same port. Hang
// keeps accepting connections but answers nothing, and stalls existing
// sessions before their next reply, until Unhang. HangSQL is the subtler
// hang of a server whose SQL engine is stuck: it greets and logs clients
// in, but answers no command after the login, until UnhangSQL. Slow adds
// a delay before every handshake and every reply.
type Node struct {
	c       *Cluster
	name    string
	zone    string
	index   int
	port    int
	rpcPort int
	view    nodeView // guarded by c.mu
	log     *stmtLog

	stats   [2]stmtCounters // by client kind (stats.go)
	delay   atomic.Int64    // time.Duration
	corrupt atomic.Int64    // OB 2.0 frames still to send with a wrong payload checksum

	mu       sync.Mutex // guards the fields below
	ln       net.Listener
	running  bool
	closed   bool
	hangCh   chan struct{} // non-nil while hung; closed on release
	sqlHang  chan struct{} // non-nil while commands hang (HangSQL); closed on release
	accepted atomic.Int64  // connections accepted, probes included
	// tlsSessions counts the logins that came over TLS (tls.go).
	tlsSessions atomic.Int64
	sessions    map[*session]struct{}
	wg          sync.WaitGroup
}

func newNode(c *Cluster, name, zone string, index int) *Node {
	return &Node{c: c, name: name, zone: zone, index: index, log: newStmtLog(c.cfg.LogCapacity, &c.logSeq),
		view: nodeView{status: "ACTIVE", startService: c.started}, sessions: map[*session]struct{}{}}
}

// Name is the node name, <zone>-<n>.
func (n *Node) Name() string { return n.name }

// Zone is the node's zone.
func (n *Node) Zone() string { return n.zone }

// Port is the node's SQL port.
func (n *Node) Port() int { return n.port }

// RPCPort is the port the views report as the node's RPC port (nothing
// listens there).
func (n *Node) RPCPort() int { return n.rpcPort }

// Addr is "127.0.0.1:port".
func (n *Node) Addr() string { return listenAddr(n.port) }

// listen opens the listener (port 0 picks one) without accepting yet.
func (n *Node) listen(port int) error {
	ln, err := net.Listen("tcp", listenAddr(port))
	if err != nil {
		return fmt.Errorf("obsim: node %s: %w", n.name, err)
	}
	n.ln = ln
	n.port = ln.Addr().(*net.TCPAddr).Port
	return nil
}

// serve starts accepting on the open listener.
func (n *Node) serve() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.running || n.ln == nil {
		return
	}
	n.running = true
	ln := n.ln
	n.wg.Add(1)
	go n.acceptLoop(ln)
}

func (n *Node) acceptLoop(ln net.Listener) {
	defer n.wg.Done()
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		n.accepted.Add(1)
		s := newSession(n, conn)
		n.mu.Lock()
		if !n.running || n.ln != ln {
			n.mu.Unlock()
			conn.Close()
			continue
		}
		n.sessions[s] = struct{}{}
		n.wg.Add(1)
		n.mu.Unlock()
		go func() {
			defer n.wg.Done()
			s.run()
			n.mu.Lock()
			delete(n.sessions, s)
			n.mu.Unlock()
		}()
	}
}

// Running reports whether the node accepts connections (it may be hung).
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.running
}

// Stop closes the listener and every connection of the node, like a
// killed OBServer. It returns once all sessions have ended.
func (n *Node) Stop() error {
	n.mu.Lock()
	if !n.running {
		n.mu.Unlock()
		return nil
	}
	n.running = false
	if n.ln != nil {
		n.ln.Close()
		n.ln = nil
	}
	for s := range n.sessions {
		s.kill()
	}
	n.mu.Unlock()
	n.wg.Wait()
	n.c.logger.Info("node stopped", "node", n.name)
	return nil
}

// Start listens again on the node's port after Stop.
func (n *Node) Start() error {
	n.mu.Lock()
	if n.running {
		n.mu.Unlock()
		return nil
	}
	if n.closed {
		n.mu.Unlock()
		return fmt.Errorf("obsim: node %s: cluster closed", n.name)
	}
	n.mu.Unlock()
	var err error
	for range 50 { // the port may linger briefly after Stop
		if err = n.listen(n.port); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return err
	}
	n.serve()
	n.c.logger.Info("node started", "node", n.name, "addr", n.Addr())
	return nil
}

// shutdown stops the node for good (Cluster.Close).
func (n *Node) shutdown() {
	n.mu.Lock()
	n.closed = true
	if n.hangCh != nil {
		close(n.hangCh)
		n.hangCh = nil
	}
	if n.sqlHang != nil {
		close(n.sqlHang)
		n.sqlHang = nil
	}
	if !n.running && n.ln != nil { // listening but never served
		n.ln.Close()
		n.ln = nil
	}
	n.mu.Unlock()
	_ = n.Stop()
}

// Hang makes the node accept connections without answering and stalls its
// existing sessions before their next reply, until Unhang (or Reset).
func (n *Node) Hang() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.hangCh == nil && !n.closed {
		n.hangCh = make(chan struct{})
	}
}

// Unhang releases a hung node; stalled sessions carry on.
func (n *Node) Unhang() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.hangCh != nil {
		close(n.hangCh)
		n.hangCh = nil
	}
}

// HangSQL makes the node's SQL stall: new connections get the greeting and
// their login answered, but no command after the login is answered (nor
// is any command of an existing session), until UnhangSQL or Reset. A
// probe that only waits for the greeting finds such a node alive; one
// that runs a statement finds it dead.
func (n *Node) HangSQL() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.sqlHang == nil && !n.closed {
		n.sqlHang = make(chan struct{})
	}
}

// UnhangSQL releases HangSQL; stalled commands are answered.
func (n *Node) UnhangSQL() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.sqlHang != nil {
		close(n.sqlHang)
		n.sqlHang = nil
	}
}

// SQLHung reports whether the node's commands hang.
func (n *Node) SQLHung() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.sqlHang != nil
}

// Accepted counts the connections the node accepted since it was created
// (a handshake probe is one).
func (n *Node) Accepted() int64 { return n.accepted.Load() }

// Hung reports whether the node is hung.
func (n *Node) Hung() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.hangCh != nil
}

// CorruptFrames makes the node send its next count OB 2.0 response frames
// with a wrong payload checksum, as a damaged network or a broken server
// would (plain MySQL and compressed sessions are not affected).
func (n *Node) CorruptFrames(count int) { n.corrupt.Store(int64(count)) }

// corruptWriter flips the last byte of the frames it writes (their payload
// checksum) while its node has corruptions to spend.
type corruptWriter struct {
	w    io.Writer
	node *Node
}

func (c corruptWriter) Write(p []byte) (int, error) {
	if len(p) > mysqlproto.OB20FrameOverhead && c.node.corrupt.Load() > 0 && c.node.corrupt.Add(-1) >= 0 {
		q := append([]byte(nil), p...)
		q[len(q)-1] ^= 0xff
		return c.w.Write(q)
	}
	return c.w.Write(p)
}

// Slow adds d before every handshake and every reply of the node; 0
// removes the delay.
func (n *Node) Slow(d time.Duration) { n.delay.Store(int64(d)) }

// Delay is the delay set by Slow.
func (n *Node) Delay() time.Duration { return time.Duration(n.delay.Load()) }

// gate blocks while the node is hung (for a command, cmd, also while its
// SQL hangs) and then applies its delay. It reports false when done is
// closed first.
func (n *Node) gate(done <-chan struct{}, cmd bool) bool {
	for {
		n.mu.Lock()
		ch := n.hangCh
		if ch == nil && cmd {
			ch = n.sqlHang
		}
		n.mu.Unlock()
		if ch == nil {
			break
		}
		select {
		case <-ch:
		case <-done:
			return false
		}
	}
	if d := n.Delay(); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-done:
			return false
		}
	}
	return true
}

// SetStatus sets the node's status in DBA_OB_SERVERS: "ACTIVE", "INACTIVE"
// or "DELETING" (case-insensitive; other values are written as given).
func (n *Node) SetStatus(status string) error {
	return n.c.change(func() error {
		n.view.status = strings.ToUpper(status)
		return nil
	})
}

// SetStartServiceTime sets START_SERVICE_TIME; the zero time writes NULL
// (a server that has not started serving: ODP's REPLAY or INACTIVE).
func (n *Node) SetStartServiceTime(t time.Time) error {
	return n.c.change(func() error {
		n.view.startService = t
		return nil
	})
}

// SetStopTime sets STOP_TIME; a non-zero time marks the server as being
// stopped (ODP's UPGRADE), zero writes NULL.
func (n *Node) SetStopTime(t time.Time) error {
	return n.c.change(func() error {
		n.view.stopTime = t
		return nil
	})
}

// NodeState is a snapshot of a node for the Go API and the control
// endpoint.
type NodeState struct {
	Name             string     `json:"name"`
	Zone             string     `json:"zone"`
	Region           string     `json:"region"`
	IDC              string     `json:"idc"`
	ZoneType         string     `json:"zone_type"`
	ZoneStatus       string     `json:"zone_status"`
	Addr             string     `json:"addr"`
	RPCPort          int        `json:"rpc_port"`
	Running          bool       `json:"running"`
	Hung             bool       `json:"hung"`
	SQLHung          bool       `json:"sql_hung"`
	Delay            string     `json:"delay"`
	Status           string     `json:"status"`
	StartServiceTime *time.Time `json:"start_service_time"`
	StopTime         *time.Time `json:"stop_time"`
	Sessions         int        `json:"sessions"`
}

// State returns a snapshot of the node.
func (n *Node) State() NodeState {
	z := n.c.zone(n.zone)
	st := NodeState{Name: n.name, Zone: n.zone, Region: z.Region, IDC: z.IDC, ZoneType: z.Type,
		Addr: n.Addr(), RPCPort: n.rpcPort, Delay: n.Delay().String()}
	n.mu.Lock()
	st.Running, st.Hung, st.SQLHung, st.Sessions = n.running, n.hangCh != nil, n.sqlHang != nil, len(n.sessions)
	n.mu.Unlock()
	n.c.mu.Lock()
	st.ZoneStatus = n.c.zoneStatus[n.zone]
	st.Status = n.view.status
	if !n.view.startService.IsZero() {
		t := n.view.startService
		st.StartServiceTime = &t
	}
	if !n.view.stopTime.IsZero() {
		t := n.view.stopTime
		st.StopTime = &t
	}
	n.c.mu.Unlock()
	return st
}

// Log returns the node's statement log, oldest first.
func (n *Node) Log() []LogEntry { return n.log.entries() }

// ClearLog empties the node's statement log.
func (n *Node) ClearLog() { n.log.clear() }
