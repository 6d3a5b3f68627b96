// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A C++ workload for demangling: one thread whose CPU time splits 2:1
 * between a const method of a class in a namespace and a function
 * template, both called from a namespaced function:
 *   main -> shapes::run_round(unsigned long) -> shapes::Circle::area() const
 *   main -> shapes::run_round(unsigned long) -> compute<double>(double, int)
 * As in split.c, each round runs the same loop 2n and n times, n random in
 * 1..8, so the rounds have no period of their own to alias with sampling.
 *
 * usage: cxx [SECONDS]   (default 10)
 */
#include <cstdint>
#include <cstdlib>
#include <ctime>

#define UNIT 2000

volatile uint64_t sink;

namespace shapes {

class Circle {
public:
	explicit Circle(uint64_t units) : units_(units) {}
	__attribute__((noinline)) double area() const;

private:
	uint64_t units_;
};

double Circle::area() const
{
	for (uint64_t i = 0; i < 2 * units_ * UNIT; i++)
		sink += i ^ (i >> 3);
	return (double)sink;
}

} // namespace shapes

template <typename T> __attribute__((noinline)) T compute(T scale, int units)
{
	for (uint64_t i = 0; i < (uint64_t)units * UNIT; i++)
		sink += i ^ (i >> 3);
	return scale * (T)sink;
}

namespace shapes {

__attribute__((noinline)) double run_round(uint64_t units)
{
	Circle c(units);

	return c.area() + compute<double>(0.5, (int)units);
}

} // namespace shapes

static double now()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10, end = now() + seconds, total = 0;
	uint64_t x = 88172645463325252ULL;

	while (now() < end) {
		for (int i = 0; i < 50; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			total += shapes::run_round(1 + x % 8);
		}
	}
	return total == 1.5 ? 1 : 0;
}
