// Package cli holds what the benchmark commands under bench/cmd share on
// their command lines: a flag that may be repeated, a flag set that prints
// a command's usage, parsing that refuses stray arguments, the exit after
// run, and a context that SIGINT or SIGTERM cancels.
package cli
