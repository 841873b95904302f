package request

import "math/bits"

// mix is SplitMix64's finaliser: a bijection on uint64 whose output bits each
// depend on every input bit, so consecutive VUs and iterations land far apart.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// hash3 combines seed, vu and iter; the golden-ratio constant keeps
// (0,0,0) and small inputs from mapping to small outputs.
func hash3(seed, vu, iter uint64) uint64 {
	return mix(mix(mix(seed+0x9e3779b97f4a7c15)^vu) ^ iter)
}

// pick maps (seed, vu, iter) to [0, n) without a shared random source.
// The high word of hash*n is Lemire's multiply-shift reduction: no modulo,
// and a bias below n/2^64.
func pick(seed, vu, iter uint64, n int) int {
	hi, _ := bits.Mul64(hash3(seed, vu, iter), uint64(n))
	return int(hi)
}
