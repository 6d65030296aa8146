package reactor

import "github.com/bytedance/gopkg/lang/mcache"

// chunkSize is the size of the pooled buffer a command borrows to read a
// server's response. A response larger than this streams through it: a
// slow client slows the server down through TCP instead of filling
// obgate's memory.
const chunkSize = 64 << 10

// getChunk borrows a response buffer; putChunk returns it. A buffer is
// owned by the goroutine running one command from getChunk to putChunk.
func getChunk(n int) []byte { return mcache.Malloc(n) }

func putChunk(b []byte) {
	if cap(b) > 0 {
		mcache.Free(b)
	}
}
