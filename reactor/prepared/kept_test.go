package prepared

import (
	"bytes"
	"testing"

	"obgate/mysqlproto"
)

// prepareAnswer builds a prepare's answer as MariaDB sends it to a client
// without CLIENT_DEPRECATE_EOF: the OK, one parameter definition and an
// EOF, one column definition and an EOF, with status in the EOFs.
func prepareAnswer(status mysqlproto.ServerStatus) []byte {
	var out []byte
	seq := byte(1)
	add := func(payload []byte) { out, seq = mysqlproto.AppendPacket(out, seq, payload) }
	add([]byte{0, 7, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0})
	def := append([]byte{3, 'd', 'e', 'f'}, bytes.Repeat([]byte{0}, 12)...)
	eof := []byte{mysqlproto.EOFHeader, 0, 0, byte(status), byte(status >> 8)}
	add(def)
	add(eof)
	add(def)
	add(eof)
	return out
}

// TestPatchEOFStatus: a replayed answer carries the session's status in
// its EOF packets, and nothing else of it changes.
func TestPatchEOFStatus(t *testing.T) {
	old := prepareAnswer(mysqlproto.StatusAutocommit)
	want := prepareAnswer(mysqlproto.StatusInTrans)
	got := bytes.Clone(old)
	PatchEOFStatus(got, mysqlproto.StatusInTrans)
	if !bytes.Equal(got, want) {
		t.Errorf("patched answer\n%q\nwant\n%q", got, want)
	}
}

// FuzzPatchEOFStatus: any bytes, whole packets or not, are patched in
// place without a panic and keep their length; patching them again
// changes nothing.
func FuzzPatchEOFStatus(f *testing.F) {
	f.Add(prepareAnswer(mysqlproto.StatusAutocommit), uint16(mysqlproto.StatusInTrans))
	f.Add(prepareAnswer(0)[:20], uint16(0xffff))
	f.Add([]byte{5, 0, 0, 1, 0xfe}, uint16(2))
	f.Add([]byte{}, uint16(0))
	f.Fuzz(func(t *testing.T, answer []byte, status uint16) {
		got := bytes.Clone(answer)
		PatchEOFStatus(got, mysqlproto.ServerStatus(status))
		if len(got) != len(answer) {
			t.Fatalf("length %d, was %d", len(got), len(answer))
		}
		again := bytes.Clone(got)
		PatchEOFStatus(again, mysqlproto.ServerStatus(status))
		if !bytes.Equal(again, got) {
			t.Fatal("patching twice changed the bytes again")
		}
	})
}
