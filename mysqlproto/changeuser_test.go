package mysqlproto

import (
	"reflect"
	"testing"
)

func TestChangeUserRoundTrip(t *testing.T) {
	full := ProxyCapabilities
	for _, tc := range []struct {
		name string
		caps Capability
		cu   *ChangeUser
	}{
		{"all fields", full, &ChangeUser{User: "app@test", AuthResponse: seqScramble(), Database: "db1",
			Charset: 48, HasCharset: true, AuthPlugin: AuthNativePassword,
			Attrs: []ConnAttr{{"_client_name", "x"}, {"__ob_client_name", "y"}}, HasAttrs: true}},
		{"empty attribute list", full, &ChangeUser{User: "u", Charset: 45, HasCharset: true,
			AuthPlugin: AuthCachingSha2, HasAttrs: true}},
		{"old client stops after the database", full, &ChangeUser{User: "u", AuthResponse: []byte{1, 2}, Database: "d"}},
		{"no plugin auth, no attributes", ClientProtocol41 | ClientSecureConnection,
			&ChangeUser{User: "u", Charset: 8, HasCharset: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.cu.Append(nil, tc.caps)
			got, err := ParseChangeUser(b, tc.caps)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.cu) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, tc.cu)
			}
		})
	}
}

func TestChangeUserMalformed(t *testing.T) {
	good := (&ChangeUser{User: "u", AuthResponse: seqScramble(), Database: "d", Charset: 45, HasCharset: true,
		AuthPlugin: AuthNativePassword, Attrs: []ConnAttr{{"k", "v"}}, HasAttrs: true}).Append(nil, ProxyCapabilities)
	// The fields after the database are optional, each one whole: only
	// cuts at those boundaries parse.
	afterDB := len("\x11u\x00") + 1 + 20 + len("d\x00")
	afterPlugin := afterDB + 2 + len(AuthNativePassword) + 1
	for n := 0; n < len(good); n++ {
		_, err := ParseChangeUser(good[:n], ProxyCapabilities)
		if ok := n == afterDB || n == afterDB+2 || n == afterPlugin; (err == nil) != ok {
			t.Errorf("cut to %d bytes: err = %v", n, err)
		}
	}
	if _, err := ParseChangeUser(append([]byte{byte(ComQuery)}, good[1:]...), ProxyCapabilities); err == nil {
		t.Error("a COM_QUERY parsed as COM_CHANGE_USER")
	}
}
