package mysqlproto

import (
	"bytes"
	"reflect"
	"testing"
)

func TestHandshakeRoundTrip(t *testing.T) {
	for _, h := range []*Handshake{
		{ServerVersion: "5.6.25", ConnectionID: 7, Capability: ProxyCapabilities&0xffffffff | ClientSSL,
			Charset: 45, Status: StatusAutocommit, AuthData: seqScramble(), AuthPlugin: AuthNativePassword},
		{ServerVersion: "5.5.5-10.11.19-MariaDB", ConnectionID: 0xfffffffe,
			Capability: (ProxyCapabilities &^ ClientMySQL) | MariaDBClientProgress | MariaDBClientCacheMetadata,
			Charset:    8, Status: StatusAutocommit, AuthData: seqScramble(), AuthPlugin: AuthCachingSha2},
	} {
		b := h.Append(nil)
		got, err := ParseHandshake(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, h) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, h)
		}
	}
}

func TestHandshakeResponseRoundTrip(t *testing.T) {
	r := &HandshakeResponse{
		Capability:    ProxyCapabilities&^ClientMySQL | MariaDBClientProgress,
		MaxPacketSize: 1 << 24, Charset: 45, User: "app@test#obsim",
		AuthResponse: seqScramble(), Database: "db1", AuthPlugin: AuthNativePassword,
		Attrs: []ConnAttr{{"_client_name", "x"}, {"__proxy_capability_flag", "256"}},
	}
	b := r.Append(nil)
	got, err := ParseHandshakeResponse(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, r)
	}
	if v, ok := got.Attr("__proxy_capability_flag"); !ok || v != "256" {
		t.Fatal("Attr lookup failed")
	}
	if IsSSLRequest(b) {
		t.Fatal("a full response is not an SSLRequest")
	}
	ssl := AppendSSLRequest(nil, r.Capability, 1<<24, 45)
	if !IsSSLRequest(ssl) {
		t.Fatal("SSLRequest not recognised")
	}
	patched := bytes.Clone(b)
	PatchResponseCapability(patched, r.Capability&^ClientConnectAttrs)
	got2, err := ParseHandshakeResponse(patched)
	if err != nil || got2.Attrs != nil || got2.User != r.User {
		t.Fatalf("patched: %+v %v", got2, err)
	}
}

func TestHandshakeResponseTruncated(t *testing.T) {
	b := (&HandshakeResponse{Capability: DefaultClientCapability, User: "u", AuthResponse: seqScramble(),
		Attrs: []ConnAttr{{"k", "v"}}}).Append(nil)
	for i := range len(b) - 1 {
		if r, err := ParseHandshakeResponse(b[:i]); err == nil && len(r.Attrs) == 1 {
			t.Fatalf("truncated at %d parsed whole", i)
		}
	}
}
