package layers

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "obgate"

// rule forbids pkg to reach (directly or through others) any package of
// forbidden; a forbidden entry ending in "/..." names a tree.
type rule struct {
	pkg       string
	forbidden []string
	why       string
}

var rules = []rule{
	{"obgate/mysqlproto", []string{"obgate/..."}, "the wire protocol is the bottom layer"},
	{"obgate/internal/topology", []string{"obgate/..."}, "the vocabulary route and health share sits below both"},
	{"obgate/internal/failure", []string{"obgate/..."}, "the vocabulary route and health share sits below both"},
	{"obgate/reactor/handover", []string{"obgate/..."}, "the hand-over state and its link know no session type"},
	{"obgate/reactor/backend", []string{"obgate/reactor", "obgate/route", "obgate/admin"}, "server sessions know no client session and no routing decision"},
	{"obgate/reactor/prepared", []string{"obgate/reactor", "obgate/admin"}, "a session's prepared statements know no session and run on no server"},
	{"obgate/health", []string{"obgate/route", "obgate/reactor", "obgate/admin"}, "health judges servers; route asks it through an interface"},
	{"obgate/route", []string{"obgate/health", "obgate/reactor", "obgate/admin"}, "route decides where a statement goes and asks health through an interface"},
	{"obgate/reactor", []string{"obgate/admin", "obgate/internal/assemble"}, "the reactor is handed its router and monitor; the admin interceptor sits above it"},
	{"obgate/internal/testkit", []string{"obgate/reactor", "obgate/route", "obgate/health", "obgate/admin", "obgate/config"}, "benchmarks and low packages' tests use it without pulling the proxy in"},
	{"obgate/bench/suite", []string{"obgate/reactor", "obgate/route", "obgate/health", "obgate/admin"}, "the benchmark harness drives obgate as a process, as users run it"},
}

// importGraph returns each package of the module with its direct imports
// of the module's own packages (tests excluded).
func importGraph(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"/...")
	cmd.Dir = moduleRoot(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	g := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		var own []string
		for _, imp := range f[1:] {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				own = append(own, imp)
			}
		}
		g[f[0]] = own
	}
	return g
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// path returns a chain of imports from pkg to a package matching
// forbidden, or nil.
func path(g map[string][]string, pkg string, forbidden []string) []string {
	matches := func(p string) bool {
		for _, f := range forbidden {
			if tree, ok := strings.CutSuffix(f, "/..."); ok {
				if p == tree || strings.HasPrefix(p, tree+"/") {
					return true
				}
			} else if p == f {
				return true
			}
		}
		return false
	}
	prev := map[string]string{pkg: ""}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, imp := range g[p] {
			if _, seen := prev[imp]; seen {
				continue
			}
			prev[imp] = p
			if matches(imp) {
				chain := []string{imp}
				for at := p; at != ""; at = prev[at] {
					chain = append(chain, at)
				}
				slices.Reverse(chain)
				return chain
			}
			queue = append(queue, imp)
		}
	}
	return nil
}

func TestImportRules(t *testing.T) {
	g := importGraph(t)
	for _, r := range rules {
		if _, ok := g[r.pkg]; !ok {
			t.Errorf("rule for %s: no such package", r.pkg)
			continue
		}
		if chain := path(g, r.pkg, r.forbidden); chain != nil {
			t.Errorf("%s reaches %s (%s): %s", r.pkg, chain[len(chain)-1], r.why, strings.Join(chain, " → "))
		}
	}
}

// TestPathFindsIndirectImports checks the checker: a chain through a
// middle package is found, and a package does not forbid itself.
func TestPathFindsIndirectImports(t *testing.T) {
	g := map[string][]string{"a": {"b"}, "b": {"c"}, "c": nil}
	if got := path(g, "a", []string{"c"}); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("path a→c = %v", got)
	}
	if got := path(g, "c", []string{"a"}); got != nil {
		t.Errorf("path c→a = %v, want none", got)
	}
	if got := path(g, "x/y", []string{"x/..."}); got != nil {
		t.Errorf("a package matched its own tree: %v", got)
	}
}

// TestReactorIsHandedItsParts checks that reactor's production code
// builds neither the health monitor, the router nor the clusters: the
// process builds them and hands them in (internal/assemble).
func TestReactorIsHandedItsParts(t *testing.T) {
	dir := filepath.Join(moduleRoot(t), "reactor")
	builders := []string{"health.NewMonitor", "route.NewRouter", "route.NewClusters"}
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && slices.Contains(builders, x.Name+"."+sel.Sel.Name) {
				t.Errorf("%s: reactor calls %s.%s", fset.Position(sel.Pos()), x.Name, sel.Sel.Name)
			}
			return true
		})
	}
}
