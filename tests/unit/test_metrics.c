// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/* /metrics: Prometheus' text format, as promtool reads it, with the figures given. */
#include <stdlib.h>
#include <string.h>

#include "bpfprof/metrics.h"
#include "unit.h"

void test_metrics(void)
{
	static const char *const want[] = {
		"\nbpfprof_samples_total 1234\n",
		"\nbpfprof_off_cpu_waits_total 21\n",
		"\nbpfprof_lost_samples_total{cause=\"stack_collision\"} 5\n",
		"\nbpfprof_lost_samples_total{cause=\"stack_map_full\"} 6\n",
		"\nbpfprof_lost_samples_total{cause=\"counts_map_full\"} 7\n",
		"\nbpfprof_lost_samples_total{cause=\"ring_buffer_full\"} 8\n",
		"\nbpfprof_lost_samples_total{cause=\"off_cpu_ring_buffer_full\"} 9\n",
		"\nbpfprof_saved_samples_total 10\n",
		"\nbpfprof_sideband_lost_records_total 3\n",
		"\nbpfprof_drains_total 17\n",
		"\nbpfprof_processes 42\n",
		"\nbpfprof_stacks 4321\n",
		"\nbpfprof_profile_bytes 123456\n",
		"\nbpfprof_start_time_seconds 1700000000.5\n",
		"\nbpfprof_cpu_seconds_total{mode=\"user\"} ",
		"\nbpfprof_resident_memory_bytes ",
	};
	struct sampler_stats st = { 0 };
	struct session_figures f = { .processes = 42, .stacks = 4321, .profile_bytes = 123456,
				     .sideband_lost = 3, .start_wall_ns = 1700000000500000000ULL };
	char *text, *out;
	size_t i;

	st.total[STAT_USER_MODE] = 1200;
	st.total[STAT_KERNEL_MODE] = 34;
	st.total[STAT_OFF_COUNTED_SET0] = 10;
	st.total[STAT_OFF_COUNTED_SET1] = 8;
	st.total[STAT_OFF_SENT] = 3;
	st.total[STAT_LOST_COLLISION] = 5;
	st.total[STAT_LOST_STACK_FULL] = 6;
	st.total[STAT_LOST_COUNTS_FULL] = 7;
	st.total[STAT_LOST_DWARF] = 8;
	st.total[STAT_OFF_LOST] = 9;
	st.total[STAT_FALLBACK] = 10;
	st.drains = 17;
	text = metrics_text(&st, &f);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK(strstr(text, want[i]), "metrics: has \"%.*s\"", (int)strcspn(want[i] + 1, "\n"), want[i] + 1);
	if (system("command -v promtool > /dev/null 2>&1")) {
		unit_skip("promtool not installed", "metrics: promtool check metrics finds nothing to say");
	} else {
		out = unit_pipe("promtool check metrics 2>&1", text, strlen(text));
		CHECK(out && !*out, "metrics: promtool check metrics finds nothing to say%s%s",
		      out && *out ? ": " : "", out ? out : " (it failed)");
		free(out);
	}
	free(text);
}
