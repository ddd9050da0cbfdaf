package sandbox

import "os"

// ProbeKernel finds what macOS gives the sandbox: sandbox-exec, whose
// Seatbelt profile confines each command.
func ProbeKernel() Kernel {
	if _, err := os.Stat(sandboxExec); err != nil {
		return Kernel{Weaker: sandboxExec + " is missing, so ralph cannot confine the model's commands",
			Fix: "restore " + sandboxExec + " (part of macOS), or run with --sandbox danger-full-access only on a machine you can lose"}
	}
	return Kernel{Mechanism: "seatbelt"}
}
