package main

import (
	"os"
	"strings"
	"testing"

	"obgate/config"
)

func TestRunPrintsEveryItem(t *testing.T) {
	var b strings.Builder
	if err := run(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, "| name |") {
		t.Errorf("output does not start with the table header:\n%.200s", out)
	}
	for _, it := range config.Items() {
		if !strings.Contains(out, "| `"+it.Name()+"` |") {
			t.Errorf("no row for %s", it.Name())
		}
	}
	if rows := strings.Count(out, "\n"); rows != len(config.Items())+2 {
		t.Errorf("got %d lines, want %d (header, rule, one per item)", rows, len(config.Items())+2)
	}
}

// TestReadmeIsCurrent fails when README.md's config reference no longer
// matches the registry: run `go run ./tools/genconfigdoc -readme README.md`.
func TestReadmeIsCurrent(t *testing.T) {
	doc, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := replaceSection(doc)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(doc) {
		t.Fatal("README.md's configuration reference is stale: run `go run ./tools/genconfigdoc -readme README.md`")
	}
}
