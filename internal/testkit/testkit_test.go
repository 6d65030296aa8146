package testkit

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"strconv"
	"testing"
)

func TestWriteSelfSignedCert(t *testing.T) {
	certFile, keyFile, err := WriteSelfSignedCert(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatalf("LoadX509KeyPair: %v", err)
	}
	pemBytes, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		t.Fatal("certificate PEM does not parse")
	}
	// A verifying client accepts the certificate for 127.0.0.1.
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	srvErr := make(chan error, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			srvErr <- err
			return
		}
		defer conn.Close()
		srvErr <- conn.(*tls.Conn).Handshake()
	}()
	c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatalf("client handshake: %v", err)
	}
	c.Close()
	if err := <-srvErr; err != nil {
		t.Fatalf("server handshake: %v", err)
	}
}

func TestMetricSum(t *testing.T) {
	text := `# HELP x
odp_sql_request_total{sqlType="SELECT",sqlResult="success",app="a"} 3
odp_sql_request_total{sqlType="SELECT",sqlResult="fail",app="a"} 1
odp_sql_request_total{sqlType="INSERT",sqlResult="success",app="a"} 5
odp_new_client_connections{connectionResult="success"} 2
odp_new_client_connections_other 7
`
	tests := []struct {
		family string
		labels []string
		want   float64
		found  bool
	}{
		{"odp_sql_request_total", nil, 9, true},
		{"odp_sql_request_total", []string{"sqlType", "SELECT"}, 4, true},
		{"odp_sql_request_total", []string{"sqlType", "SELECT", "sqlResult", "success"}, 3, true},
		{"odp_sql_request_total", []string{"sqlType", "UPDATE"}, 0, false},
		{"odp_new_client_connections", nil, 2, true},
		{"odp_missing", nil, 0, false},
	}
	for _, tt := range tests {
		got, found := MetricSum(text, tt.family, tt.labels...)
		if got != tt.want || found != tt.found {
			t.Errorf("MetricSum(%s, %q) = %v, %v; want %v, %v", tt.family, tt.labels, got, found, tt.want, tt.found)
		}
	}
}

func TestFreePort(t *testing.T) {
	port := FreePort(t)
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("port %d is not free: %v", port, err)
	}
	ln.Close()
}
