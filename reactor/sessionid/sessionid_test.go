package sessionid

import "testing"

func TestLayouts(t *testing.T) {
	for _, c := range []struct {
		version        int64
		mark, upgrade  bool
		proxyID        int64
		want           uint32 // the first id handed out
		seqBits, idMax int64
	}{
		{1, false, false, 5, 5<<23 | 1, 22, 255},
		{1, true, false, 5, Mark | 5<<23 | 1, 22, 255},
		{1, false, true, 5, 5<<23 | 1<<22 | 1, 22, 255},
		{2, false, false, 5, 5<<18 | 1, 17, 8191},
		{2, true, true, 8191, Mark | 8191<<18 | 1<<17 | 1, 17, 8191},
	} {
		l, used := NewLayout(c.version, c.proxyID, c.mark, c.upgrade)
		if used != c.proxyID {
			t.Errorf("%+v: proxy id %d used", c, used)
		}
		g := Generator{Layout: l}
		if got := g.Next(); got != c.want {
			t.Errorf("%+v: first id %#x, want %#x", c, got, c.want)
		}
		if !l.IsClientID(c.want) {
			t.Errorf("%+v: its own id is not a client id", c)
		}
		if server := c.want ^ Mark; l.IsClientID(server) {
			t.Errorf("%+v: %#x, with the other top bit, is taken for a client id", c, server)
		}
		// A proxy id out of range is replaced by a random one in range.
		if _, got := NewLayout(c.version, c.idMax+1, c.mark, c.upgrade); got < 1 || got > c.idMax {
			t.Errorf("version %d: proxy id %d out of range", c.version, got)
		}
	}
}

func TestSequenceSkipsZeroAndResumes(t *testing.T) {
	l, _ := NewLayout(2, 1, false, false)
	g := Generator{Layout: l}
	g.Resume(1<<17 - 1)
	if got := g.Next(); got&(1<<17-1) != 1 {
		t.Errorf("after the last sequence number came %#x, want sequence 1 (0 skipped)", got)
	}
	if g.Seq() != 1<<17+1 {
		t.Errorf("Seq %d after the wrap", g.Seq())
	}
}
