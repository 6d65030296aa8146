package mysqlproto

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// lendingBuffer is an OutputLender over a bytes.Buffer that checks the
// framer's side of the contract: every lent buffer is filled completely
// and sent exactly once.
type lendingBuffer struct {
	out     bytes.Buffer
	lent    []byte
	lends   int
	sends   int
	failErr error
}

func (l *lendingBuffer) Write(p []byte) (int, error) {
	panic("a lending writer must not be written to")
}

func (l *lendingBuffer) LendOutput(n int) ([]byte, error) {
	if l.failErr != nil {
		return nil, l.failErr
	}
	if l.lent != nil {
		panic("LendOutput twice without SendLent")
	}
	l.lends++
	l.lent = bytes.Repeat([]byte{0xEE}, n) // poison: every byte must be written
	return l.lent, nil
}

func (l *lendingBuffer) SendLent() error {
	if l.lent == nil {
		panic("SendLent without LendOutput")
	}
	l.sends++
	l.out.Write(l.lent)
	l.lent = nil
	return nil
}

// TestOB20FramerLentOutputMatchesCopied writes the same requests through a
// plain writer and through one that lends its buffer: the bytes on the
// wire must be the same, including split frames and extra info.
func TestOB20FramerLentOutputMatchesCopied(t *testing.T) {
	big, _ := AppendPacket(nil, 0, bytes.Repeat([]byte{'q'}, 2500))
	extra := AppendOB20ExtraItem(nil, OB20ExtraTraceInfo, []byte("client_ip=127.0.0.1"))
	for _, tc := range []struct {
		name    string
		packets []byte
		extra   []byte
		flags   OB20Flags
	}{
		{"select 1", selectOnePacket(), nil, OB20LastPacket},
		{"with extra", selectOnePacket(), extra, OB20LastPacket | OB20NewExtraInfo},
		{"split", big, extra, OB20LastPacket | OB20NewExtraInfo},
		{"split without extra", big, nil, 0},
		{"empty last frame", nil, nil, OB20LastPacket},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var copied bytes.Buffer
			lent := &lendingBuffer{}
			a := NewOB20Framer(nil, &copied, FramerClient, 42)
			b := NewOB20Framer(nil, lent, FramerClient, 42)
			for _, f := range []*OB20Framer{a, b} {
				f.SetMaxPayload(1000)
				f.SetNextRequestID(5)
				f.BeginRequest()
				if err := f.WriteFrame(tc.packets, tc.extra, tc.flags); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(copied.Bytes(), lent.out.Bytes()) {
				t.Fatalf("lent output differs\n got %x\nwant %x", lent.out.Bytes(), copied.Bytes())
			}
			if lent.lends != 1 || lent.sends != 1 {
				t.Fatalf("%d lends, %d sends: want one of each per write", lent.lends, lent.sends)
			}
			if a.NextSequence() != b.NextSequence() {
				t.Fatalf("sequence %d after lent write, %d after copied", b.NextSequence(), a.NextSequence())
			}
		})
	}
}

func TestOB20FramerLentOutputError(t *testing.T) {
	boom := errors.New("closed")
	f := NewOB20Framer(nil, &lendingBuffer{failErr: boom}, FramerServer, 1)
	if err := f.WriteFrame(selectOnePacket(), nil, OB20LastPacket); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	// A working lender: the extra info that cannot fit is refused before
	// anything is lent.
	ok := &lendingBuffer{}
	g := NewOB20Framer(nil, ok, FramerServer, 1)
	g.SetMaxPayload(50)
	if err := g.WriteFrame(nil, make([]byte, 100), 0); err == nil {
		t.Fatal("extra info larger than a frame was accepted")
	}
	if ok.lends != 0 || ok.out.Len() != 0 {
		t.Fatalf("%d lends, %d bytes sent for a refused frame", ok.lends, ok.out.Len())
	}
}

// TestOB20FramerAcceptFrame unframes frames the caller read itself, with
// the same checks as ReadFrame, and then goes on reading with ReadFrame.
func TestOB20FramerAcceptFrame(t *testing.T) {
	v1 := readHexFile(t, "ob20_v1.hex")
	f := NewOB20Framer(bytes.NewReader(v1), io.Discard, FramerServer, 12345)
	h, extra, packets, err := f.AcceptFrame(v1)
	if err != nil || h.Seq != 0 || extra != nil || !bytes.Equal(packets, selectOnePacket()) {
		t.Fatalf("accept V1: %+v %x %q %v", h, extra, packets, err)
	}
	if f.Header() != h || f.NextSequence() != 1 {
		t.Fatalf("framer state after accept: %+v next %d", f.Header(), f.NextSequence())
	}
	// The reader path still works after an accepted frame.
	if _, _, p, err := f.ReadFrame(); err != nil || !bytes.Equal(p, selectOnePacket()) {
		t.Fatalf("read after accept: %q %v", p, err)
	}

	corrupt := bytes.Clone(v1)
	corrupt[40] ^= 0x20
	for _, tc := range []struct {
		name  string
		frame []byte
		want  error
	}{
		{"payload checksum", corrupt, ErrOB20PayloadChecksum},
		{"truncated", v1[:len(v1)-1], ErrOB20Malformed},
		{"longer than its header", append(bytes.Clone(v1), 0), ErrOB20Malformed},
		{"short header", v1[:10], ErrOB20Truncated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewOB20Framer(nil, io.Discard, FramerServer, 12345)
			if _, _, _, err := g.AcceptFrame(tc.frame); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	g := NewOB20Framer(nil, io.Discard, FramerServer, 0)
	g.SetVerify(false)
	if _, _, _, err := g.AcceptFrame(corrupt); err != nil {
		t.Fatalf("verify off: %v", err)
	}
}

func TestPutOB20FrameMatchesAppend(t *testing.T) {
	h := OB20Header{ConnectionID: 7, RequestID: 9, Seq: 2, Flags: OB20LastPacket | OB20ExtraInfoExist}
	extra := []byte("xyz")
	for _, ex := range [][]byte{nil, extra, {}} {
		want := AppendOB20Frame([]byte("prefix"), h, ex, selectOnePacket())[len("prefix"):]
		got := make([]byte, OB20FrameLenFor(ex, selectOnePacket())+5)
		if n := PutOB20Frame(got, h, ex, selectOnePacket()); n != len(want) || !bytes.Equal(got[:n], want) {
			t.Fatalf("extra %q: put %x (%d), append %x", ex, got[:n], n, want)
		}
	}
}

// BenchmarkOB20FramerWriteLent is BenchmarkOB20FramerWrite into a lent
// buffer: no copy through the framer's own buffer, no allocation.
func BenchmarkOB20FramerWriteLent(b *testing.B) {
	out := &discardLender{buf: make([]byte, 4096)}
	f := NewOB20Framer(nil, out, FramerServer, 1)
	p := selectOnePacket()
	b.ReportAllocs()
	for b.Loop() {
		if err := f.WriteFrame(p, nil, OB20LastPacket); err != nil {
			b.Fatal(err)
		}
	}
}

type discardLender struct{ buf []byte }

func (d *discardLender) Write(p []byte) (int, error)      { return len(p), nil }
func (d *discardLender) LendOutput(n int) ([]byte, error) { return d.buf[:n], nil }
func (d *discardLender) SendLent() error                  { return nil }
