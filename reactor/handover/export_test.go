package handover

// Internals the external tests build encodings with.
const (
	OptionalTag = optional
	Magic       = magic
	TagMode     = tagMode
)
