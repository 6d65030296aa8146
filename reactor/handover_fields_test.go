package reactor

import (
	"path"
	"reflect"
	"slices"
	"strings"
	"testing"

	"obgate/reactor/backend"
	"obgate/reactor/handover/handovertest"
	"obgate/reactor/prepared"
	"obgate/reactor/sessvars"
)

// handoverLedger says, for every type whose values make up a session that
// a hot upgrade hands over, what becomes of each field:
//
//	"state: P; Q"  travels as the handover.State fields at paths P, Q
//	               (Servers[].Addr: the Addr of each element)
//	"see: T"       a value of type T, whose fields have their own entries
//	"derived: ..." rebuilt in the new process from what travels, or from
//	               the descriptors
//	"not: ..."     need not travel, and why
//
// A field added to one of these types fails TestHandoverLedgerCoversFields
// until it is given an entry: either it travels (package handover, whose
// handovertest.Sample sets it) or the entry says why it need not.
var handoverLedger = map[reflect.Type]map[string]string{
	reflect.TypeFor[Session](): {
		"srv":       "not: the adopting process's own server",
		"id":        "state: SessionID",
		"lifecycle": "see: lifecycle",
		"client":    "see: clientConn",
		"caps":      "state: Caps",
		"status":    "state: Status",
		"stmts":     "see: prepared.Table",
		"txnBroken": "not: a session whose transaction broke does not move (handoverReady)",
		"identity":  "state: User; OB.Cluster; OB.Tenant; OB.IdentityUser; OB.ClusterID",
		"admin":     "not: administrator sessions do not move (handoverKind)",
		"cfg":       "not: the adopting process's configuration snapshot",
		"series":    "see: stmtSeries",
		"scanner":   "not: no answer is being read at an idle point",
		"st":        "not: a statement exists while a command runs; sessions move at idle points",
		"side":      "state: Mode",
		"ob":        "see: obSession",
		"my":        "see: mysqlSide",
		"servers":   "see: backend.Set",
		"published": "see: published",
		"activity":  "see: activity",
		"drv":       "not: the adopting process's transport, made for the client descriptor",
	},
	reflect.TypeFor[stmtSeries](): {
		"tm":      "not: found again from cluster and tenant on the next statement",
		"cluster": "state: OB.Cluster",
		"tenant":  "state: OB.Tenant",
	},
	reflect.TypeFor[lifecycle](): {
		"state":          "not: an adopted session starts idle",
		"closeReq":       "not: a session with a close requested does not move (handoverReady)",
		"killsPending":   "not: the old process's KILLs in flight; a break one of them causes after the move counts as the server's",
		"torndown":       "not: a session being torn down does not move",
		"endWhy":         "not: set when a session ends",
		"loggedIn":       "derived: an adopted session is logged in",
		"handoverFailed": "not: a session the new process refused stays in the old one",
	},
	reflect.TypeFor[clientConn](): {
		"io":            "not: the adopting process's transport, made for the client descriptor",
		"netClient":     "not: as client",
		"ob20Client":    "not: OB 2.0 clients do not move (handoverKind)",
		"rawConn":       "derived: the client descriptor",
		"obCaps":        "not: OB 2.0 clients do not move (handoverKind)",
		"replySeq":      "not: starts again at every command",
		"closer":        "derived: the client descriptor",
		"transportName": "derived: the adopting process's transport",
		"addr":          "derived: the client descriptor's peer address",
		"connectedAt":   "state: ConnectedAt",
	},
	reflect.TypeFor[published](): {
		"mu":         "not: a lock",
		"db":         "state: DB",
		"user":       "state: User",
		"varsPub":    "derived: publishOB",
		"serversPub": "derived: publishOB",
	},
	reflect.TypeFor[activity](): {
		"transCount":  "state: TransCount",
		"stmtCount":   "state: StmtCount",
		"lastActive":  "state: LastActive",
		"bytesIn":     "state: BytesIn",
		"bytesOut":    "state: BytesOut",
		"waitTimeout": "derived: updateWaitTimeout from OB.Sys (OceanBase mode; mysql mode has none)",
		"inTrans":     "not: a session inside a transaction does not move (handoverReady)",
		"curCmd":      "not: no command runs at an idle point",
	},
	reflect.TypeFor[prepared.Table](): {
		"ByID":    "state: Stmts",
		"Last":    "state: StmtLast",
		"Pending": "not: no prepare is in progress at an idle point",
		"free":    "not: memory for the next prepares",
		"Request": "not: the prepare being served",
		"Closing": "not: scratch for a COM_STMT_CLOSE",
		"Kept":    "not: kept statements (reactor/prepared) are not reused by the new process",
		"gen":     "not: the generation of kept answers, which do not move",
	},
	reflect.TypeFor[prepared.Stmt](): {
		"SQL":     "state: Stmts[].SQL",
		"Params":  "state: Stmts[].Params",
		"Columns": "state: Stmts[].Columns",
		"Types":   "state: Stmts[].Types",
		"Home":    "state: Stmts[].Home",
		"Kind":    "derived: read again from sql",
		"Facts":   "derived: read again from sql",
		"Answer":  "not: kept answers do not move",
		"Capture": "not: kept answers do not move",
		"gen":     "not: kept answers do not move",
	},
	reflect.TypeFor[obSession](): {
		"s":             "not: the session itself",
		"cluster":       "derived: looked up by OB.Cluster",
		"tenant":        "state: OB.Tenant",
		"clientLogin":   "state: OB.Login",
		"scramble":      "state: OB.Scramble",
		"proxySessID":   "derived: from the listener's address and SessionID",
		"notReadyFirst": "not: per statement",
		"vars":          "see: Vars",
		"heldBegin":     "not: a session with a held BEGIN does not move (handoverReady)",
		"begunWith":     "not: per statement",
		"healthGen":     "not: the next plan reads the generation again",
		"pinned":        "not: a pinned session does not move (handoverReady)",
		"trxSpecified":  "not: a session after SET TRANSACTION does not move (handoverReady)",
		"feedback":      "derived: bound by adoptOB",
		"publishedDB":   "derived: publishOB",
		"stateScratch":  "not: scratch",
		"okScratch":     "not: scratch",
		"snap":          "derived: publishOB",
		"routeBuf":      "not: scratch",
		"route":         "not: the statement being routed and what its plan used; none at an idle point",
		"timeZone":      "derived: updateTimeZone from OB.Sys",
		"timeZoneText":  "derived: updateTimeZone from OB.Sys",
	},
	reflect.TypeFor[sessvars.Vars](): {
		"ver":          "derived: counts changes; restarts as the variables are set again",
		"db":           "state: OB.DB",
		"dbVer":        "derived: as ver",
		"sys":          "state: OB.Sys",
		"sysVer":       "derived: as ver",
		"user":         "state: OB.User",
		"userVer":      "derived: as ver",
		"hot":          "state: OB.Hot",
		"hotSet":       "state: OB.Hot",
		"multiStmt":    "state: OB.MultiStmt",
		"multiStmtVer": "state: OB.MultiStmtSet",
		"routing":      "derived: noted as each variable is set again",
	},
	reflect.TypeFor[mysqlSide](): {
		"s":    "not: the session itself",
		"move": "see: moveLogin",
	},
	reflect.TypeFor[moveLogin](): {
		"scramble":        "state: Move.Scramble",
		"resp":            "state: Move.Login",
		"stage1":          "state: Move.Stage1",
		"caps":            "state: Move.Caps",
		"stateful":        "state: Move.Stateful",
		"useDB":           "not: a USE in progress; none at an idle point",
		"using":           "not: as useDB",
		"canMove":         "derived: published by commandDone at the adoption",
		"closedOnPurpose": "not: a session whose server closed on purpose does not move (handoverReady)",
	},
	reflect.TypeFor[backend.Set](): {
		"conns":   "see: backend.Conn",
		"last":    "derived: mysql mode: the one server session, used again at the adoption; OceanBase mode: server sessions stay behind, the new process opens its own and replays the variables",
		"current": "derived: as last",
		"shared":  "derived: as last",
	},
	reflect.TypeFor[backend.Conn](): {
		"NetConn":    "derived: the server descriptor (mysql mode)",
		"Sock":       "derived: the server descriptor",
		"Addr":       "state: Servers[].Addr",
		"TLS":        "not: TLS server sessions do not move (handoverReady)",
		"PendingTLS": "not: as tls",
		"ThreadID":   "state: Servers[].ThreadID",
		"Closed":     "not: a lost server session does not move (handoverReady)",
		"PeerGone":   "not: as closed",
		"Owner":      "derived: registered anew",
		"reg":        "derived: registered anew",
		"watchToken": "derived: registered anew",
		"OB20":       "not: OB 2.0 server sessions do not move (handoverReady)",
		"Comp":       "not: compressed server sessions do not move (handoverReady)",
		"Extra":      "not: OB 2.0 only",
		"OBCaps":     "not: OB 2.0 only",
		"Status":     "state: Servers[].Status",
		"Sync":       "not: OceanBase mode's, whose server sessions stay behind",
		"Stmts":      "state: Servers[].Stmts",
		"LastUsed":   "state: Servers[].LastUsed",
		"Current":    "derived: the only server session is the current one",
		"sio":        "derived: made for the server descriptor",
		"Health":     "derived: the adopting process's health entry for Addr",
	},
}

