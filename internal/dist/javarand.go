package dist

// JavaRandom is the 48-bit linear congruential generator of
// java.util.Random (Knuth, TAOCP vol. 2, 3.2.1; the constants and the
// derivation of each method's result are part of the Java platform's
// specification). The reference draws its shufflers' rotations from it,
// so reproducing it bit for bit is what puts every degree on the id the
// reference gives it. It is not safe for concurrent use.
type JavaRandom struct {
	state uint64 // low 48 bits
}

const (
	javaMultiplier = 0x5DEECE66D
	javaIncrement  = 0xB
	javaMask       = 1<<48 - 1
)

// NewJavaRandom seeds the generator as new java.util.Random(seed) does.
func NewJavaRandom(seed int64) *JavaRandom {
	return &JavaRandom{state: (uint64(seed) ^ javaMultiplier) & javaMask}
}

// next advances the state and returns its top bits bits (1 to 32) as a
// signed 32-bit value, as Random.next(bits).
func (r *JavaRandom) next(bits uint) int32 {
	r.state = (r.state*javaMultiplier + javaIncrement) & javaMask
	return int32(int64(r.state) >> (48 - bits))
}

// NextInt is Random.nextInt(): 32 uniformly distributed bits.
func (r *JavaRandom) NextInt() int32 { return r.next(32) }

// NextIntN is Random.nextInt(bound) for bound > 0: uniform in [0, bound),
// with the rejection step that removes the modulo bias. It returns 0 for
// bound <= 0, where Java throws.
func (r *JavaRandom) NextIntN(bound int32) int32 {
	if bound <= 0 {
		return 0
	}
	if bound&(bound-1) == 0 { // a power of two: take the high bits
		return int32((int64(bound) * int64(r.next(31))) >> 31)
	}
	for {
		bits := r.next(31)
		val := bits % bound
		// Java's int arithmetic wraps: a negative sum means bits fell
		// into the incomplete last interval.
		if bits-val+(bound-1) >= 0 {
			return val
		}
	}
}

// NextLong is Random.nextLong(): two 32-bit draws.
func (r *JavaRandom) NextLong() int64 {
	hi := int64(r.next(32))
	return hi<<32 + int64(r.next(32))
}

// NextDouble is Random.nextDouble(): 53 random bits scaled to [0, 1).
func (r *JavaRandom) NextDouble() float64 {
	hi := int64(r.next(26))
	lo := int64(r.next(27))
	return float64(hi<<27+lo) * (1.0 / (1 << 53))
}
