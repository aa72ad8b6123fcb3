// Payload shapes, byte for byte as ../payloads.h generates them, so the Go
// and C++ benchmarks compress the same bytes (both report an FNV-1a
// checksum of the first payload: compare fnv32 in the two outputs).
package gzipgo

import "strconv"

type splitMix64 struct{ state uint64 }

func (g *splitMix64) next() uint64 {
	g.state += 0x9e3779b97f4a7c15
	z := g.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func randomPayload(n int, seed uint64) []byte {
	g := splitMix64{seed}
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		v := g.next()
		for k := 0; k < 8 && i+k < n; k++ {
			b[i+k] = byte(v >> (8 * k))
		}
	}
	return b
}

var words = []string{
	`{"task_id":`, `"status":"COMPLETED"`, `,"output":`, `{"step":`, `},`,
	`"worker":"w-`, `",`, `true,`, `"retries":`, `["a","b"]`, ` `,
}

func jsonLikePayload(n int, seed uint64) []byte {
	g := splitMix64{seed}
	b := make([]byte, 0, n+32)
	for len(b) < n {
		b = append(b, words[g.next()%11]...)
		b = strconv.AppendUint(b, g.next()%100000, 10)
	}
	return b[:n]
}

// sets distinct payload sets per benchmark, as in payloads.h.
const sets = 16

func payloadSets(shape string, count, size int) [][][]byte {
	out := make([][][]byte, sets)
	for k := range out {
		for j := 0; j < count; j++ {
			seed := uint64(k*1000 + j + 1)
			if shape == "random" {
				out[k] = append(out[k], randomPayload(size, seed))
			} else {
				out[k] = append(out[k], jsonLikePayload(size, seed))
			}
		}
	}
	return out
}

func fnv32(b []byte) uint32 {
	h := uint32(2166136261)
	for _, c := range b {
		h = (h ^ uint32(c)) * 16777619
	}
	return h
}
