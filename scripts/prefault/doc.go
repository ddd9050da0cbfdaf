// Package prefault maps ralph's own program into its address space as the
// process starts, in a few system calls, where each page it touches would
// otherwise be mapped by a page fault of its own. main imports it for
// that alone.
//
// On a virtual machine whose page faults are slow (each costs about 15 µs
// on the machines ralph is benchmarked on, where the guest's page tables
// are the hypervisor's to change), the 180 faults it spares on the
// program's text and read-only data were an eighth of `ralph --version`
// (1.14×, paired) and a ninth of a one-shot (1.12×). Mapping the 30 MB of
// both costs about 0.3 ms there. The pages are the page cache's, shared
// with every other ralph: the resident size a process viewer shows grows
// by about 10 MB, ralph's own memory (its anonymous pages) not at all.
//
// It is Linux's alone (MADV_POPULATE_READ, 5.14); elsewhere, and on an
// older kernel, the package does nothing.
package prefault
