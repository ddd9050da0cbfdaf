package sandbox

import (
	"strings"
	"testing"
)

// TestProbeKernelForced checks that with user namespaces forced off the
// probe reports the weaker sandbox and the fix, whatever the kernel allows.
func TestProbeKernelForced(t *testing.T) {
	t.Setenv(NoUserNamespacesEnv, "1")
	k := ProbeKernel()
	if k.UserNamespaces || !k.Forced || k.Weaker == "" || k.Fix == "" {
		t.Fatalf("ProbeKernel with %s set = %+v", NoUserNamespacesEnv, k)
	}
	if k.LandlockABI > 0 && (k.Mechanism != "landlock" || !strings.Contains(k.Fix, "unset "+NoUserNamespacesEnv)) {
		t.Errorf("ProbeKernel with %s set and Landlock = %+v", NoUserNamespacesEnv, k)
	}
}
