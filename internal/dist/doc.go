// Package dist holds the probability distributions of the workload (Zipf,
// uniform, geometric, log-normal, and empirical distributions read from
// Distribution.dat), the reference's arithmetic access modes, and the
// reference's shufflers that map popularity ranks to ids.
//
// Two families of samplers live here: the reference's (RefZipf,
// RefGeometric, NewRefAccess, Shuffler and the java.util.Random generator
// it needs), reproduced from its effective behaviour, and the corrected
// ones (ZipfDist, GeometricDist, NewAccess) of workload_semantics =
// corrected.
//
// Every sampler draws from a caller-owned *rand.Rand and allocates nothing
// per draw. All are deterministic for a given seed except the reference's
// real distribution, whose cursors are shared by the workers of a phase
// as the reference's are shared by its threads.
package dist
