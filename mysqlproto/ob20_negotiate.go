package mysqlproto

import (
	"strconv"
	"strings"
)

// OBCapability is OceanBase's own capability set, exchanged as a decimal
// string: the client or proxy asks with the connect attribute
// __proxy_capability_flag, and the server grants a subset in the auth OK as
// the session-state system variable ob_capability_flag.
type OBCapability uint64

// OceanBase capability bits.
const (
	OBCapPartitionTable             OBCapability = 1 << 0
	OBCapChangeUser                 OBCapability = 1 << 1
	OBCapReadWeak                   OBCapability = 1 << 2
	OBCapChecksum                   OBCapability = 1 << 3 // MySQL compressed protocol as a checksum transport
	OBCapSafeWeakRead               OBCapability = 1 << 4
	OBCapPriorityHit                OBCapability = 1 << 5
	OBCapChecksumSwitch             OBCapability = 1 << 6
	OBCapOCJEnableExtraOKPacket     OBCapability = 1 << 7
	OBCapProtocolV2                 OBCapability = 1 << 8 // OB20 framing after login
	OBCapExtraOKPacketForStatistics OBCapability = 1 << 9
	OBCapAbundantFeedback           OBCapability = 1 << 10
	OBCapPLRoute                    OBCapability = 1 << 11
	OBCapProxyReroute               OBCapability = 1 << 12
	OBCapProxySessionSync           OBCapability = 1 << 13
	OBCapProxyFullLinkTracing       OBCapability = 1 << 14
	OBCapProxyNewExtraInfo          OBCapability = 1 << 15
	OBCapProxySessionVarSync        OBCapability = 1 << 16
	OBCapProxyReadStaleFeedback     OBCapability = 1 << 17
	OBCapProxyFullLinkTracingExt    OBCapability = 1 << 18
	OBCapServerDupSessInfoSync      OBCapability = 1 << 19
	OBCapLocalFiles                 OBCapability = 1 << 20
	OBCapClientSessionIDV2          OBCapability = 1 << 21
	OBCapProtocolV2Compress         OBCapability = 1 << 22
	OBCapFeedbackProxy              OBCapability = 1 << 23
	obCapBits                                    = 24
	OBProxyDefaultCapability        OBCapability = 0xEBBB5F // ODP masks every peer's set with this
)

var obCapNames = [obCapBits]string{"PARTITION_TABLE", "CHANGE_USER", "READ_WEAK", "CHECKSUM",
	"SAFE_WEAK_READ", "PRIORITY_HIT", "CHECKSUM_SWITCH", "OCJ_ENABLE_EXTRA_OK_PACKET",
	"OB_PROTOCOL_V2", "EXTRA_OK_PACKET_FOR_STATISTICS", "ABUNDANT_FEEDBACK", "PL_ROUTE",
	"PROXY_REROUTE", "PROXY_SESSION_SYNC", "PROXY_FULL_LINK_TRACING", "PROXY_NEW_EXTRA_INFO",
	"PROXY_SESSION_VAR_SYNC", "PROXY_READ_STALE_FEEDBACK", "PROXY_FULL_LINK_TRACING_EXT",
	"SERVER_DUP_SESS_INFO_SYNC", "LOCAL_FILES", "CLIENT_SESSION_ID_V2",
	"OB_PROTOCOL_V2_COMPRESS", "FEEDBACK_PROXY"}

// Has reports whether every bit of f is set in c.
func (c OBCapability) Has(f OBCapability) bool { return c&f == f }

// String lists the set bits by name, e.g. "OB_PROTOCOL_V2|PROXY_NEW_EXTRA_INFO".
func (c OBCapability) String() string {
	if c == 0 {
		return "0"
	}
	return flagNames(uint64(c), obCapNames[:])
}

// ParseOBCapability parses the decimal form used in connect attributes and
// session variables.
func ParseOBCapability(s string) (OBCapability, bool) {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	return OBCapability(v), err == nil
}

// FormatOBCapability returns the decimal form of c.
func FormatOBCapability(c OBCapability) string { return strconv.FormatUint(uint64(c), 10) }

// Names OceanBase uses during login and in session-state feedback.
const (
	// OBCapabilityFlagVar is the session-state system variable of the auth
	// OK that carries the granted OBCapability.
	OBCapabilityFlagVar = "ob_capability_flag"
	// OBPartitionHitVar is the session-state system variable an OBServer
	// reports after each statement: "1" when the statement's partition has
	// its leader on the server that ran it.
	OBPartitionHitVar = "ob_proxy_partition_hit"

	AttrMySQLClientType     = "__mysql_client_type"
	AttrProxyCapabilityFlag = "__proxy_capability_flag"
	AttrProxyScramble       = "__proxy_scramble"
	AttrClusterName         = "__cluster_name"
	AttrClusterID           = "__cluster_id"
	AttrConnectionID        = "__connection_id"
	AttrProxyConnectionID   = "__proxy_connection_id"
	AttrGlobalVarsVersion   = "__global_vars_version"
	AttrClientIP            = "__client_ip"
	AttrProxyVersion        = "__proxy_version"
	AttrClientSessionID     = "__client_session_id"
	AttrOBClientAttrCapFlag = "__ob_client_attribute_capability_flag"
	ClientTypeOBProxy       = "__ob_proxy"
	ClientTypeOBLibOBClient = "__ob_libobclient"
	ClientTypeOBJDBC        = "__ob_jdbc_client"
)

// OBProxyScramble is the fixed scramble ODP shows its clients by default;
// an OBServer verifies a proxied login against it when the proxy sends no
// __proxy_scramble attribute.
const OBProxyScramble = "aaaaaaaabbbbbbbbbbbb"
