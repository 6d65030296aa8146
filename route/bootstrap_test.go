package route

import (
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"

	"obgate/config"
)

// TestBootstrappedNamesWaitingClusters checks that clusters whose root
// servers cannot be reached are reported as not bootstrapped, by name.
func TestBootstrappedNamesWaitingClusters(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close() // nothing listens there any more
	cfg, err := config.Default().With("rootservice_list", dead)
	if err == nil {
		cfg, err = cfg.With("rootservice_cluster_name", "c1")
	}
	if err == nil {
		cfg, err = cfg.With("cluster_rootservice_list", "c2="+dead)
	}
	if err != nil {
		t.Fatal(err)
	}
	cs, err := NewClusters(config.NewStore(cfg), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	err = cs.Bootstrapped()
	if !errors.Is(err, ErrClusterNotReady) || !strings.Contains(err.Error(), "c1, c2") {
		t.Fatalf("Bootstrapped() = %v, want ErrClusterNotReady naming c1, c2", err)
	}
}
