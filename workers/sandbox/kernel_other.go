//go:build !linux && !darwin

package sandbox

// ProbeKernel reports that ralph has no sandbox on this system.
func ProbeKernel() Kernel {
	return Kernel{Weaker: "ralph cannot confine the model's commands here: " + why(),
		Fix: "run ralph under WSL 2 or on Linux or macOS for the sandbox, or use --sandbox danger-full-access only on a machine you can lose"}
}
