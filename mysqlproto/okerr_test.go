package mysqlproto

import (
	"bytes"
	"testing"
)

func TestOKRoundTrip(t *testing.T) {
	state := AppendSystemVariableState(nil, "autocommit", "OFF")
	state = AppendSchemaState(state, "test")
	ok := OK{AffectedRows: 300, LastInsertID: 1 << 30, Status: StatusAutocommit, Warnings: 2,
		Info: []byte("Rows matched"), SessionState: state}
	b := AppendOK(nil, ok, ClientSessionTrack)
	got, good := ParseOK(b, ClientSessionTrack)
	if !good || got.AffectedRows != 300 || got.LastInsertID != 1<<30 || got.Warnings != 2 ||
		!got.Status.Has(StatusSessionStateChange|StatusAutocommit) ||
		string(got.Info) != "Rows matched" || !bytes.Equal(got.SessionState, state) {
		t.Fatalf("got %+v", got)
	}
	it := SessionStates(got.SessionState)
	typ, data, more := it.Next()
	if !more || typ != SessionTrackSystemVariables {
		t.Fatal("first entry")
	}
	name, value, _, good := ParseSystemVariable(data, 0)
	if !good || string(name) != "autocommit" || string(value) != "OFF" {
		t.Fatalf("var %q=%q", name, value)
	}
	typ, data, more = it.Next()
	if !more || typ != SessionTrackSchema {
		t.Fatal("second entry")
	}
	if s, _, _ := ReadLenEncString(data, 0); string(s) != "test" {
		t.Fatalf("schema %q", s)
	}
	if _, _, more = it.Next(); more || it.Malformed() {
		t.Fatal("expected clean end")
	}
	// Without SESSION_TRACK the info is the rest of the packet.
	b = AppendOK(nil, OK{Info: []byte("hi")}, 0)
	if got, _ := ParseOK(b, 0); string(got.Info) != "hi" {
		t.Fatalf("info %q", got.Info)
	}
	for i := range 7 {
		if _, good := ParseOK(AppendOK(nil, ok, ClientSessionTrack)[:i], ClientSessionTrack); good && i < 7 {
			t.Fatalf("truncated OK of %d bytes accepted", i)
		}
	}
}

func TestERRAndEOF(t *testing.T) {
	b := AppendERR(nil, 1045, "28000", "Access denied")
	e, ok := ParseERR(b)
	if !ok || e.Code != 1045 || e.SQLState() != "28000" || string(e.Message) != "Access denied" {
		t.Fatalf("got %+v", e)
	}
	se := NewSQLError(ERTooManyUserConnections, "Too many sessions")
	if se.State != "42000" || se.Error() != "ERROR 1203 (42000): Too many sessions" {
		t.Fatalf("got %v", se)
	}
	eof, ok := ParseEOF(AppendEOF(nil, 3, StatusMoreResultsExists))
	if !ok || eof.Warnings != 3 || eof.Status != StatusMoreResultsExists {
		t.Fatalf("eof %+v", eof)
	}
}

// TestErrorTableComplete checks every listed code has a state and a name.
func TestErrorTableComplete(t *testing.T) {
	for code, e := range errorCodes {
		if len(e.state) != 5 || e.name == "" {
			t.Errorf("code %d: state %q name %q", code, e.state, e.name)
		}
	}
	if SQLStateOf(65000) != "HY000" {
		t.Fatal("unknown codes must map to HY000")
	}
}
