package reactor_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"os"
	"testing"

	"obgate/internal/testkit"
	"obgate/internal/testproxy"
	"obgate/mysqlproto"
)

// servedCert logs in to p over TLS and returns the certificate obgate
// presented (DER).
func servedCert(t *testing.T, p *testproxy.Proxy) []byte {
	t.Helper()
	var got []byte
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	c, err := mysqlproto.Dial(ctx, p.Addr, mysqlproto.ClientOptions{User: "root", TLS: &tls.Config{
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			got = cs.PeerCertificates[0].Raw
			return nil
		},
	}})
	if err != nil {
		t.Fatalf("TLS login: %v", err)
	}
	defer c.Close()
	if _, err := c.Query("SELECT 1"); err != nil {
		t.Fatalf("SELECT 1 over TLS: %v", err)
	}
	return got
}

// fileCert is the DER of the PEM certificate in path.
func fileCert(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode(raw)
	if b == nil {
		t.Fatalf("%s holds no PEM block", path)
	}
	return b.Bytes
}

// greetingOffersTLS reports whether obgate's greeting offers TLS now.
func greetingOffersTLS(t *testing.T, p *testproxy.Proxy) bool {
	t.Helper()
	c, err := testkit.DialRaw(p.Addr, hangLimit)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.Greeting.Capability.Has(mysqlproto.ClientSSL)
}

// TestE2EClientTLSReload checks that client TLS follows its files and
// parameters without a restart: a certificate rewritten on disk serves the
// next connection, a broken rewrite leaves the last good one serving,
// ALTER PROXYCONFIG of the paths switches to other files, and
// enable_client_ssl turns TLS on and off for new connections.
func TestE2EClientTLSReload(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	certA, keyA, err := testkit.WriteSelfSignedCert(dirA)
	if err != nil {
		t.Fatal(err)
	}
	certB, keyB, err := testkit.WriteSelfSignedCert(dirB)
	if err != nil {
		t.Fatal(err)
	}
	testkit.CheckLeaks(t)
	p := startProxy(t, "netpoll", "client_ssl_cert_file", certA, "client_ssl_key_file", keyA, "enable_client_ssl", "true")
	first := fileCert(t, certA)
	if got := servedCert(t, p); !bytes.Equal(got, first) {
		t.Fatal("obgate does not serve client_ssl_cert_file")
	}

	// A renewal tool rewrites both files in place.
	if _, _, err := testkit.WriteSelfSignedCert(dirA); err != nil {
		t.Fatal(err)
	}
	renewed := fileCert(t, certA)
	if bytes.Equal(renewed, first) {
		t.Fatal("the rewritten certificate is the same")
	}
	if got := servedCert(t, p); !bytes.Equal(got, renewed) {
		t.Error("the next connection after the certificate was rewritten got the old one")
	}

	// A broken rewrite: the last good certificate goes on serving.
	if err := os.WriteFile(certA, []byte("not a certificate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := servedCert(t, p); !bytes.Equal(got, renewed) {
		t.Error("after a broken rewrite the last good certificate is not served")
	}

	adm := dialClient(t, p, "root@proxysys", "")
	alter(t, adm, "client_ssl_cert_file", certB)
	alter(t, adm, "client_ssl_key_file", keyB)
	if got := servedCert(t, p); !bytes.Equal(got, fileCert(t, certB)) {
		t.Error("after ALTER PROXYCONFIG of the paths the old certificate is served")
	}

	alter(t, adm, "enable_client_ssl", "false")
	if greetingOffersTLS(t, p) {
		t.Error("the greeting offers TLS after enable_client_ssl was turned off")
	}
	alter(t, adm, "enable_client_ssl", "true")
	if !greetingOffersTLS(t, p) {
		t.Error("the greeting offers no TLS after enable_client_ssl was turned on again")
	}
	if got := servedCert(t, p); !bytes.Equal(got, fileCert(t, certB)) {
		t.Error("TLS turned on again does not serve client_ssl_cert_file")
	}
}
