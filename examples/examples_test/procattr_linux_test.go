//go:build linux

package examplestest

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes a started server die with the test binary, even when
// the tests are killed before their cleanups run.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
