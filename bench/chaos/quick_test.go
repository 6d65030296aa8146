package chaos

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"obgate/bench/suite"
)

// knownGaps are expectations today's obgate does not meet yet; the HA work
// (safe retries, congestion, detection) is to close them. The short form
// reports them without failing `make test`; CHAOS_STRICT=1 fails them too.
// Remove an entry once obgate meets it (the test says so when it does).
var knownGaps = map[string]string{
	"error8001: ERR 8001 never reaches a reader (retried elsewhere)": "no retry on OB_SERVER_IS_INIT yet",
	"error8001: no read fails":                                       "no retry on OB_SERVER_IS_INIT yet",
}

// TestChaosQuick is the short form of the chaos suite: a node stopped, a
// node answering ERR 8001, and a node lost under an open write
// transaction, against obsim through an obgate built for the test. It
// asserts what the clients saw and what the ledger holds, never timings.
func TestChaosQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MariaDB, obsim and obgate")
	}
	if _, err := suite.LookPath("mariadbd", "/usr/sbin", "/usr/local/sbin"); err != nil {
		t.Skip("mariadbd is not installed")
	}
	root, err := suite.FindRoot("")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	obgate, obsimBin := filepath.Join(bin, "obgate"), filepath.Join(bin, "obsim")
	goBuild(t, root, obgate, "./cmd/obgate")
	goBuild(t, root, obsimBin, "./tools/obsim/cmd/obsim")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	work := t.TempDir()
	s := NewSuite(Settings{
		Obgate: obgate, OBSim: obsimBin,
		Workers: 6, Writers: 2, Rate: 300, TableSize: 1000, Quick: true,
		WorkDir: work,
	})
	defer s.Close()
	scenarios, err := Lookup(QuickScenarios)
	if err != nil {
		t.Fatal(err)
	}
	strict := os.Getenv("CHAOS_STRICT") == "1"
	for _, sc := range scenarios {
		res := s.Run(ctx, sc)[0]
		var b strings.Builder
		res.WriteText(&b)
		t.Log(b.String())
		if res.Error != "" {
			t.Errorf("%s: could not run: %s (logs in %s)", sc.Name, res.Error, work)
			continue
		}
		if res.Load.Reads.OK == 0 || res.Load.Writes.OK == 0 {
			t.Errorf("%s: the load did not run: %d reads, %d writes", sc.Name, res.Load.Reads.OK, res.Load.Writes.OK)
		}
		for _, c := range res.Checks {
			if c.Timing {
				continue
			}
			key := sc.Name + ": " + c.Name
			gap, known := knownGaps[key]
			switch {
			case c.Status == Fail && known && !strict:
				t.Logf("known gap, not failing the test: %s: %s (%s)", key, c.Detail, gap)
			case c.Status == Fail:
				t.Errorf("%s: %s", key, c.Detail)
			case c.Status == Pass && known:
				t.Logf("%s now holds: remove it from knownGaps", key)
			}
		}
	}
}

// goBuild builds pkg (relative to root) into out, without the race
// detector: the proxy and the simulator are the system under test, not
// the harness.
func goBuild(t *testing.T, root, out, pkg string) {
	t.Helper()
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	cmd := exec.Command(gobin, "build", "-o", out, pkg)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
}
