package config

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestEveryItemIsReadOrSaysItChangesNothing enumerates the whole registry: an item whose
// Config field no production code reads must say, at the start of its doc (SHOW PROXYCONFIG's
// info column and the README), that it changes nothing; and an item that says so must really
// be unread, so the doc never lies in either direction.
func TestEveryItemIsReadOrSaysItChangesNothing(t *testing.T) {
	read := fieldsReadByProduction(t)
	for _, it := range registry {
		field := fieldName(it)
		switch {
		case !read[field] && !it.Inert():
			t.Errorf("%s (Config.%s): nothing reads it, and its doc does not start with %q", it.name, field, inertPrefix)
		case read[field] && it.Inert():
			t.Errorf("%s (Config.%s): its doc says it changes nothing, but production code reads it", it.name, field)
		}
	}
}

// fieldName finds the Config field an item's ref points at.
func fieldName(it *Item) string {
	var c Config
	p := reflect.ValueOf(it.ref.ptr(&c)).Pointer()
	v := reflect.ValueOf(&c).Elem()
	for i := range v.NumField() {
		if v.Field(i).Addr().Pointer() == p {
			return v.Type().Field(i).Name
		}
	}
	panic("config: item " + it.name + " points outside Config")
}

// fieldsReadByProduction returns every selector name used in the module's non-test Go files,
// leaving out the registry itself (items.go names every field to build refs).
func fieldsReadByProduction(t *testing.T) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != ".." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || path == filepath.Join("..", "config", "items.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				seen[sel.Sel.Name] = true
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return seen
}
