package handover_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"obgate/reactor/handover"
	"obgate/reactor/handover/handovertest"
)

// TestHandoverStateRoundTrip: every field survives the encoding.
func TestHandoverStateRoundTrip(t *testing.T) {
	want := handovertest.Sample()
	got, err := handover.Decode(want.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", got, want)
	}
	// A session that cannot move has no move record, and keeps none.
	want.Move = nil
	if got, err = handover.Decode(want.Encode()); err != nil || got.Move != nil {
		t.Fatalf("without a move record: %+v, %v", got.Move, err)
	}
}

// TestHandoverStateVersions: a reader skips an handover.OptionalTag field it does
// not know (a newer writer's detail) and refuses a required one, a
// different version, and a state without its required fields.
func TestHandoverStateVersions(t *testing.T) {
	base := handovertest.Sample().Encode()
	field := func(tag uint16, v []byte) []byte {
		b := binary.LittleEndian.AppendUint16(nil, tag)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
		return append(b, v...)
	}
	withOptional := append(bytes.Clone(base), field(handover.OptionalTag|0x777, []byte("later"))...)
	if _, err := handover.Decode(withOptional); err != nil {
		t.Errorf("an unknown handover.OptionalTag field: %v", err)
	}
	withRequired := append(bytes.Clone(base), field(0x777, []byte("needed"))...)
	if _, err := handover.Decode(withRequired); !errors.Is(err, handover.ErrState) {
		t.Errorf("an unknown required field: %v", err)
	}
	newer := bytes.Clone(base)
	binary.LittleEndian.PutUint16(newer[4:], handover.Version+1)
	if _, err := handover.Decode(newer); !errors.Is(err, handover.ErrState) {
		t.Errorf("version %d: %v", handover.Version+1, err)
	}
	bare := append([]byte(handover.Magic), 0, 0)
	binary.LittleEndian.PutUint16(bare[4:], handover.Version)
	if _, err := handover.Decode(append(bare, field(handover.TagMode, []byte{handover.ModeMySQL})...)); !errors.Is(err, handover.ErrState) {
		t.Errorf("no session id or user: %v", err)
	}
}

// TestHandoverStateTruncated: every prefix of a good state is refused
// or read without a panic.
func TestHandoverStateTruncated(t *testing.T) {
	b := handovertest.Sample().Encode()
	for n := range len(b) {
		if _, err := handover.Decode(b[:n]); err == nil && n < 6 {
			t.Fatalf("a %d-byte prefix was accepted", n)
		}
	}
}

// FuzzHandoverState: no input panics the decoder, and whatever it
// accepts encodes to a state that decodes the same.
func FuzzHandoverState(f *testing.F) {
	f.Add(handovertest.Sample().Encode())
	s := handovertest.Sample()
	s.Move, s.Stmts = nil, nil
	f.Add(s.Encode())
	f.Add([]byte("OBGS\x01\x00"))
	f.Add([]byte("OBGS\x01\x00\x01\x00\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := handover.Decode(b)
		if err != nil {
			return
		}
		again, err := handover.Decode(h.Encode())
		if err != nil {
			t.Fatalf("re-encoded state refused: %v", err)
		}
		if !reflect.DeepEqual(normalizedState(again), normalizedState(h)) {
			t.Fatalf("re-encoded state differs:\n%+v\n%+v", again, h)
		}
	})
}

// normalizedState maps empty and nil byte slices alike, which the
// encoding does not tell apart.
func normalizedState(h *handover.State) *handover.State {
	c := *h
	c.Stmts = append([]handover.Stmt(nil), h.Stmts...)
	for i := range c.Stmts {
		if len(c.Stmts[i].SQL) == 0 {
			c.Stmts[i].SQL = nil
		}
		if len(c.Stmts[i].Types) == 0 {
			c.Stmts[i].Types = nil
		}
	}
	if h.Move != nil {
		m := *h.Move
		for _, b := range []*[]byte{&m.Scramble, &m.Login, &m.Stage1} {
			if len(*b) == 0 {
				*b = nil
			}
		}
		c.Move = &m
	}
	if h.OB != nil {
		o := *h.OB
		for _, b := range []*[]byte{&o.Login, &o.Scramble} {
			if len(*b) == 0 {
				*b = nil
			}
		}
		c.OB = &o
	}
	return &c
}

// TestSampleSetsEveryField: the round trip above covers every field the
// state has, including one added later.
func TestSampleSetsEveryField(t *testing.T) {
	set := handovertest.Set(handovertest.Sample())
	for leaf := range handovertest.Leaves() {
		if !set[leaf] {
			t.Errorf("handovertest.Sample leaves %s unset: the round trip does not cover it", leaf)
		}
	}
}

// TestEncodingUnchanged: the sample encodes to the bytes version 1 of the
// encoding gave it when it was written (testdata/sample-v1.hex, made by
// the obgate that first had these fields), so that a process of this
// build and one of an earlier build read each other's sessions. A change
// that fails it needs a new optional tag, or a new Version.
func TestEncodingUnchanged(t *testing.T) {
	want, err := os.ReadFile("testdata/sample-v1.hex")
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(handovertest.Sample().Encode()); got != strings.TrimSpace(string(want)) {
		t.Fatalf("the sample encodes to\n%s\nwant\n%s", got, want)
	}
}
