package connio

import "github.com/bytedance/gopkg/lang/mcache"

// ChunkSize is the size of the pooled buffer a command borrows to read a
// server's response. A response larger than this streams through it: a
// slow client slows the server down through TCP instead of filling
// obgate's memory.
const ChunkSize = 64 << 10

// GetChunk borrows a response buffer; PutChunk returns it. A buffer is
// owned by the goroutine running one command from GetChunk to PutChunk.
func GetChunk(n int) []byte { return mcache.Malloc(n) }

func PutChunk(b []byte) {
	if cap(b) > 0 {
		mcache.Free(b)
	}
}
