package mysqlproto

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"reflect"
	"testing"
)

// Fuzz targets for the login-time decoders a client controls before it is
// authenticated (connection attributes, COM_CHANGE_USER, the OB capability
// string) and the auth messages a server controls.

// attrSeeds are attribute lists as drivers send them, and hostile ones.
func attrSeeds() [][]ConnAttr {
	return [][]ConnAttr{
		nil,
		{{"_client_name", "libmysql"}, {"_os", "Linux"}, {"_pid", "42"}, {"_platform", "x86_64"}, {"program_name", "mysql"}},
		{{AttrProxyCapabilityFlag, "941366"}, {AttrMySQLClientType, ClientTypeOBProxy}, {AttrClientIP, "10.0.0.1"}},
		manyAttrs(MaxConnectAttrs),
		manyAttrs(MaxConnectAttrs + 1),
		{{"k", string(bytes.Repeat([]byte{'v'}, 300))}},
	}
}

func FuzzConnAttrs(f *testing.F) {
	for _, a := range attrSeeds() {
		b := appendConnAttrs(nil, a)
		_, p, _ := ReadLenEncInt(b, 0)
		f.Add(b[p:])
	}
	f.Add([]byte{0xfc, 0xff, 0xff})
	f.Add(bytes.Repeat([]byte{0, 0}, MaxConnectAttrs+1))
	f.Fuzz(func(t *testing.T, b []byte) {
		attrs, err := parseConnAttrs(b)
		if err != nil {
			return
		}
		if len(attrs) > MaxConnectAttrs || 2*len(attrs) > len(b) {
			t.Fatalf("%d attributes from %d bytes", len(attrs), len(b))
		}
		enc := appendConnAttrs(nil, attrs)
		_, p, _ := ReadLenEncInt(enc, 0)
		again, err := parseConnAttrs(enc[p:])
		if err != nil || !reflect.DeepEqual(again, attrs) {
			t.Fatalf("round trip: %v, %q vs %q", err, again, attrs)
		}
	})
}

func FuzzParseChangeUser(f *testing.F) {
	full := ProxyCapabilities
	for _, a := range attrSeeds() {
		cu := &ChangeUser{User: "app@tenant#cluster", AuthResponse: seqScramble(), Database: "db",
			Charset: 45, HasCharset: true, AuthPlugin: AuthNativePassword, Attrs: a, HasAttrs: true}
		f.Add(cu.Append(nil, full), uint64(full))
	}
	f.Add((&ChangeUser{User: "u", AuthResponse: []byte{1}, Database: "d"}).Append(nil, full), uint64(full))
	old := ClientProtocol41 | ClientConnectAttrs
	f.Add((&ChangeUser{User: "u", AuthResponse: []byte("pw"), Charset: 8, HasCharset: true,
		Attrs: []ConnAttr{{"a", "b"}}, HasAttrs: true}).Append(nil, old), uint64(old))
	f.Add([]byte{byte(ComChangeUser), 'u', 0, 0xff}, uint64(full))
	f.Fuzz(func(t *testing.T, b []byte, capBits uint64) {
		caps := Capability(capBits)
		cu, err := ParseChangeUser(b, caps)
		if err != nil {
			return
		}
		if len(cu.User)+len(cu.AuthResponse)+len(cu.Database)+len(cu.AuthPlugin) > len(b) || len(cu.Attrs) > MaxConnectAttrs {
			t.Fatalf("fields longer than the %d-byte input", len(b))
		}
		again, err := ParseChangeUser(cu.Append(nil, caps), caps)
		if err != nil {
			t.Fatalf("re-encoded request does not parse: %v", err)
		}
		if !reflect.DeepEqual(again, cu) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", again, cu)
		}
	})
}

func FuzzParseOBCapability(f *testing.F) {
	for _, s := range []string{"0", "941366", FormatOBCapability(OBProxyDefaultCapability), " 42 ",
		"18446744073709551615", "18446744073709551616", "-1", "0x10", "", "1e3"} {
		f.Add(s, uint64(OBProxyDefaultCapability))
	}
	f.Fuzz(func(t *testing.T, s string, bits uint64) {
		if c, ok := ParseOBCapability(s); ok {
			if again, ok := ParseOBCapability(FormatOBCapability(c)); !ok || again != c {
				t.Fatalf("%q: %d formats and parses back as %d, %v", s, c, again, ok)
			}
			_ = c.String()
		}
		c := OBCapability(bits)
		if again, ok := ParseOBCapability(FormatOBCapability(c)); !ok || again != c {
			t.Fatalf("%d formats and parses back as %d, %v", c, again, ok)
		}
		_ = c.String()
	})
}

// FuzzAuthSwitch covers the auth messages a server sends the internal
// client: the auth switch request and, under caching_sha2_password without
// TLS, the RSA public key the password is encrypted with.
func FuzzAuthSwitch(f *testing.F) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		f.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	sw := AuthSwitchRequest{Plugin: AuthCachingSha2, Data: seqScramble()}.Append(nil)
	f.Add(sw, pemKey)
	f.Add([]byte{AuthSwitchRequestHeader, 'c', 0}, pemKey)
	f.Add([]byte{AuthSwitchRequestHeader}, []byte("-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----\n"))
	f.Fuzz(func(t *testing.T, b, key []byte) {
		req, ok := ParseAuthSwitchRequest(b)
		if !ok {
			return
		}
		if len(req.Plugin)+len(req.Data) > len(b) {
			t.Fatal("fields longer than input")
		}
		again, ok := ParseAuthSwitchRequest(req.Append(nil))
		if !ok || again.Plugin != req.Plugin || !bytes.Equal(again.Data, req.Data) {
			t.Fatalf("round trip %+v -> %+v", req, again)
		}
		_, _ = EncryptPassword([]byte("pw"), req.Data, key)
		_ = CachingSha2Token(req.Data, []byte("pw"))
		_ = NativeToken(req.Data, []byte("pw"))
	})
}

// FuzzAuthTokens checks the verifiers of a client's auth response with an
// arbitrary token and scramble: wrong lengths are refused, not indexed
// past, and the right token for the scramble always verifies.
func FuzzAuthTokens(f *testing.F) {
	f.Add(seqScramble(), NativeToken(seqScramble(), []byte("pw")))
	f.Add([]byte{}, []byte{})
	f.Add(bytes.Repeat([]byte{1}, 40), bytes.Repeat([]byte{2}, 32))
	stage1 := PasswordStage1([]byte("pw"))
	stage2 := PasswordStage2(stage1)
	p2 := sha256twice([]byte("pw"))
	f.Fuzz(func(t *testing.T, scramble, token []byte) {
		if got, ok := RecoverNativeStage1(scramble, token, stage2); ok && !bytes.Equal(got, stage1) {
			t.Fatal("recovered a wrong stage 1")
		}
		_ = VerifyNativeStage1(scramble, token, stage1)
		_ = VerifyCachingSha2(scramble, token, p2)
		if _, ok := RecoverNativeStage1(scramble, NativeToken(scramble, []byte("pw")), stage2); !ok {
			t.Fatal("the right native token did not verify")
		}
		if !VerifyNativeStage1(scramble, NativeToken(scramble, []byte("pw")), stage1) {
			t.Fatal("the right native token did not verify against stage 1")
		}
		if !VerifyCachingSha2(scramble, CachingSha2Token(scramble, []byte("pw")), p2) {
			t.Fatal("the right caching_sha2 token did not verify")
		}
	})
}
