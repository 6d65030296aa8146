// Command genconfigdoc writes obgate's configuration reference, a Markdown
// table generated from the config registry. With no flags it prints the
// table; with -readme FILE it rewrites the part of FILE between
// "<!-- config:begin -->" and "<!-- config:end -->":
//
//	go run ./tools/genconfigdoc -readme README.md
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"obgate/config"
)

const (
	beginMarker = "<!-- config:begin -->"
	endMarker   = "<!-- config:end -->"
)

func main() {
	readme := flag.String("readme", "", "rewrite the config section of this Markdown file")
	flag.Parse()
	var err error
	if *readme != "" {
		err = updateFile(*readme)
	} else {
		err = run(os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genconfigdoc:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	_, err := io.WriteString(w, config.MarkdownTable())
	return err
}

// section is the text that belongs between the markers.
func section() string { return "\n" + config.MarkdownTable() }

// replaceSection returns doc with its config section replaced.
func replaceSection(doc []byte) ([]byte, error) {
	b := bytes.Index(doc, []byte(beginMarker))
	e := bytes.Index(doc, []byte(endMarker))
	if b < 0 || e < b {
		return nil, errors.New("markers " + beginMarker + " … " + endMarker + " not found")
	}
	var out bytes.Buffer
	out.Write(doc[:b+len(beginMarker)])
	out.WriteString(section())
	out.Write(doc[e:])
	return out.Bytes(), nil
}

func updateFile(path string) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := replaceSection(doc)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, out, 0o644)
}
