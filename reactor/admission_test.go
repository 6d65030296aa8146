package reactor

import (
	"testing"

	"obgate/config"
	"obgate/mysqlproto"
)

// TestAdmission holds both routing modes' logins to one refusal rule: a
// draining obgate answers ERR 1053, a connection over client_max_connections
// ERR 1203, anything else is let in.
func TestAdmission(t *testing.T) {
	cfg := config.Default()
	cfg.ClientMaxConnections = 2
	srv := &Server{}
	if r := srv.admission(2, cfg); r != nil {
		t.Fatalf("2nd of 2 connections refused: %v", r.reply)
	}
	if r := srv.admission(3, cfg); r == nil || r.reply.Code != mysqlproto.ERTooManyUserConnections || r.source != QuitLimit {
		t.Errorf("3rd of 2 connections: %+v, want ERR 1203 and QuitLimit", r)
	}
	cfg.ClientMaxConnections = 0
	if r := srv.admission(1<<20, cfg); r != nil {
		t.Errorf("no connection limit, yet refused: %v", r.reply)
	}
	srv.draining.Store(true)
	if r := srv.admission(1, cfg); r == nil || r.reply.Code != mysqlproto.ERServerShutdown || r.source != QuitShutdown {
		t.Errorf("while draining: %+v, want ERR 1053 and QuitShutdown", r)
	}
}
