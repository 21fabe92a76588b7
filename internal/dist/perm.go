package dist

import "math/bits"

// Perm is a pseudo-random bijection of [0, n): a balanced Feistel network
// on the smallest even power of two covering n, with cycle walking to stay
// inside [0, n). Apply and Inverse are O(1) expected time and allocate
// nothing. Perms with the same n and seed are identical in every process.
type Perm struct {
	n        int64
	halfBits uint
	mask     uint64
	keys     [4]uint64
}

// NewPerm makes the permutation of [0, n) for seed. n < 1 yields the empty
// permutation.
func NewPerm(n int64, seed uint64) *Perm {
	p := &Perm{n: n}
	total := uint(0)
	if n > 1 {
		total = uint(bits.Len64(uint64(n - 1)))
	}
	if total%2 == 1 {
		total++
	}
	if total < 2 {
		total = 2
	}
	p.halfBits = total / 2
	p.mask = 1<<p.halfBits - 1
	x := seed
	for i := range p.keys {
		x = splitmix64(x)
		p.keys[i] = x
	}
	return p
}

// splitmix64 is a 64-bit mixing function (Steele et al.) used for keys
// and round functions.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func (p *Perm) round(i int, v uint64) uint64 {
	return splitmix64(v^p.keys[i]) & p.mask
}

func (p *Perm) encrypt(x uint64) uint64 {
	l, r := x>>p.halfBits, x&p.mask
	for i := range p.keys {
		l, r = r, l^p.round(i, r)
	}
	return l<<p.halfBits | r
}

func (p *Perm) decrypt(x uint64) uint64 {
	l, r := x>>p.halfBits, x&p.mask
	for i := len(p.keys) - 1; i >= 0; i-- {
		l, r = r^p.round(i, l), l
	}
	return l<<p.halfBits | r
}

// N is the size of the permuted range.
func (p *Perm) N() int64 { return p.n }

// Apply maps i in [0, n) to its image in [0, n).
func (p *Perm) Apply(i int64) int64 {
	if p.n <= 1 {
		return i
	}
	x := uint64(i)
	for {
		x = p.encrypt(x)
		if x < uint64(p.n) {
			return int64(x)
		}
	}
}

// Inverse maps an image back: Inverse(Apply(i)) == i.
func (p *Perm) Inverse(j int64) int64 {
	if p.n <= 1 {
		return j
	}
	x := uint64(j)
	for {
		x = p.decrypt(x)
		if x < uint64(p.n) {
			return int64(x)
		}
	}
}
