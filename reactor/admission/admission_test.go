package admission

import (
	"net/netip"
	"testing"
	"time"
)

func TestAdminFailuresBlockAfterLimit(t *testing.T) {
	var f AdminFailures
	src := netip.MustParseAddr("10.0.0.7")
	now := time.Unix(1000, 0)
	for i := range AdminFailLimit - 1 {
		f.Fail(src, now.Add(time.Duration(i)*time.Second))
	}
	if d := f.BlockedFor(src, now.Add(5*time.Second)); d != 0 {
		t.Fatalf("blocked after %d failures: %v", AdminFailLimit-1, d)
	}
	f.Fail(src, now.Add(5*time.Second))
	if d := f.BlockedFor(src, now.Add(6*time.Second)); d <= 0 || d > adminBlockFor {
		t.Fatalf("after %d failures blocked for %v, want up to %v", AdminFailLimit, d, adminBlockFor)
	}
	if d := f.BlockedFor(netip.MustParseAddr("10.0.0.8"), now); d != 0 {
		t.Errorf("another address is blocked for %v", d)
	}
	if d := f.BlockedFor(src, now.Add(5*time.Second+adminBlockFor)); d != 0 {
		t.Errorf("still blocked once the block ended: %v", d)
	}
}

func TestAdminFailuresWindowEnds(t *testing.T) {
	var f AdminFailures
	src := netip.MustParseAddr("10.0.0.7")
	now := time.Unix(1000, 0)
	for i := range AdminFailLimit - 1 {
		f.Fail(src, now.Add(time.Duration(i)*time.Second))
	}
	// The next failure comes after the window: it starts a new one.
	later := now.Add(adminFailWindow + 10*time.Second)
	f.Fail(src, later)
	if d := f.BlockedFor(src, later); d != 0 {
		t.Errorf("failures spread over more than the window blocked the source for %v", d)
	}
}

func TestIPv6CountsBySlash64(t *testing.T) {
	var f AdminFailures
	now := time.Unix(1000, 0)
	for i := range AdminFailLimit {
		f.Fail(netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 15: byte(i)}), now)
	}
	if d := f.BlockedFor(netip.MustParseAddr("2001:db8::ffff"), now); d == 0 {
		t.Error("addresses of one /64 were counted apart")
	}
	if d := f.BlockedFor(netip.MustParseAddr("2001:db8:0:1::1"), now); d != 0 {
		t.Error("another /64 is blocked")
	}
	if SourceKey(netip.MustParseAddr("::ffff:10.0.0.7")) != SourceKey(netip.MustParseAddr("10.0.0.7")) {
		t.Error("an IPv4-mapped address is counted apart from its IPv4 form")
	}
}

func TestAdminFailuresRememberABoundedNumber(t *testing.T) {
	var f AdminFailures
	now := time.Unix(1000, 0)
	for i := range adminFailSources + 100 {
		f.Fail(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), now.Add(time.Duration(i)))
	}
	if n := len(f.bySrc); n > adminFailSources {
		t.Errorf("%d sources remembered, bound %d", n, adminFailSources)
	}
}

func TestHandshakeSlots(t *testing.T) {
	var h HandshakeSlots
	a, b := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	if !h.Take(a, 3, 2) || !h.Take(a, 3, 2) {
		t.Fatal("refused within the caps")
	}
	if h.Take(a, 3, 2) {
		t.Error("a third login from one source passed a per-source cap of 2")
	}
	if !h.Take(b, 3, 2) {
		t.Fatal("another source refused within the caps")
	}
	if h.Take(b, 3, 2) {
		t.Error("a fourth login passed a cap of 3 in all")
	}
	h.Give(a)
	if !h.Take(b, 3, 2) {
		t.Error("a slot given back was not free again")
	}
	h.Give(a)
	h.Give(b)
	h.Give(b)
	if h.total != 0 || len(h.bySrc) != 0 {
		t.Errorf("after every slot came back: %d in all, %d sources", h.total, len(h.bySrc))
	}
	if !h.Take(a, 0, 0) {
		t.Error("no caps, yet refused")
	}
}
