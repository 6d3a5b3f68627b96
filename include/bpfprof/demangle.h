/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Symbol names as a reader wants them: C++ (Itanium "_Z...") and Rust
 * (legacy "_ZN...17h<hash>E" and v0 "_R...") demangled by libiberty.
 * C++ names keep their parameters (they tell overloads apart) and lose
 * the return type of templates; Rust legacy names lose their "::h<hash>",
 * as rustfilt does.
 */
#ifndef BPFPROF_DEMANGLE_H
#define BPFPROF_DEMANGLE_H

/* The readable name (the caller's to free), or NULL when name is not mangled. */
char *demangle(const char *name);

#endif
