package chaos

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"obgate/bench/suite"
)

// TestChaosQuick is the short form of the chaos suite: a node stopped, a
// node answering ERR 8001, and a node lost under an open write
// transaction, against obsim through an obgate built for the test. It
// asserts what the clients saw and what the ledger holds, never timings.
func TestChaosQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MariaDB, obsim and obgate")
	}
	if _, err := suite.LookPath("mariadbd", "/usr/sbin", "/usr/local/sbin"); err != nil {
		t.Fatal("mariadbd is not installed; `make deps` installs it")
	}
	root, err := suite.FindRoot("")
	if err != nil {
		t.Fatal(err)
	}
	statSources(t, root)
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
			if c.Status == Fail {
				t.Errorf("%s: %s", key, c.Detail)
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

// statSources stats every Go file of the repository: the test builds
// obgate and obsim itself, and go test's cache keys a test's result on
// the files it looked at, so any source change runs it again.
func statSources(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "results") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
