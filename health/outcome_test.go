package health

import (
	"testing"

	"obgate/mysqlproto"
	"obgate/route"
)

func TestAliveFailure(t *testing.T) {
	for _, c := range []struct {
		o    Outcome
		want string
	}{
		{Outcome{}, ""},
		{Outcome{Code: 1064}, ""},
		{Outcome{Code: mysqlproto.OBServerIsStopping}, "err_8002"},
		{Outcome{Code: mysqlproto.OBServerIsInit, Failure: route.FailHeldERR}, "err_8001"},
		{Outcome{Code: mysqlproto.OBPacketChecksumError}, "err_8003"},
		{Outcome{Code: mysqlproto.OBAllocateMemoryFailed}, "err_4013"},
		{Outcome{Code: mysqlproto.OBNotMaster}, ""},
		{Outcome{Code: mysqlproto.OBTenantNotInServer, Failure: route.FailHeldERR}, ""},
		{Outcome{Failure: route.FailTransport}, "server_transport"},
		{Outcome{Failure: route.FailProtocol}, "server_protocol"},
		{Outcome{Failure: route.FailTimeout}, "timeout"},
		{Outcome{Failure: route.FailTransport, ClosedHere: true}, ""},
		{Outcome{Failure: route.FailTimeout, ClosedHere: true}, ""},
		{Outcome{Failure: route.FailTransport, ClosedHere: true, PeerGone: true}, "server_transport"},
		{Outcome{Failure: route.FailClient}, ""},
	} {
		if got := AliveFailure(c.o); got != c.want {
			t.Errorf("AliveFailure(%+v) = %q, want %q", c.o, got, c.want)
		}
	}
}
