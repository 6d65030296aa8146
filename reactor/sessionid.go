package reactor

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
// id and the other upgrade bit (Options.SessionIDs), so that the sessions
// it adopts from its parent (handover.go), which keep their ids, and the
// ones it opens itself never share one.
const csIDMark uint32 = 1 << 31

// idLayout is one cs_id layout.
type idLayout struct {
	mark    uint32 // the top bit of obgate's ids: csIDMark or 0
	prefix  uint32 // mark and proxy id, shifted into place
	seqMask uint32
}

// newIDLayout builds the layout of version (1 or 2) for proxyID, with the
// top bit set when mark; a proxyID of 0 is replaced by a random one. It
// returns the proxy id used.
func newIDLayout(version, proxyID int64, mark, upgrade bool) (idLayout, int64) {
	idBits, seqBits := uint(8), uint(22)
	if version == 2 {
		idBits, seqBits = 13, 17
	}
	maxID := int64(1)<<idBits - 1
	if proxyID <= 0 || proxyID > maxID {
		proxyID = 1 + rand.Int64N(maxID)
	}
	l := idLayout{seqMask: 1<<seqBits - 1}
	if mark {
		l.mark = csIDMark
	}
	l.prefix = l.mark | uint32(proxyID)<<(seqBits+1)
	if upgrade {
		l.prefix |= 1 << seqBits
	}
	return l, proxyID
}

// isClientID reports whether id is laid out as an obgate cs_id (of this or
// another obgate process) rather than a server's id.
func (l idLayout) isClientID(id uint32) bool { return id&csIDMark == l.mark }

// sessionIDs hands out cs_ids; safe for concurrent use.
type sessionIDs struct {
	layout idLayout
	seq    atomic.Uint32
}

// next returns the next id of the layout; sequence 0 is skipped. The
// caller checks that no live session holds it.
func (g *sessionIDs) next() uint32 {
	for {
		seq := g.seq.Add(1) & g.layout.seqMask
		if seq != 0 {
			return g.layout.prefix | seq
		}
	}
}
