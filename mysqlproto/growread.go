package mysqlproto

import "io"

// packetReadStep is the most a reader of this package allocates for a
// packet or frame before any of its bytes arrived. Beyond it a buffer grows
// by at most what already arrived, so a peer that announces a large length
// and sends little costs little: memory follows the bytes, not the claim.
// It covers almost every login, OK and small query in one step.
const packetReadStep = 4 << 10

// appendReadFull reads exactly n bytes from r and appends them to b. The
// buffer grows as the bytes arrive: each reallocation at most doubles what
// b holds (and is at least packetReadStep), so b's capacity never exceeds
// about twice the bytes really read plus packetReadStep, whatever n claims.
// Nothing beyond the n bytes is read from r. Spare capacity b already has
// is used without a check: the caller owns b and decided to keep it.
//
// On error the bytes read so far are appended; an end of stream before n
// bytes is io.ErrUnexpectedEOF, also when none of them arrived (the caller
// read a header announcing them).
func appendReadFull(r io.Reader, b []byte, n int) ([]byte, error) {
	want := len(b) + n
	for len(b) < want {
		if len(b) == cap(b) {
			b = growCap(b, min(want, len(b)+max(len(b), packetReadStep)))
		}
		k, err := io.ReadFull(r, b[len(b):min(cap(b), want)])
		b = b[:len(b)+k]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return b, err
		}
	}
	return b, nil
}

// growCap returns b with its contents and a capacity of at least c.
func growCap(b []byte, c int) []byte {
	if cap(b) >= c {
		return b
	}
	nb := make([]byte, len(b), max(c, 256))
	copy(nb, b)
	return nb
}
