// The Go side of the gzip comparison: payloads compressed the way Hatchet's
// msgqueue.Compressor.CompressPayloads does it (a pooled gzip.Writer at
// compress/gzip's default level, one gzip stream per payload, a fresh
// bytes.Buffer each), on the same shapes and sizes as ../gzip_bench.cc.
//
//	go test -run '^$' -bench . -benchtime 1s
//
// Reports wall ns/op, MB/s, and cpu-ns/op: the process's CPU time
// (getrusage, so it includes the garbage collector's threads), comparable
// with the C++ benchmark's process CPU time.
package gzipgo

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"sync"
	"syscall"
	"testing"
)

var writers = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

func compressPayloads(payloads [][]byte) ([][]byte, error) {
	out := make([][]byte, len(payloads))
	for i, p := range payloads {
		var buf bytes.Buffer
		w := writers.Get().(*gzip.Writer)
		w.Reset(&buf)
		if _, err := w.Write(p); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		writers.Put(w)
		out[i] = buf.Bytes()
	}
	return out, nil
}

func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func BenchmarkCompressPayloads(b *testing.B) {
	for _, shape := range []string{"random", "json"} {
		for _, size := range []struct{ count, kib int }{{1, 10}, {10, 10}, {100, 10}, {10, 100}} {
			name := fmt.Sprintf("%s/%dx%dKiB", shape, size.count, size.kib)
			b.Run(name, func(b *testing.B) {
				all := payloadSets(shape, size.count, size.kib*1024)
				b.SetBytes(int64(size.count * size.kib * 1024))
				var in, out int
				b.ReportAllocs()
				b.ResetTimer()
				cpu := cpuNanos()
				for i := 0; i < b.N; i++ {
					set := all[i%len(all)]
					gz, err := compressPayloads(set)
					if err != nil {
						b.Fatal(err)
					}
					for j := range set {
						in += len(set[j])
						out += len(gz[j])
					}
				}
				cpu = cpuNanos() - cpu
				b.StopTimer()
				b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(out)/float64(in), "ratio")
				b.ReportMetric(float64(fnv32(all[0][0])), "fnv32")
			})
		}
	}
}
