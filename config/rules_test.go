package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// writeKeyPair writes a fresh self-signed certificate and its key in dir
// as name.crt and name.key.
func writeKeyPair(t *testing.T, dir, name string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// loadedStore returns a Store backed by a config file in a new directory,
// loaded from the given file text, and the file's path.
func loadedStore(t *testing.T, text string) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Load(&Options{ConfigDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return s, path
}

// setWithin runs s.Set and fails the test if it has not returned within a
// generous bound (a FIFO must not hang it).
func setWithin(t *testing.T, s *Store, name, value string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { _, err := s.Set(name, value); done <- err }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("ALTER %s = %q did not return within 10s", name, value)
		return nil
	}
}

// TestSetRefusesWhatCheckConfigRefuses checks that ALTER PROXYCONFIG
// (Store.Set) refuses each change that --check-config would call a
// problem at the next start, with an error that says why, and applies
// nothing: neither the running nor the saved snapshot nor the file
// changes.
func TestSetRefusesWhatCheckConfigRefuses(t *testing.T) {
	dir := t.TempDir()
	certA, keyA := writeKeyPair(t, dir, "a")
	certB, _ := writeKeyPair(t, dir, "b")
	fifo := filepath.Join(dir, "fifo.pem")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := "server_routing_mode = mysql\nrootservice_list = 127.0.0.1:3306\n"
	withTLS := base + "client_ssl_cert_file = " + certA + "\nclient_ssl_key_file = " + keyA + "\nenable_client_ssl = true\n"
	for _, tc := range []struct {
		name, file, item, value, want string
	}{
		{"TLS on without its files", base + "client_ssl_cert_file = /nonexistent/c.pem\nclient_ssl_key_file = /nonexistent/k.pem\n",
			"enable_client_ssl", "true", "no such file"},
		{"a certificate that does not match the key", withTLS, "client_ssl_cert_file", certB, "private key does not match"},
		{"a FIFO as the certificate", withTLS, "client_ssl_cert_file", fifo, "not a regular file"},
		{"a key that is not PEM", withTLS, "client_ssl_key_file", garbage, "enable_client_ssl"},
		{"a CA bundle that is not PEM", base + "enable_server_ssl = true\n", "server_ssl_ca_file", garbage, "holds no PEM certificate"},
		{"a missing CA bundle", base + "enable_server_ssl = true\n", "server_ssl_ca_file", "/nonexistent/ca.pem", "no such file"},
		{"a server key pair that does not load", base + "enable_server_ssl = true\nserver_ssl_cert_file = " + certA + "\n",
			"server_ssl_key_file", garbage, "server_ssl_cert_file and server_ssl_key_file"},
		{"mysql routing left without servers", "server_routing_mode = mysql\ntest_server_addr = 127.0.0.1:3306\n",
			"test_server_addr", "", "needs rootservice_list"},
		{"a routing mode obgate does not serve", base, "server_routing_mode", "random", "not supported"},
		{"a cluster list that does not parse", base, "cluster_rootservice_list", "c1", "want name=ip:port"},
		{"a cluster without an address", base, "cluster_rootservice_list", "c1=", "has no address"},
		{"a cluster address without a port", base, "cluster_rootservice_list", "c1=10.0.0.1", "ip:port"},
		{"a cluster named twice", base, "cluster_rootservice_list", "c1=10.0.0.1:2881|c1=10.0.0.2:2881", "twice"},
		{"a cluster also named by rootservice_cluster_name", "rootservice_list = 10.0.0.1:2881\nrootservice_cluster_name = c1\n",
			"cluster_rootservice_list", "c1=10.0.0.2:2881", "given both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, path := loadedStore(t, tc.file)
			running, saved := s.Load(), s.Saved()
			fileBefore, _ := os.ReadFile(path)
			err := setWithin(t, s, tc.item, tc.value)
			if err == nil || !errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ALTER %s = %q: %v; want ErrInvalidValue saying %q", tc.item, tc.value, err, tc.want)
			}
			if s.Load() != running || s.Saved() != saved {
				t.Error("the refused change was applied")
			}
			if b, _ := os.ReadFile(path); string(b) != string(fileBefore) {
				t.Errorf("the refused change was written: %q", b)
			}
			// --check-config says the same of the changed configuration.
			c, err := s.Saved().With(tc.item, tc.value)
			if err == nil {
				if len(c.Problems()) == 0 {
					t.Errorf("Problems finds nothing in the configuration ALTER refused")
				}
			} else if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("With: %v; want it to say %q", err, tc.want)
			}
		})
	}
}

// TestSetAllowsWhatCheckConfigAllows checks that the checks let good
// changes through: TLS on with a pair that loads, a valid cluster list,
// and any change while a rule already failed (the default oceanbase mode
// without root servers; a certificate being rewritten), which the change
// does not make worse.
func TestSetAllowsWhatCheckConfigAllows(t *testing.T) {
	dir := t.TempDir()
	certA, keyA := writeKeyPair(t, dir, "a")
	s, _ := loadedStore(t, "server_routing_mode = mysql\nrootservice_list = 127.0.0.1:3306\n")
	for _, kv := range [][2]string{
		{"client_ssl_cert_file", certA}, {"client_ssl_key_file", keyA}, {"enable_client_ssl", "true"},
		{"enable_server_ssl", "true"}, {"server_ssl_ca_file", certA},
		{"cluster_rootservice_list", "c1=10.0.0.1:2881;10.0.0.2:2881|c2=10.0.1.1:2881"},
	} {
		if err := setWithin(t, s, kv[0], kv[1]); err != nil {
			t.Fatalf("ALTER %s = %q: %v", kv[0], kv[1], err)
		}
	}
	// The pair's certificate breaks on disk: the pair's rule fails already,
	// so switching its files one at a time is not blocked by it.
	if err := os.WriteFile(certA, []byte("half written"), 0o600); err != nil {
		t.Fatal(err)
	}
	certB, keyB := writeKeyPair(t, dir, "b")
	for _, kv := range [][2]string{{"client_ssl_cert_file", certB}, {"client_ssl_key_file", keyB}} {
		if err := setWithin(t, s, kv[0], kv[1]); err != nil {
			t.Fatalf("ALTER %s while the pair was broken already: %v", kv[0], err)
		}
	}

	def := NewStore(nil) // oceanbase mode without root servers: "servers" fails already
	if len(def.Load().Problems()) == 0 {
		t.Fatal("the defaults have no problem; this test needs one")
	}
	if _, err := def.Set("client_max_connections", "100"); err != nil {
		t.Errorf("an unrelated ALTER with a problem already there: %v", err)
	}
}
