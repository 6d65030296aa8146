package reactor

import "testing"

func TestGreetingERR(t *testing.T) {
	pkt := greetingERR(1040, tooManyConnections)
	want := "\x17\x00\x00\x00\xff\x10\x04Too many connections"
	if string(pkt) != want {
		t.Errorf("greetingERR = %q, want %q", pkt, want)
	}
}
