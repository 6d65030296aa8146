// Package layers holds no code: its test reads the module's import graph
// and fails when a package reaches a package the architecture keeps above
// it (see layers_test.go for the rules and why each holds).
package layers
