package mysqlproto

import "fmt"

// Error codes obgate sends or reacts to. MySQL server codes (ER_*), client
// codes (CR_*, never sent by servers but used by obgate where a driver would
// report the same condition), and the OceanBase codes that appear in ERR
// packets from OBServer (positive, as the wire carries them).
const (
	ERConCountError          uint16 = 1040
	EROutOfResources         uint16 = 1041
	ERHandshakeError         uint16 = 1043
	ERDBAccessDenied         uint16 = 1044
	ERAccessDenied           uint16 = 1045
	ERNoDB                   uint16 = 1046
	ERUnknownComError        uint16 = 1047
	ERBadDB                  uint16 = 1049
	ERServerShutdown         uint16 = 1053
	ERParseError             uint16 = 1064
	ERNoSuchThread           uint16 = 1094
	ERKillDenied             uint16 = 1095
	ERHostIsBlocked          uint16 = 1129
	ERUnknownError           uint16 = 1105
	ERNotAllowedCommand      uint16 = 1148
	ERNetPacketTooLarge      uint16 = 1153
	ERNetReadError           uint16 = 1158
	ERNetPacketsOutOfOrder   uint16 = 1156
	ERNetReadInterrupted     uint16 = 1159
	ERUnknownSystemVariable  uint16 = 1193
	ERTooManyUserConnections uint16 = 1203
	ERWrongValueForVar       uint16 = 1231
	ERNotSupportedYet        uint16 = 1235
	ERSpecificAccessDenied   uint16 = 1227
	ERUnknownStmtHandler     uint16 = 1243
	ERMaxPreparedStmtCount   uint16 = 1461
	ERQueryInterrupted       uint16 = 1317
	ERConnectionKilled       uint16 = 1927 // MariaDB

	CRUnknownError      uint16 = 2000
	CRConnHostError     uint16 = 2003
	CRServerGoneError   uint16 = 2006
	CRServerLost        uint16 = 2013
	CRMalformedPacket   uint16 = 2027
	CRNetPacketTooLarge uint16 = 2020

	// OBTimeout is OB_TIMEOUT (-4012), which has no MySQL errno and goes
	// out as 4012 with SQLSTATE HY000. 4012 with SQLSTATE 25000 is
	// OB_TRANS_UNKNOWN (OBErrTransUnknown).
	OBTimeout              uint16 = 4012
	OBAllocateMemoryFailed uint16 = 4013
	OBNotMaster            uint16 = 4038
	OBConnectError         uint16 = 4124
	OBErrKillClientSession uint16 = 4401
	OBSessionEntryExist    uint16 = 4661
	OBClusterNoMatch       uint16 = 4666
	OBClusterNotExist      uint16 = 4669
	OBStandbyWeakReadOnly  uint16 = 4688
	OBServiceNameNotFound  uint16 = 4780
	OBNotPrimaryTenant     uint16 = 4782
	OBErrReadOnly          uint16 = 5081
	OBTenantNotInServer    uint16 = 5150
	OBErrReroute           uint16 = 5727
	// OBTransRollbacked: the transaction was rolled back. obgate answers
	// it when the server of an open transaction broke: the server rolls
	// it back, and every later statement of it gets this error until the
	// client ends the transaction.
	OBTransRollbacked            uint16 = 6002
	OBTransFreeRouteNotSupported uint16 = 6279
	OBServerIsInit               uint16 = 8001
	OBServerIsStopping           uint16 = 8002
	OBPacketChecksumError        uint16 = 8003
	OBSendInitSQLError           uint16 = 8006
)

// OBErr is an OceanBase error as an OBServer puts it on the wire: the
// MySQL errno ob_mysql_errno gives it where a mapping exists (its own
// code, positive, where none does), its SQLSTATE and message (obproxy
// src/lib/ob_errno.cpp, src/rpc/obmysql/packet/ompk_error.cpp). Errors
// obgate answers for the server are built from these, so that a client
// written for OceanBase recognises them.
type OBErr struct {
	Errno   uint16
	State   string
	Name    string // the internal name, OB_*
	Message string // a format when the error takes arguments
}

// The OceanBase errors obgate answers itself.
var (
	// OBErrTransUnknown: the transaction's (or autocommit statement's)
	// result is unknown (OB_TRANS_UNKNOWN, -6225: errno 4012, SQLSTATE
	// 25000). obgate answers it when a server broke after a write was sent
	// and before any byte of its answer came back.
	OBErrTransUnknown = OBErr{Errno: 4012, State: "25000", Name: "OB_TRANS_UNKNOWN", Message: "Transaction result is unknown"}
	// OBErrNotSupported: OB_NOT_SUPPORTED (-4007), errno 1235
	// (ER_NOT_SUPPORTED_YET) with SQLSTATE 0A000; the message names what.
	OBErrNotSupported = OBErr{Errno: ERNotSupportedYet, State: "0A000", Name: "OB_NOT_SUPPORTED", Message: "%s not supported"}
)

// New builds the error, formatting its message with args.
func (e OBErr) New(args ...any) *SQLError {
	msg := e.Message
	if len(args) > 0 {
		msg = fmt.Sprintf(msg, args...)
	}
	return &SQLError{Code: e.Errno, State: e.State, Message: msg}
}

// Detail builds the error with the server's message followed by a detail
// of obgate's: "Transaction result is unknown: <detail>".
func (e OBErr) Detail(format string, args ...any) *SQLError {
	return &SQLError{Code: e.Errno, State: e.State, Message: e.Message + ": " + fmt.Sprintf(format, args...)}
}

// Is reports whether an ERR (code and SQLSTATE) is this error.
func (e OBErr) Is(code uint16, state string) bool { return code == e.Errno && state == e.State }

