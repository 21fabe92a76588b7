// Package dist holds the probability distributions of the workload (Zipf,
// uniform, geometric, log-normal, and empirical distributions read from
// Distribution.dat), the reference's arithmetic access modes, and the
// bijective permutations that map popularity ranks to ids.
//
// Every sampler draws from a caller-owned *rand.Rand, allocates nothing
// per draw, and is deterministic for a given seed.
package dist
