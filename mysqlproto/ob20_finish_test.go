package mysqlproto

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// TestOB20FinishResponseEmptyLastFrame: a server that sends the packets of
// a response in a frame without the LAST flag and then an empty final
// frame; the client reads the packets, finishes the response, and its
// next request's answer is read in order.
func TestOB20FinishResponseEmptyLastFrame(t *testing.T) {
	const conn = 7
	ok := []byte{7, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0}
	var wire bytes.Buffer
	wire.Write(AppendOB20Frame(nil, OB20Header{ConnectionID: conn, RequestID: 1, Seq: 1, CompressedSeq: 1}, nil, ok))
	wire.Write(AppendOB20Frame(nil, OB20Header{ConnectionID: conn, RequestID: 1, Seq: 2, CompressedSeq: 2, Flags: OB20LastPacket}, nil, nil))
	wire.Write(AppendOB20Frame(nil, OB20Header{ConnectionID: conn, RequestID: 2, Seq: 1, CompressedSeq: 1, Flags: OB20LastPacket}, nil, ok))

	f := NewOB20Framer(&wire, io.Discard, FramerClient, conn)
	f.SetNextRequestID(1)
	for req := range 2 {
		f.BeginRequest()
		if err := f.WriteFrame([]byte{1, 0, 0, 0, byte(ComPing)}, nil, OB20LastPacket); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(ok))
		if _, err := io.ReadFull(f, got); err != nil {
			t.Fatalf("request %d: %v", req, err)
		}
		if err := f.FinishResponse(); err != nil {
			t.Fatalf("request %d: FinishResponse: %v", req, err)
		}
	}
}

func TestOB20FinishResponseRefusesTrailingBytes(t *testing.T) {
	var wire bytes.Buffer
	wire.Write(AppendOB20Frame(nil, OB20Header{ConnectionID: 1, RequestID: 1, Seq: 1, CompressedSeq: 1}, nil, []byte{1, 0, 0, 1, 0}))
	wire.Write(AppendOB20Frame(nil, OB20Header{ConnectionID: 1, RequestID: 1, Seq: 2, CompressedSeq: 2, Flags: OB20LastPacket}, nil, []byte{9}))
	f := NewOB20Framer(&wire, io.Discard, FramerClient, 1)
	f.SetNextRequestID(1)
	f.BeginRequest()
	_ = f.WriteFrame([]byte{1, 0, 0, 0, byte(ComPing)}, nil, OB20LastPacket)
	got := make([]byte, 5)
	if _, err := io.ReadFull(f, got); err != nil {
		t.Fatal(err)
	}
	if err := f.FinishResponse(); !errors.Is(err, ErrOB20Malformed) {
		t.Fatalf("FinishResponse with bytes after the response: %v, want ErrOB20Malformed", err)
	}
}
