package suite

import "testing"

func TestParseStraceSummary(t *testing.T) {
	out := `% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ------------------
 51.00    3.591619       12919       278        11 futex
 23.07    1.624709         819      1983           nanosleep
 11.35    0.799318          10     76600     16515 read
  3.14    0.221159          11     20008     20008 recvfrom
------ ----------- ----------- --------- --------- ------------------
100.00    7.042605          48     98869     36534 total
`
	c, err := ParseStraceSummary([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if c.Total != 98869 || c.ByName["read"] != 76600 || c.ByName["nanosleep"] != 1983 || c.ByName["recvfrom"] != 20008 {
		t.Fatalf("counts %+v", c)
	}
	if c.Failed["read"] != 16515 || c.Failed["futex"] != 11 || c.Failed["nanosleep"] != 0 {
		t.Fatalf("failures %+v", c.Failed)
	}
	if got := c.Data(); got != 76600+20008 {
		t.Fatalf("data calls %d", got)
	}
	if names := c.Names(); names[0] != "read" || names[len(names)-1] != "futex" {
		t.Fatalf("names %v", names)
	}
	if c, err := ParseStraceSummary(nil); err != nil || c.Total != 0 {
		t.Fatalf("empty summary: %+v %v", c, err)
	}
	if _, err := ParseStraceSummary([]byte("strace: something else\n")); err == nil {
		t.Fatal("accepted a summary without a total")
	}
}

func TestParsePerfStat(t *testing.T) {
	out := `# started on Tue Dec  1 08:13:58 2026

96775,,raw_syscalls:sys_enter,56083,100.00,,
46899,,syscalls:sys_enter_read,53961,100.00,,
0,,syscalls:sys_enter_recvfrom,53961,100.00,,
20040,,syscalls:sys_enter_write,53961,100.00,,
3120,,context-switches,53961,100.00,,
`
	c, err := ParsePerfStat([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if c.Total != 96775 || c.ByName["read"] != 46899 || c.ByName["write"] != 20040 || len(c.ByName) != 2 || c.ContextSwitches != 3120 {
		t.Fatalf("counts %+v", c)
	}
	if _, err := ParsePerfStat([]byte("<not supported>,,raw_syscalls:sys_enter,0,100.00,,\n")); err == nil {
		t.Fatal("accepted an event perf could not count")
	}
	if _, err := ParsePerfStat([]byte("46899,,syscalls:sys_enter_read,1,100.00,,\n")); err == nil {
		t.Fatal("accepted output without the total")
	}
}
