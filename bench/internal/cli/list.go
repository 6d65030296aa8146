package cli

import "strings"

// List is a flag that may be given more than once: each value is
// appended.
type List []string

// String implements flag.Value.
func (l *List) String() string { return strings.Join(*l, " ") }

// Set implements flag.Value.
func (l *List) Set(s string) error { *l = append(*l, s); return nil }
