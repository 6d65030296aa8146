package mysqlproto

import "fmt"

// FinishResponse reads the rest of the current response's frames after
// its MySQL packets are complete, for a client-role framer. A server may
// send the final frame, the one flagged OB20LastPacket, with no packet
// bytes at all (it flushed the packets in earlier frames), so a reader
// that stops at the end of the MySQL response would leave that frame to be
// taken for the answer to its next request. It returns at once when the
// last frame read was the final one, and an error when a frame after the
// response carries packet bytes or breaks the order.
func (f *OB20Framer) FinishResponse() error {
	if len(f.unread) > 0 {
		return fmt.Errorf("%w: %d bytes after the response", ErrOB20Malformed, len(f.unread))
	}
	for f.hdr.Flags&OB20LastPacket == 0 {
		if _, _, packets, err := f.ReadFrame(); err != nil {
			return err
		} else if len(packets) > 0 {
			return fmt.Errorf("%w: %d bytes after the response", ErrOB20Malformed, len(packets))
		}
	}
	return nil
}
