package sandbox

import (
	"encoding/json"
	"fmt"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// ralph and its sandbox helper talk over a SOCK_SEQPACKET socket pair:
// every message is one JSON object in one packet, and the files a command
// needs (its standard streams and the pipe carrying its arguments) travel
// beside the packet as SCM_RIGHTS. The socket pair exists only between
// the two processes: nothing on the file system, so no other process can
// reach the helper.

// Message operations, ralph to helper.
const (
	// opStart starts a command; its files are the request pipe, stdin,
	// stdout and stderr. The command line and environment come through
	// the request pipe, because a packet is limited to the socket's
	// buffer (about 200 KB) and a command and environment may be larger.
	opStart = "start"
	// opReap collects a command's leader once ralph has killed what was
	// left of its process group.
	opReap = "reap"
)

// Message operations, helper to ralph.
const (
	opReady   = "ready"   // confined, serving
	opFailed  = "failed"  // could not confine itself; Err says why
	opStarted = "started" // Pid, or Err when the program did not start
	opExited  = "exited"  // the leader exited and is a zombie, not reaped
	opReaped  = "reaped"  // Status is the leader's wait status
)

// message is every packet either way.
type message struct {
	Op     string             `json:"op"`
	ID     uint64             `json:"id,omitempty"`
	Pid    int                `json:"pid,omitempty"`
	Status syscall.WaitStatus `json:"status,omitempty"`
	Err    string             `json:"err,omitempty"`
}

// request is what opStart's request pipe carries.
type request struct {
	Path string   `json:"path"`
	Args []string `json:"args"`
	Dir  string   `json:"dir"`
	Env  []string `json:"env"`
}

// maxRequest bounds the request pipe's content: execve itself refuses
// arguments and environment past a quarter of the stack limit (2 MB with
// the usual 8 MB), so more than this is never a command that could run.
const maxRequest = 8 << 20

// maxPacket is the largest packet either side reads; messages are small.
const maxPacket = 4096

// packet is what goes either way on a channel between ralph and the
// helper: a message on the command channel, a connectMsg on the connect
// channel (unixsock_helper_linux.go).
type packet interface {
	message | connectMsg
	// files is the most descriptors one packet carries.
	files() int
	// channel names the channel in an error.
	channel() string
}

// The command channel's start carries four files; see opStart.
func (message) files() int      { return 4 }
func (message) channel() string { return "from the other side" }

// send writes one packet with files attached: the one way either side
// sends on either channel.
func send[P packet](conn *net.UnixConn, m P, fds ...int) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	_, _, err = conn.WriteMsgUnix(b, oob, nil)
	return err
}

// receive reads one packet and the files attached to it, which are
// close-on-exec (net sets MSG_CMSG_CLOEXEC), so a command started
// concurrently never inherits another's descriptors. On an error no file
// is left open.
func receive[P packet](conn *net.UnixConn) (P, []int, error) {
	var m P
	buf := make([]byte, maxPacket)
	oob := make([]byte, unix.CmsgSpace(m.files()*4))
	n, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
	if err != nil {
		return m, nil, err
	}
	var fds []int
	if oobn > 0 {
		cmsgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return m, nil, fmt.Errorf("control message: %w", err)
		}
		for _, c := range cmsgs {
			got, err := unix.ParseUnixRights(&c)
			if err != nil {
				closeAll(fds)
				return m, nil, fmt.Errorf("control message: %w", err)
			}
			fds = append(fds, got...)
		}
	}
	if n == 0 {
		closeAll(fds)
		return m, nil, net.ErrClosed // the peer closed its end
	}
	if err := json.Unmarshal(buf[:n], &m); err != nil {
		closeAll(fds)
		var zero P
		return zero, nil, fmt.Errorf("bad message %s: %w", m.channel(), err)
	}
	return m, fds, nil
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
