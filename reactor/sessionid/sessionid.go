// Package sessionid lays out and hands out client session ids.
package sessionid

import (
	"math/rand/v2"
	"sync/atomic"
)

// Client session ids ("cs_id", what a client sees as its connection id in
// the handshake, in SHOW PROCESSLIST and, through an OceanBase server with
// client_session_id_version 2, from CONNECTION_ID()) are laid out like
// ODP's, so that they never collide with the ids servers hand out, nor
// between obgate processes behind one load balancer:
//
//	client_session_id_version 1:  m | proxy_id:8  | upgrade:1 | sequence:22
//	client_session_id_version 2:  m | proxy_id:13 | upgrade:1 | sequence:17
//
// The top bit m tells obgate's ids from the servers': in OceanBase mode it
// is 0, as in ODP, because OBServer session ids have it set; in mysql
// routing mode it is 1, because MySQL and MariaDB thread ids start at 1 and
// count up. proxy_id 0 (the default) takes a random non-zero proxy id at
// start, so that two obgate processes do not share ids unless configured
// to; set proxy_id to make the ids stable across restarts. The upgrade bit
// flips with each hot upgrade: the new process takes its parent's proxy
// id and the other upgrade bit (reactor's Options.SessionIDs), so that the
// sessions it adopts from its parent (reactor/handover.go), which keep their ids, and the
// ones it opens itself never share one.
// Mark is the top bit that tells obgate's ids from the servers' in mysql
// routing mode.
const Mark uint32 = 1 << 31

// Layout is one cs_id layout.
type Layout struct {
	mark    uint32 // the top bit of obgate's ids: Mark or 0
	prefix  uint32 // mark and proxy id, shifted into place
	seqMask uint32
}

// NewLayout builds the layout of version (1 or 2) for proxyID, with the
// top bit set when mark; a proxyID of 0 is replaced by a random one. It
// returns the proxy id used.
func NewLayout(version, proxyID int64, mark, upgrade bool) (Layout, int64) {
	idBits, seqBits := uint(8), uint(22)
	if version == 2 {
		idBits, seqBits = 13, 17
	}
	maxID := int64(1)<<idBits - 1
	if proxyID <= 0 || proxyID > maxID {
		proxyID = 1 + rand.Int64N(maxID)
	}
	l := Layout{seqMask: 1<<seqBits - 1}
	if mark {
		l.mark = Mark
	}
	l.prefix = l.mark | uint32(proxyID)<<(seqBits+1)
	if upgrade {
		l.prefix |= 1 << seqBits
	}
	return l, proxyID
}

// IsClientID reports whether id is laid out as an obgate cs_id (of this or
// another obgate process) rather than a server's id.
func (l Layout) IsClientID(id uint32) bool { return id&Mark == l.mark }

// Generator hands out cs_ids of its Layout; Next, Seq and Resume are safe
// for concurrent use once Layout is set.
type Generator struct {
	Layout Layout
	seq    atomic.Uint32
}

// Next returns the next id of the layout; sequence 0 is skipped. The
// caller checks that no live session holds it.
func (g *Generator) Next() uint32 {
	for {
		seq := g.seq.Add(1) & g.Layout.seqMask
		if seq != 0 {
			return g.Layout.prefix | seq
		}
	}
}

// Seq is the sequence number given last, for a hot upgrade's new process
// to go on from (Resume).
func (g *Generator) Seq() uint32 { return g.seq.Load() }

// Resume goes on from seq, a parent process's Seq.
func (g *Generator) Resume(seq uint32) { g.seq.Store(seq) }