// errorCodes maps each code above to its SQLSTATE and symbolic name.
var errorCodes = map[uint16]struct{ state, name string }{
	ERConCountError:          {"08004", "ER_CON_COUNT_ERROR"},
	ERHandshakeError:         {"08S01", "ER_HANDSHAKE_ERROR"},
	ERDBAccessDenied:         {"42000", "ER_DBACCESS_DENIED_ERROR"},
	ERAccessDenied:           {"28000", "ER_ACCESS_DENIED_ERROR"},
	ERNoDB:                   {"3D000", "ER_NO_DB_ERROR"},
	ERUnknownComError:        {"08S01", "ER_UNKNOWN_COM_ERROR"},
	ERBadDB:                  {"42000", "ER_BAD_DB_ERROR"},
	ERServerShutdown:         {"08S01", "ER_SERVER_SHUTDOWN"},
	EROutOfResources:         {"HY000", "ER_OUT_OF_RESOURCES"},
	ERParseError:             {"42000", "ER_PARSE_ERROR"},
	ERNoSuchThread:           {"HY000", "ER_NO_SUCH_THREAD"},
	ERKillDenied:             {"HY000", "ER_KILL_DENIED_ERROR"},
	ERHostIsBlocked:          {"HY000", "ER_HOST_IS_BLOCKED"},
	ERUnknownError:           {"HY000", "ER_UNKNOWN_ERROR"},
	ERNotAllowedCommand:      {"42000", "ER_NOT_ALLOWED_COMMAND"},
	ERNetPacketTooLarge:      {"08S01", "ER_NET_PACKET_TOO_LARGE"},
	ERNetReadError:           {"08S01", "ER_NET_READ_ERROR"},
	ERNetPacketsOutOfOrder:   {"08S01", "ER_NET_PACKETS_OUT_OF_ORDER"},
	ERNetReadInterrupted:     {"08S01", "ER_NET_READ_INTERRUPTED"},
	ERUnknownSystemVariable:  {"HY000", "ER_UNKNOWN_SYSTEM_VARIABLE"},
	ERTooManyUserConnections: {"42000", "ER_TOO_MANY_USER_CONNECTIONS"},
	ERWrongValueForVar:       {"42000", "ER_WRONG_VALUE_FOR_VAR"},
	ERNotSupportedYet:        {"42000", "ER_NOT_SUPPORTED_YET"},
	ERSpecificAccessDenied:   {"42000", "ER_SPECIFIC_ACCESS_DENIED_ERROR"},
	ERUnknownStmtHandler:     {"HY000", "ER_UNKNOWN_STMT_HANDLER"},
	ERMaxPreparedStmtCount:   {"42000", "ER_MAX_PREPARED_STMT_COUNT_REACHED"},
	ERQueryInterrupted:       {"70100", "ER_QUERY_INTERRUPTED"},
	ERConnectionKilled:       {"70100", "ER_CONNECTION_KILLED"},

	CRUnknownError:      {"HY000", "CR_UNKNOWN_ERROR"},
	CRConnHostError:     {"HY000", "CR_CONN_HOST_ERROR"},
	CRServerGoneError:   {"HY000", "CR_SERVER_GONE_ERROR"},
	CRServerLost:        {"HY000", "CR_SERVER_LOST"},
	CRMalformedPacket:   {"HY000", "CR_MALFORMED_PACKET"},
	CRNetPacketTooLarge: {"HY000", "CR_NET_PACKET_TOO_LARGE"},

	OBTimeout:                    {"HY000", "OB_TIMEOUT"},
	OBAllocateMemoryFailed:       {"HY001", "OB_ALLOCATE_MEMORY_FAILED"},
	OBNotMaster:                  {"HY000", "OB_NOT_MASTER"},
	OBConnectError:               {"HY000", "OB_CONNECT_ERROR"},
	OBErrKillClientSession:       {"HY000", "OB_ERR_KILL_CLIENT_SESSION"},
	OBSessionEntryExist:          {"HY000", "OB_SESSION_ENTRY_EXIST"},
	OBClusterNoMatch:             {"HY000", "OB_CLUSTER_NO_MATCH"},
	OBClusterNotExist:            {"HY000", "OB_CLUSTER_NOT_EXIST"},
	OBStandbyWeakReadOnly:        {"HY000", "OB_STANDBY_WEAK_READ_ONLY"},
	OBServiceNameNotFound:        {"HY000", "OB_SERVICE_NAME_NOT_FOUND"},
	OBNotPrimaryTenant:           {"HY000", "OB_NOT_PRIMARY_TENANT"},
	OBErrReadOnly:                {"25000", "OB_ERR_READ_ONLY"},
	OBTenantNotInServer:          {"HY000", "OB_TENANT_NOT_IN_SERVER"},
	OBErrReroute:                 {"HY000", "OB_ERR_REROUTE"},
	OBTransRollbacked:            {"40000", "OB_TRANS_ROLLBACKED"},
	OBTransFreeRouteNotSupported: {"HY000", "OB_TRANS_FREE_ROUTE_NOT_SUPPORTED"},
	OBServerIsInit:               {"08004", "OB_SERVER_IS_INIT"},
	OBServerIsStopping:           {"08004", "OB_SERVER_IS_STOPPING"},
	OBPacketChecksumError:        {"08004", "OB_PACKET_CHECKSUM_ERROR"},
	OBSendInitSQLError:           {"HY000", "OB_SEND_INIT_SQL_ERROR"},
}

// SQLStateOf returns the SQLSTATE for code, HY000 when the table lacks it.
func SQLStateOf(code uint16) string {
	if e, ok := errorCodes[code]; ok {
		return e.state
	}
	return "HY000"
}

// ErrorName returns the symbolic name of code, or "" when unknown.
func ErrorName(code uint16) string { return errorCodes[code].name }
