// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A C++ workload for demangling: one thread whose CPU time splits 2:1
 * between a const method of a class in a namespace and a function
 * template, both called from a namespaced function:
 *   main -> shapes::run_round(unsigned long) -> shapes::Circle::area() const
 *   main -> shapes::run_round(unsigned long) -> compute<double>(double, int)
 * As in split.c, each round runs chains (work.h) of 2n and n units, n
 * random in 1..8, so the split is 2:1 on any x86-64 CPU and the rounds have
 * no period of their own to alias with sampling. Checked with
 * WL_MEASURE=1 (README, "Test workloads").
 *
 * usage: cxx [SECONDS]   (default 10)
 */
#include "work.h"

#define UNIT 8000	/* chain steps */

volatile uint64_t sink;
static struct meter meters[] = { { "shapes::Circle::area", 0, 0 }, { "compute<double>", 0, 0 } };

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
	uint64_t x = sink;

	CHAIN(x, 2 * units_ * UNIT);
	sink = x;
	return (double)(x >> 12);
}

} // namespace shapes

template <typename T> __attribute__((noinline)) T compute(T scale, int units)
{
	uint64_t x = sink;

	CHAIN(x, (uint64_t)units * UNIT);
	sink = x;
	return scale * (T)(x >> 12);
}

namespace shapes {

__attribute__((noinline)) double run_round(uint64_t units)
{
	Circle c(units);
	double a = 0, b = 0;

	METERED(meters[0], a = c.area());
	METERED(meters[1], b = compute<double>(0.5, (int)units));
	return a + b;
}

} // namespace shapes

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10, end = now() + seconds, total = 0;
	uint64_t x = 88172645463325252ULL;

	while (now() < end)
		for (int i = 0; i < 50; i++)
			total += shapes::run_round(1 + next_random(&x) % 8);
	report_meters(meters, 2);
	return total == 1.5 ? 1 : 0;
}
