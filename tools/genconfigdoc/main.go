// Command genconfigdoc prints obgate's configuration reference, a Markdown table generated
// from the config registry, for README.md:
//
//	go run ./tools/genconfigdoc > /tmp/config.md   # then paste into README.md
package main

import (
	"fmt"
	"io"
	"os"

	"obgate/config"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "genconfigdoc:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	_, err := io.WriteString(w, config.MarkdownTable())
	return err
}