// TestHandoverLedgerCoversFields fails when a field of a type a session is
// made of has no entry, or an entry names a field that is gone.
func TestHandoverLedgerCoversFields(t *testing.T) {
	byName := map[string]reflect.Type{}
	for ty := range handoverLedger {
		byName[ty.Name()] = ty
		byName[path.Base(ty.PkgPath())+"."+ty.Name()] = ty
	}
	for ty, entries := range handoverLedger {
		fields := map[string]bool{}
		for i := range ty.NumField() {
			f := ty.Field(i)
			fields[f.Name] = true
			entry, ok := entries[f.Name]
			if !ok {
				t.Errorf("%s.%s is neither handed over nor said to need not be: give it an entry in handoverLedger", ty.Name(), f.Name)
				continue
			}
			if see, ok := strings.CutPrefix(entry, "see: "); ok {
				if _, known := byName[see]; !known {
					t.Errorf("%s.%s: %q has no ledger of its own", ty.Name(), f.Name, see)
				}
				continue
			}
			kind, _, _ := strings.Cut(entry, ":")
			if !slices.Contains([]string{"state", "derived", "not"}, kind) {
				t.Errorf("%s.%s: entry %q says none of state, see, derived, not", ty.Name(), f.Name, entry)
			}
		}
		for name := range entries {
			if !fields[name] {
				t.Errorf("handoverLedger names %s.%s, which %s no longer has", ty.Name(), name, ty.Name())
			}
		}
	}
}

// TestHandoverLedgerMatchesState checks the ledger against the encoded
// state: every "state:" path is a field of handover.State, and every
// field of handover.State is some ledger entry's. (That the round trip
// covers every field is the handover package's own test.)
func TestHandoverLedgerMatchesState(t *testing.T) {
	leaves := handovertest.Leaves()
	covered := map[string]bool{}
	for ty, entries := range handoverLedger {
		for name, entry := range entries {
			paths, ok := strings.CutPrefix(entry, "state: ")
			if !ok {
				continue
			}
			for _, p := range strings.Split(paths, "; ") {
				found := false
				for leaf := range leaves {
					if leaf == p || strings.HasPrefix(leaf, p+".") || strings.HasPrefix(leaf, p+"[].") {
						covered[leaf], found = true, true
					}
				}
				if !found {
					t.Errorf("%s.%s: %q is no field of handover.State", ty.Name(), name, p)
				}
			}
		}
	}
	for leaf := range leaves {
		if !covered[leaf] {
			t.Errorf("handover.State.%s is encoded but no session field's ledger entry says it travels there", leaf)
		}
	}
}
