package sandbox

// Kernel is what this machine gives the sandbox, as `ralph doctor` reports
// it: found by reading the kernel's settings and, on Linux, by trying a
// user namespace once. Nothing is confined by asking.
type Kernel struct {
	// Mechanism names what confines the model's commands here:
	// "landlock and namespaces" (Linux, the full sandbox), "landlock"
	// (Linux without user namespaces), "seatbelt" (macOS) or "" (none).
	Mechanism string `json:"mechanism"`
	// LandlockABI is the kernel's Landlock ABI version, 0 without it.
	LandlockABI int `json:"landlock_abi,omitempty"`
	// UserNamespaces is true when this process may make the user
	// namespace the full sandbox needs.
	UserNamespaces bool `json:"user_namespaces"`
	// AppArmorRestricts is true when AppArmor's
	// kernel.apparmor_restrict_unprivileged_userns takes namespaces away
	// from unprivileged processes (Ubuntu 24.04's default).
	AppArmorRestricts bool `json:"apparmor_restricts_userns,omitempty"`
	// Forced is true when NoUserNamespacesEnv made ralph act as if the
	// kernel refused namespaces.
	Forced bool `json:"forced,omitempty"`
	// Weaker says, in one sentence, what this machine's sandbox does less
	// well than the full one, and Fix how to get the full one; both ""
	// when nothing is weaker.
	Weaker string `json:"weaker,omitempty"`
	Fix    string `json:"fix,omitempty"`
}
