#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Seeds for the fuzz targets from real files, into DIR/NAME/: small ELF
# files from the fixtures' sources (GCC and Clang, DWARF 4 and 5,
# compressed, stripped, split into a debug file) and their CFI sections,
# the runtimes' libraries and programs found here (LuaJIT, Ruby, Python, PHP; Java's tables
# alone) and small files exporting what their detectors look for,
# this machine's /proc/PID/maps and slices of /proc/kallsyms, a perf map Node.js writes,
# and side-band records of a real fork and exec (sbcapture, as root).
#
# usage: O=build tests/fuzz/seeds.sh DIR
set -eu
dir=$1
O=${O:-build}
CC=${CC:-cc}
CLANG=${CLANG:-clang}

rm -rf "$dir"
for t in elf dwarf procmaps kallsyms perfmap sideband cfi python profile luajit_file luajit_proto \
	ruby_file python_offsets java_file java_names php_file; do
	mkdir -p "$dir/$t"
done

# ELF and DWARF: as small as a linker makes them, so mutations stay cheap.
small="-nostdlib -shared -fPIC -Wl,--build-id=sha1 -Wl,-z,noseparate-code -Wl,--hash-style=gnu"
d=$dir/dwarf
$CC -Os $small -o "$dir/elf/fixture-gcc.so" tests/fixtures/fixture.c
$CLANG -Os $small -o "$dir/elf/fixture-clang.so" tests/fixtures/fixture.c
strip --strip-all -o "$dir/elf/fixture-stripped.so" "$dir/elf/fixture-gcc.so"
$CC -O2 -g $small -o "$d/dbg-gcc.so" tests/fixtures/debuginfo.c
$CC -O2 -gdwarf-4 $small -o "$d/dbg-gcc-dwarf4.so" tests/fixtures/debuginfo.c
$CLANG -O2 -g $small -o "$d/dbg-clang.so" tests/fixtures/debuginfo.c
$CLANG -O2 -gdwarf-4 $small -o "$d/dbg-clang-dwarf4.so" tests/fixtures/debuginfo.c
objcopy --compress-debug-sections=zlib "$d/dbg-gcc.so" "$d/dbg-gcc-zlib.so"
objcopy --only-keep-debug "$d/dbg-gcc.so" "$d/dbg-gcc.debug"
strip --strip-debug -o "$dir/elf/dbg-linked.so" "$d/dbg-gcc.so"
objcopy --add-gnu-debuglink="$d/dbg-gcc.debug" "$dir/elf/dbg-linked.so"
cp "$d"/* "$dir/elf/"
cp "$O/tests/fixtures/libfixture-stripped.so" "$dir/elf/"

# CFI: the same files, and their sections alone behind fuzz_cfi's flag byte
# (0: .eh_frame, 1: .debug_frame), one built to have only .debug_frame.
c=$dir/cfi
cp "$dir/elf"/* "$c/"
$CC -O2 -g -fno-asynchronous-unwind-tables $small -o "$c/dframe.so" tests/fixtures/fixture.c
for f in fixture-gcc.so fixture-clang.so dframe.so; do
	for s in eh_frame debug_frame; do
		rm -f "$c/section"
		objcopy --dump-section ".$s=$c/section" "$c/$f" "$c/objcopy.out" 2> /dev/null || true
		if [ -s "$c/section" ]; then
			flag='\000'
			if [ $s = debug_frame ]; then flag='\001'; fi
			{ printf "$flag"; cat "$c/section"; } > "$c/$f.$s"
		fi
	done
done
rm -f "$c/section" "$c/objcopy.out"

# Text the kernel writes.
cat /proc/self/maps > "$dir/procmaps/self"
cat /proc/1/maps > "$dir/procmaps/init" 2> /dev/null || rm -f "$dir/procmaps/init"
if [ -r /proc/kallsyms ]; then
	head -n 200 /proc/kallsyms > "$dir/kallsyms/head"
	grep -m 100 '\[' /proc/kallsyms > "$dir/kallsyms/modules" || true
	tail -n 100 /proc/kallsyms > "$dir/kallsyms/tail"
fi

# A perf map as V8 writes it.
if command -v node > /dev/null; then
	# In the seeds' directory: with --perf-basic-prof, V8 also writes a log where it runs.
	(cd "$dir/perfmap" && node --perf-basic-prof -e '
		function hot(n) { let s = 0; for (let i = 0; i < n; i++) s += i % 7; return s; }
		const o = { get x() { return hot(1e5); } };
		for (let i = 0; i < 200; i++) o.x;
		console.log(process.pid);' > pid)
	pid=$(cat "$dir/perfmap/pid")
	rm -f "$dir/perfmap/pid" "$dir/perfmap"/isolate-*-v8.log
	if [ -f "/tmp/perf-$pid.map" ]; then
		head -c 16384 "/tmp/perf-$pid.map" > "$dir/perfmap/node"
		rm -f "/tmp/perf-$pid.map"
	fi
fi

# The runtimes' detectors: this machine's libraries, and small files that
# export what each looks for (the rest of the way is the fuzzer's).
lib=/usr/lib/x86_64-linux-gnu
for f in $lib/libluajit-5.1.so.2 /usr/bin/luajit; do
	if [ -f "$f" ]; then cp -L "$f" "$dir/luajit_file/$(basename "$f")"; fi
done
for f in $lib/libruby-3.1.so $lib/libruby-3.3.so; do
	if [ -f "$f" ]; then cp -L "$f" "$dir/ruby_file/$(basename "$f")"; fi
done
if [ -f /usr/bin/php8.2 ]; then cp /usr/bin/php8.2 "$dir/php_file/php8.2"; fi
for f in $lib/libpython3.11.so.1.0 $lib/libpython3.12.so.1.0 $lib/libpython3.13.so.1.0; do
	if [ -f "$f" ]; then cp -L "$f" "$dir/python_offsets/$(basename "$f")"; fi
done
src=$dir/exports.c
printf '%s\n' 'int luaJIT_setmode(void *L, int i, int m) { return i + m; }' > "$src"
$CC -Os $small -o "$dir/luajit_file/exports-upstream.so" "$src"
printf '%s\n' 'int lua_getexdata(void *L) { return 1; }' >> "$src"
$CC -Os $small -o "$dir/luajit_file/exports-openresty.so" "$src"
printf '%s\n' 'const int ruby_api_version[3] = { 3, 3, 0 };' '__thread void *ruby_current_ec;' \
	'void *rb_vm_exec(void *ec) { return ruby_current_ec; }' > "$src"
$CC -Os $small -o "$dir/ruby_file/exports-3.3.so" "$src"
# PHP: its version and build strings, executor_globals, and an execute_ex with a frame
# (its CFI's rows); as 8.4, and as a thread-safe 8.2 (committed: exports-8.2).
for v in '8.4.27 API20240924,NTS 8.4' '8.2.36 API20220829,TS zts'; do
	set -- $v
	printf '%s\n' "const char php_powered[] = \"X-Powered-By: PHP/$1\";" \
		"const char php_api[] = \"$2\";" 'char executor_globals[1024];' \
		'int zend_call_function(void *f, void *c) { return f == c; }' \
		'void zend_execute(void *op, void *ret) { executor_globals[0] = op == ret; }' \
		'void execute_ex(void *ex) { volatile char b[256]; b[0] = 1; zend_call_function(ex, (void *)b); }' \
		> "$src"
	$CC -Os $small -o "$dir/php_file/exports-$3.so" "$src"
done
for v in 030a 030c 030d; do
	printf '%s\n' "const unsigned Py_Version = 0x${v}00f0;" 'struct { long r; void *t; } PyCode_Type;' \
		'struct { char c[8]; unsigned long v, ft, o[120]; }' \
		"_PyRuntime = { \"xdebugpy\", 0x${v}00f0 };" \
		'long Py_NewRef(long x) { return x + 1; }' > "$src"
	$CC -Os $small -o "$dir/python_offsets/exports-$v.so" "$src"
done
# A HotSpot JVM's vmStructs tables, a few entries of each (its libjvm.so is too big a seed).
cat > "$src" << 'EOF'
struct s { const char *type, *field, *type_string; int is_static; unsigned long off; void *addr; };
struct t { const char *type, *super; int oop, integer, uns; unsigned long size; };
struct c { const char *name; long value; };
static void *heaps, *lo, *hi;
static int major = 17;
static struct s structs[] = {
	{ "CodeCache", "_heaps", "GrowableArray<CodeHeap*>*", 1, 0, &heaps },
	{ "CodeCache", "_low_bound", "address", 1, 0, &lo },
	{ "CodeCache", "_high_bound", "address", 1, 0, &hi },
	{ "Abstract_VM_Version", "_vm_major_version", "int", 1, 0, &major },
	{ "CodeBlob", "_name", "const char*", 0, 0, 0 },
	{ "CodeBlob", "_size", "int", 0, 0, 0 },
	{ "nmethod", "_compile_id", "int", 0, 0, 0 },
	{ "Method", "_constMethod", "ConstMethod*", 0, 0, 0 },
	{ "Symbol", "_length", "u2", 0, 0, 0 },
	{ 0 } };
static struct t types[] = { { "CodeBlob", 0 }, { "nmethod", "CodeBlob" }, { "ConstMethod", 0 },
	{ "HeapBlock", 0 }, { "PcDesc", 0 }, { "int", 0, 0, 1 }, { 0 } };
static struct c ints[] = { { "JVM_ACC_NATIVE", 0x100 }, { 0 } };
static struct c longs[] = { { "markWord::hash_mask", 0x7fffffff }, { 0 } };
struct s *gHotSpotVMStructs = structs;
struct t *gHotSpotVMTypes = types;
struct c *gHotSpotVMIntConstants = ints, *gHotSpotVMLongConstants = longs;
unsigned long gHotSpotVMStructEntryArrayStride, gHotSpotVMTypeEntryArrayStride;
int get_major(void) { return major + !!heaps + !!lo + !!hi; }
EOF
$CC -Os $small -o "$dir/java_file/vmstructs-17.so" "$src"
rm -f "$src"
# LuaJIT prototypes: the committed ones are built by hand (tests/fuzz/corpus/luajit_proto).

# Side-band records of a real fork, exec and exit.
"$O/fuzz/sbcapture" "$dir/sideband" || echo "seeds: no side-band records (run as root)" >&2
