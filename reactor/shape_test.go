package reactor

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The package's shape, held where it regrew before: a client session that
// gathers every concern as a method, mode types and a statement with
// scores of methods, one interface for everything a mode does, and
// "poller or goroutine?" asked all over the statement path. These limits
// are the ones the reactor was cut down to; a change that needs more
// should split a type by concern rather than raise a number.
const (
	maxSessionMethods   = 40
	maxTypeMethods      = 50
	maxInterfaceMethods = 15
)

// pollerFiles may read the driver's polled flag: the driver sets it
// (poller.go) and picks the command's pace from it (pace.go). The
// statement path asks its pace instead.
var pollerFiles = []string{"poller.go", "pace.go"}

// parseReactor parses the package's production files.
func parseReactor(t *testing.T) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
	}
	return fset, files
}

// receiverName is the type a method is declared on.
func receiverName(fn *ast.FuncDecl) string {
	t := fn.Recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

func TestShapeMethodCounts(t *testing.T) {
	_, files := parseReactor(t)
	methods := map[string]int{}
	for _, f := range files {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil {
				methods[receiverName(fn)]++
			}
		}
	}
	if methods["Session"] == 0 {
		t.Fatal("found no methods of Session: the test reads the wrong files")
	}
	if n := methods["Session"]; n > maxSessionMethods {
		t.Errorf("Session has %d methods, more than %d: give the new ones to the part of the session they use (driver, clientConn, lifecycle, published, a side)", n, maxSessionMethods)
	}
	for typ, n := range methods {
		if n > maxTypeMethods {
			t.Errorf("%s has %d methods, more than %d: split it by concern", typ, n, maxTypeMethods)
		}
	}
}

func TestShapeInterfaceSizes(t *testing.T) {
	_, files := parseReactor(t)
	seen := 0
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			it, ok := ts.Type.(*ast.InterfaceType)
			if !ok {
				return true
			}
			seen++
			count := 0
			for _, m := range it.Methods.List {
				if _, isFunc := m.Type.(*ast.FuncType); isFunc {
					count += len(m.Names)
				}
			}
			if count > maxInterfaceMethods {
				t.Errorf("interface %s has %d methods, more than %d: split it into roles, as serverSide is", ts.Name.Name, count, maxInterfaceMethods)
			}
			return true
		})
	}
	if seen == 0 {
		t.Fatal("found no interfaces: the test reads the wrong files")
	}
}

// TestShapePollerFlag: only the driver knows whether a command runs on the
// poller. Anything else that must not wait calls its pace's mayWait, or
// takes readyOnly as a parameter.
func TestShapePollerFlag(t *testing.T) {
	fset, files := parseReactor(t)
	found := 0
	for name, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "polled" {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "spec" {
				return true // the command table's column: may the poller serve it
			}
			found++
			if !slices.Contains(pollerFiles, name) {
				t.Errorf("%s reads the driver's polled flag: ask the command's pace (pace.go) instead", fset.Position(sel.Pos()))
			}
			return true
		})
	}
	if found == 0 {
		t.Fatal("found no use of the polled flag at all: the test reads the wrong files or the flag was renamed")
	}
}

// TestShapeModeAskedOnce: the routing mode is read where the Server is
// made (modeFor); everything after asks the Server's routingMode or the
// session's side.
func TestShapeModeAskedOnce(t *testing.T) {
	fset, files := parseReactor(t)
	var at []string
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "ServerRoutingMode" {
				at = append(at, fset.Position(sel.Pos()).String())
			}
			return true
		})
	}
	if len(at) != 1 || !strings.HasPrefix(at[0], "server.go:") {
		t.Errorf("server_routing_mode is read at %v; read it once, in NewServer (modeFor), and ask the Server's mode", at)
	}
}
