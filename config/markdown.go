package config

import "strings"

// MarkdownTable renders the registry as a Markdown table (name, type, default, range, reboot,
// description) for the README; tools/genconfigdoc prints it.
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| name | type | default | range | reboot | description |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, it := range registry {
		rng, reboot := "", ""
		if r := it.Range(); r != "" {
			rng = mdCode(r)
		}
		if it.reboot {
			reboot = "yes"
		}
		b.WriteString("| `" + it.name + "` | " + it.Kind().String() + " | " + mdCode(it.def) + " | " +
			rng + " | " + reboot + " | " + mdEscape(it.doc) + " |\n")
	}
	return b.String()
}

// mdCode shows a value as inline code; the empty value is shown as "" so the cell is not
// blank.
func mdCode(s string) string {
	if s == "" {
		return `""`
	}
	return "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
