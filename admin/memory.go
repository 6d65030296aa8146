package admin

import (
	"runtime"
	"strconv"

	"obgate/mysqlproto"
)

// memoryColumns and objpoolColumns are ODP's SHOW PROXYMEMORY and SHOW
// PROXYMEMORY OBJPOOL columns (ob_show_memory_handler.cpp); ODP prints
// every number as text.
var (
	memoryColumns = []string{"mod_name", "mod_type", "hold", "used", "count", "avg_used",
		"hold bytes, alloc times and backtraces(addr2line -Cfe obproxy 0xXXXX)"}
	objpoolColumns = []string{"free_list_name", "allocated", "in_use", "count", "type_size",
		"chunk_count", "chunk_byte_size", "hold bytes, alloc times and backtraces(addr2line -Cfe obproxy 0xXXXX)"}
)

// showMemory answers SHOW PROXYMEMORY [n]: the Go runtime's memory by
// class (runtime.MemStats), as ODP lists its allocator's modules. hold is
// what the runtime obtained from the OS for the class, used what is in
// use, count the objects (heap) or goroutines (stack) where the runtime
// counts them, else 0. obgate's own buffers (mcache chunks, netpoll
// buffers) live in the heap and are not listed apart: their allocator
// keeps no counts. ODP's n asks for allocation backtraces, which obgate
// does not record: the last column is empty.
func (a *Admin) showMemory(c command) *mysqlproto.ResultSet {
	rs := newResultSet(memoryColumns)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	add := func(name, typ string, hold, used, count uint64) {
		if c.hasLike && !matchLike(c.like, name) {
			return
		}
		avg := uint64(0)
		if count > 0 {
			avg = used / count
		}
		rs.Rows = append(rs.Rows, []any{name, typ, u64(hold), u64(used), u64(count), u64(avg), ""})
	}
	add("GO_HEAP", "user", ms.HeapSys, ms.HeapAlloc, ms.HeapObjects)
	add("GO_STACK", "user", ms.StackSys, ms.StackInuse, uint64(runtime.NumGoroutine()))
	add("GO_MSPAN", "allocator", ms.MSpanSys, ms.MSpanInuse, 0)
	add("GO_MCACHE", "allocator", ms.MCacheSys, ms.MCacheInuse, 0)
	add("GO_BUCKHASH", "allocator", ms.BuckHashSys, ms.BuckHashSys, 0)
	add("GO_GC_METADATA", "allocator", ms.GCSys, ms.GCSys, 0)
	add("GO_OTHER", "allocator", ms.OtherSys, ms.OtherSys, 0)
	add("GO_TOTAL", "allocator", ms.Sys,
		ms.HeapAlloc+ms.StackInuse+ms.MSpanInuse+ms.MCacheInuse+ms.BuckHashSys+ms.GCSys+ms.OtherSys, 0)
	// The memory guard: hold is proxy_mem_limited, used the live heap it
	// compares with it (obgate_client_refused_total{reason="memory"} counts
	// the clients refused); mod_type
	// says whether new clients are refused now.
	mg := a.srv.MemoryState()
	state := "admitting"
	if mg.High {
		state = "refusing"
	}
	add("PROXY_MEM_LIMITED", state, uint64(max(mg.Limit, 0)), uint64(max(mg.InUse, 0)), 0)
	return rs
}

// showObjpool answers SHOW PROXYMEMORY OBJPOOL [n] [LIKE]: the Go
// allocator's size classes, the free lists small objects come from, as
// ODP lists its object pools: allocated is the bytes ever allocated from
// the class, in_use and count the bytes and objects live now, type_size
// the class's object size. The runtime does not say how many spans
// (chunks) a class holds: chunk_count and chunk_byte_size are 0; the
// backtrace column is empty (none are recorded).
func (a *Admin) showObjpool(c command) *mysqlproto.ResultSet {
	rs := newResultSet(objpoolColumns)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	for _, sc := range ms.BySize {
		if sc.Mallocs == 0 {
			continue
		}
		name := "size_class_" + strconv.FormatUint(uint64(sc.Size), 10)
		if c.hasLike && !matchLike(c.like, name) {
			continue
		}
		live := sc.Mallocs - min(sc.Frees, sc.Mallocs)
		size := uint64(sc.Size)
		rs.Rows = append(rs.Rows, []any{name, u64(sc.Mallocs * size), u64(live * size), u64(live), u64(size), "0", "0", ""})
	}
	return rs
}

func u64(n uint64) string { return strconv.FormatUint(n, 10) }
