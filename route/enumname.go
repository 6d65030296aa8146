package route

// enumName returns the name of the enum value v, names being indexed by
// value, or "UNKNOWN" for a value past the end of names.
func enumName[E ~uint8 | ~int32](v E, names []string) string {
	if int(v) < len(names) {
		return names[v]
	}
	return "UNKNOWN"
}
