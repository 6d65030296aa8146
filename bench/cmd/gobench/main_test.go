package main

import (
	"strings"
	"testing"
)

func TestParseAndRender(t *testing.T) {
	out := []byte(`goos: linux
BenchmarkForward/net-2         	   91644	     25951 ns/op	       0 B/op	       0 allocs/op
BenchmarkForward/net-2         	   91644	     24000 ns/op	       0 B/op	       0 allocs/op
BenchmarkForward/net-2         	   91644	     27000 ns/op	       0 B/op	       0 allocs/op
BenchmarkForward/netpoll-2     	   36940	     60260 ns/op	      36 B/op	       1 allocs/op
BenchmarkSessionVarsInSync-2   	298697323	         3.867 ns/op	       0 B/op	       0 allocs/op
PASS
`)
	rows := parse(out)
	if len(rows) != 3 {
		t.Fatalf("rows %+v", rows)
	}
	if r := rows[0]; r.name != "BenchmarkForward/net" || r.nsOp != 25951 || r.runs != 3 {
		t.Fatalf("median row %+v", r)
	}
	if r := rows[1]; r.allocsOp != 1 || r.bytesOp != 36 {
		t.Fatalf("allocs row %+v", r)
	}
	s := render(rows, []string{"go test x"}, 3, "1s", "abc1234")
	for _, want := range []string{"| `BenchmarkSessionVarsInSync` | 3.9 | 0 | 0 |", "go test x", "commit abc1234", beginMarker, endMarker} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q in:\n%s", want, s)
		}
	}
}
