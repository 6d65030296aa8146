package health

import (
	"testing"

	"obgate/internal/failure"
	"obgate/mysqlproto"
)

func TestAliveFailure(t *testing.T) {
	for _, c := range []struct {
		o    Outcome
		want string
	}{
		{Outcome{}, ""},
		{Outcome{Code: 1064}, ""},
		{Outcome{Code: mysqlproto.OBServerIsStopping}, "err_8002"},
		{Outcome{Code: mysqlproto.OBServerIsInit, Failure: failure.HeldERR}, "err_8001"},
		{Outcome{Code: mysqlproto.OBPacketChecksumError}, "err_8003"},
		{Outcome{Code: mysqlproto.OBAllocateMemoryFailed}, "err_4013"},
		{Outcome{Code: mysqlproto.OBNotMaster}, ""},
		{Outcome{Code: mysqlproto.OBTenantNotInServer, Failure: failure.HeldERR}, ""},
		{Outcome{Failure: failure.Transport}, "server_transport"},
		{Outcome{Failure: failure.Protocol}, "server_protocol"},
		{Outcome{Failure: failure.Timeout}, "timeout"},
		{Outcome{Failure: failure.Transport, ClosedHere: true}, ""},
		{Outcome{Failure: failure.Timeout, ClosedHere: true}, ""},
		{Outcome{Failure: failure.Transport, ClosedHere: true, PeerGone: true}, "server_transport"},
		{Outcome{Failure: failure.Client}, ""},
	} {
		if got := AliveFailure(c.o); got != c.want {
			t.Errorf("AliveFailure(%+v) = %q, want %q", c.o, got, c.want)
		}
	}
}
