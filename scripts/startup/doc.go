// Package startup is what ralph does as its process starts, before the
// rest of its packages are initialised: main imports it for its init
// alone, and it imports nothing but the standard library's os and
// syscall, so that its init runs among the first (Go initialises the
// packages that are ready in the order of their import paths).
//
// `ralph --version`, alone, is answered there (version.go): the line is
// the one the command tree's version template prints. Printed after the
// 210 packages' initialisation it took 22 ms here, where a Go
// hello-world takes 7; printed here, 11.5 ms.
//
// Then, on Linux, ralph's own program is mapped into its address space
// in a few system calls (prefault_linux.go), where each page it touches
// would otherwise be mapped by a page fault of its own. On a virtual
// machine whose page faults are slow (each costs about 15 µs on the
// machines ralph is benchmarked on, where the guest's page tables are the
// hypervisor's to change), the 180 faults it spares on the program's text
// and read-only data were an eighth of `ralph --version` (1.14×, paired)
// and a ninth of a one-shot (1.12×). Mapping the 30 MB of both costs
// about 0.3 ms there. The pages are the page cache's, shared with every
// other ralph: the resident size a process viewer shows grows by about
// 10 MB, ralph's own memory (its anonymous pages) not at all. Elsewhere,
// and on a Linux before 5.14 (MADV_POPULATE_READ), nothing is mapped.
package startup
