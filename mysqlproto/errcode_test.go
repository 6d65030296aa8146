package mysqlproto

import "testing"

// The errors obgate answers for OceanBase carry what an OBServer puts on
// the wire (ob_mysql_errno, SQLSTATE; obproxy src/lib/ob_errno.cpp).
func TestOBErrorsAsTheServerSendsThem(t *testing.T) {
	for _, tc := range []struct {
		e           *SQLError
		code        uint16
		state, text string
	}{
		{OBErrTransUnknown.New(), 4012, "25000", "Transaction result is unknown"},
		{OBErrTransUnknown.Detail("server %s broke", "a:1"), 4012, "25000", "Transaction result is unknown: server a:1 broke"},
		{OBErrNotSupported.New("this"), 1235, "0A000", "this not supported"},
		{NewSQLError(OBServerIsInit, "x"), 8001, "08004", "x"},
		{NewSQLError(OBServerIsStopping, "x"), 8002, "08004", "x"},
		{NewSQLError(OBPacketChecksumError, "x"), 8003, "08004", "x"},
		{NewSQLError(OBTimeout, "x"), 4012, "HY000", "x"},
		{NewSQLError(OBTransRollbacked, "x"), 6002, "40000", "x"},
	} {
		e, ok := ParseERR(tc.e.AppendPacket(nil))
		if !ok || e.Code != tc.code || e.SQLState() != tc.state || string(e.Message) != tc.text {
			t.Errorf("%v: decoded %d %q %q (ok %v), want %d %q %q", tc.e, e.Code, e.SQLState(), e.Message, ok, tc.code, tc.state, tc.text)
		}
	}
	if !OBErrTransUnknown.Is(4012, "25000") || OBErrTransUnknown.Is(4012, "HY000") {
		t.Error("OBErrTransUnknown.Is tells OB_TIMEOUT from OB_TRANS_UNKNOWN by SQLSTATE")
	}
}
