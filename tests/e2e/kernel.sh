# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Kernel frames: BPF programs named from kallsyms in a [bpf] mapping, and
# kallsyms read again when kernel code appears during the run.
. tests/lib.sh
export HOME=$T

# A system-call-heavy process; 1 s into the run a BPF program is loaded that
# spins on each of its system calls, so samples land inside the new program.
start_workload syscall 8 64
pid=$!
(sleep 1; "$O/tests/bpf-busy" $pid 2) &
BG_PIDS+=($!)
$BPFPROF -F 999 -d 4 -p $pid -o "$T/k.folded" -o "$T/k.pb.gz" 2> "$T/k.err"
inside=$(sum_matching "$T/k.folded" ';bpf_prog_[0-9a-f]+_busy_sys_enter_\[k\](;|$)')
total=$(folded_total "$T/k.folded")
if [ "$inside" -gt 100 ]; then
	ok "a BPF program loaded mid-run is named bpf_prog_TAG_busy_sys_enter in $inside of $total samples"
else
	not_ok "BPF program loaded mid-run: $inside of $total samples name it"
	grep bpf_prog "$T/k.folded" | head -3 | cut -c1-300 | sed 's/^/#   /'
fi
check "its frames sit under the tracepoint that ran it" \
	'grep -q ";bpf_trace_run2_\[k\];bpf_prog_[0-9a-f]*_busy_sys_enter_\[k\]" "$T/k.folded"'
go tool pprof -raw "$T/k.pb.gz" > "$T/k.raw" 2> /dev/null
check "pprof: a [bpf] mapping next to [kernel.kallsyms]" \
	"grep -q ' \[bpf\] ' '$T/k.raw' && grep -q ' \[kernel.kallsyms\] ' '$T/k.raw'"
