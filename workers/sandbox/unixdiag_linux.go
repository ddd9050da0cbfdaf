package sandbox

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/ralph-dev/ralph/workers/proctree"
)

// Finding the server of a Unix socket file: the kernel's sock_diag
// interface lists the bound Unix sockets of a network namespace with the
// device and inode of the file each is bound to and the name it was bound
// as; /proc then says which processes hold the socket.

// unix_diag (linux/unix_diag.h), which x/sys/unix does not define.
const (
	udiagShowName = 0x1
	udiagShowVFS  = 0x2
	udiagShowPeer = 0x4

	unixDiagName = 0
	unixDiagVFS  = 1
	unixDiagPeer = 2

	tcpEstablished = 1
	tcpClose       = 7
	tcpListen      = 10
)

// unixDiagReq is struct unix_diag_req.
type unixDiagReq struct {
	Family   uint8
	Protocol uint8
	Pad      uint16
	States   uint32
	Ino      uint32
	Show     uint32
	Cookie   [2]uint32
}

// unixDiagMsg is struct unix_diag_msg.
type unixDiagMsg struct {
	Family uint8
	Type   uint8
	State  uint8
	Pad    uint8
	Ino    uint32
	Cookie [2]uint32
}

// boundSocket is one bound Unix socket as sock_diag reports it.
type boundSocket struct {
	ino      uint32 // the socket's inode in sockfs ("socket:[ino]" in /proc/PID/fd)
	typ      uint8
	state    uint8
	name     string // the name it was bound as
	vfsIno   uint32 // the socket file's inode and device (the kernel's encoding)
	vfsDev   uint32
	haveVFS  bool
	peer     uint32 // the peer's sockfs inode, when asked for
	havePeer bool
}

// unixListener is the server side of a socket file: the bound socket,
// and whether it is in the sandbox's network namespace.
type unixListener struct {
	boundSocket
	sandboxNet bool
}

var diagSeq atomic.Uint32

// listenerOf finds the socket bound to the file open at fd: the listening
// socket of a stream or seqpacket server, or a bound datagram socket.
// Sockets belong to the network namespace they were made in, so the
// sandbox's is searched first and then ralph's own, where servers from
// outside the sandbox live when the sandbox has a network of its own.
func (s *connectSupervisor) listenerOf(fd int, st *unix.Stat_t) (unixListener, bool) {
	mountDev := func() uint32 { return mountDevice(fd) }
	var md *uint32
	match := func(b boundSocket) bool {
		if !b.haveVFS || b.vfsIno != uint32(st.Ino) {
			return false
		}
		if b.typ == unix.SOCK_DGRAM {
			if b.state == tcpEstablished {
				return false
			}
		} else if b.state != tcpListen {
			return false
		}
		if b.vfsDev == kernelDev(st.Dev) {
			return true
		}
		// Some file systems (btrfs subvolumes, overlayfs) report a
		// device in stat other than their superblock's, which is what
		// sock_diag gives; the mount's own says which that is.
		if md == nil {
			d := mountDev()
			md = &d
		}
		return *md != 0 && b.vfsDev == *md
	}
	s.diagMu.Lock()
	defer s.diagMu.Unlock()
	if socks, err := diagDump(s.diag); err == nil {
		for _, b := range socks {
			if match(b) {
				return unixListener{boundSocket: b, sandboxNet: true}, true
			}
		}
	}
	if s.sameNet {
		return unixListener{}, false
	}
	s.mu.Lock()
	if s.hostDiag < 0 {
		if d, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG); err == nil {
			s.hostDiag = d
		}
	}
	host := s.hostDiag
	s.mu.Unlock()
	if host < 0 {
		return unixListener{}, false
	}
	if socks, err := diagDump(host); err == nil {
		for _, b := range socks {
			if match(b) {
				return unixListener{boundSocket: b}, true
			}
		}
	}
	return unixListener{}, false
}

// abstractListener finds the socket bound to an abstract name (name is
// sun_path, its leading NUL included) for sockets of type typ, in the
// sandbox's network namespace, where abstract names are looked up.
func (s *connectSupervisor) abstractListener(name string, typ int) (boundSocket, bool) {
	s.diagMu.Lock()
	defer s.diagMu.Unlock()
	socks, err := diagDump(s.diag)
	if err != nil {
		return boundSocket{}, false
	}
	for _, b := range socks {
		if b.name != name || int(b.typ) != typ {
			continue
		}
		if (typ == unix.SOCK_DGRAM && b.state != tcpEstablished) || b.state == tcpListen {
			return b, true
		}
	}
	return boundSocket{}, false
}

// peerOf is the sockfs inode of the peer of the connected socket fd,
// from sock_diag.
func (s *connectSupervisor) peerOf(fd int) (uint32, bool) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return 0, false
	}
	s.diagMu.Lock()
	defer s.diagMu.Unlock()
	seq := diagSeq.Add(1)
	req := unixDiagReq{Family: unix.AF_UNIX, Ino: uint32(st.Ino), Show: udiagShowPeer, Cookie: [2]uint32{^uint32(0), ^uint32(0)}}
	if err := diagSend(s.diag, seq, 0, req); err != nil {
		return 0, false
	}
	var peer uint32
	var found bool
	err := diagReceive(s.diag, seq, func(data []byte) {
		if b, ok := parseDiag(data); ok && b.ino == uint32(st.Ino) && b.havePeer {
			peer, found = b.peer, true
		}
	})
	return peer, err == nil && found
}

// diagDump lists the listening and the unconnected bound Unix sockets of
// the network namespace of the sock_diag socket fd, with their names and
// files.
func diagDump(fd int) ([]boundSocket, error) {
	seq := diagSeq.Add(1)
	req := unixDiagReq{Family: unix.AF_UNIX, States: 1<<tcpListen | 1<<tcpClose, Show: udiagShowName | udiagShowVFS, Cookie: [2]uint32{^uint32(0), ^uint32(0)}}
	if err := diagSend(fd, seq, unix.NLM_F_DUMP, req); err != nil {
		return nil, err
	}
	var out []boundSocket
	err := diagReceive(fd, seq, func(data []byte) {
		if b, ok := parseDiag(data); ok {
			out = append(out, b)
		}
	})
	return out, err
}

// diagSend sends one sock_diag request.
func diagSend(fd int, seq uint32, flags uint16, req unixDiagReq) error {
	var buf bytes.Buffer
	hdr := unix.NlMsghdr{Len: uint32(unix.SizeofNlMsghdr + binary.Size(req)), Type: unix.SOCK_DIAG_BY_FAMILY, Flags: unix.NLM_F_REQUEST | flags, Seq: seq}
	binary.Write(&buf, binary.NativeEndian, hdr)
	binary.Write(&buf, binary.NativeEndian, req)
	if err := unix.Sendto(fd, buf.Bytes(), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("sock_diag: %w", err)
	}
	return nil
}

// diagReceive hands each answer to request seq to each, until the
// kernel says it is done. A request for one socket ends with its one
// answer, or with an error message.
func diagReceive(fd int, seq uint32, each func([]byte)) error {
	rb := make([]byte, 64<<10)
	for {
		n, _, err := unix.Recvfrom(fd, rb, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("sock_diag: %w", err)
		}
		msgs, err := syscall.ParseNetlinkMessage(rb[:n])
		if err != nil {
			return fmt.Errorf("sock_diag: %w", err)
		}
		multi := false
		for _, m := range msgs {
			if m.Header.Seq != seq {
				continue // left from an earlier request that was given up
			}
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return nil
			case unix.NLMSG_ERROR:
				if len(m.Data) >= 4 {
					if e := int32(binary.NativeEndian.Uint32(m.Data)); e != 0 {
						return fmt.Errorf("sock_diag: %w", unix.Errno(-e))
					}
				}
				return nil
			}
			multi = multi || m.Header.Flags&unix.NLM_F_MULTI != 0
			each(m.Data)
		}
		if !multi {
			return nil
		}
	}
}

// parseDiag reads one unix_diag_msg and its attributes.
func parseDiag(data []byte) (boundSocket, bool) {
	var msg unixDiagMsg
	size := binary.Size(msg)
	if len(data) < size {
		return boundSocket{}, false
	}
	binary.Read(bytes.NewReader(data[:size]), binary.NativeEndian, &msg)
	b := boundSocket{ino: msg.Ino, typ: msg.Type, state: msg.State}
	attrs := data[size:]
	for len(attrs) >= unix.SizeofRtAttr {
		l := int(binary.NativeEndian.Uint16(attrs[0:]))
		t := binary.NativeEndian.Uint16(attrs[2:])
		if l < unix.SizeofRtAttr || l > len(attrs) {
			break
		}
		v := attrs[unix.SizeofRtAttr:l]
		switch t {
		case unixDiagName:
			b.name = string(v)
			// A named socket's name ends at its NUL, which binding
			// programs often count in its length; an abstract one's is
			// all its bytes, NULs too.
			if i := strings.IndexByte(b.name, 0); i > 0 {
				b.name = b.name[:i]
			}
		case unixDiagPeer:
			if len(v) >= 4 {
				b.peer, b.havePeer = binary.NativeEndian.Uint32(v), true
			}
		case unixDiagVFS:
			if len(v) >= 8 {
				b.vfsIno = binary.NativeEndian.Uint32(v[0:])
				b.vfsDev = binary.NativeEndian.Uint32(v[4:])
				b.haveVFS = true
			}
		}
		next := (l + unix.RTA_ALIGNTO - 1) &^ (unix.RTA_ALIGNTO - 1)
		if next > len(attrs) {
			break
		}
		attrs = attrs[next:]
	}
	return b, true
}

// kernelDev converts a device number as stat gives it to the kernel's
// internal encoding, which sock_diag uses.
func kernelDev(dev uint64) uint32 {
	return unix.Major(dev)<<20 | unix.Minor(dev)&0xfffff
}

// mountDevice is the superblock's device of the mount the file open at fd
// is on (from /proc/self/mountinfo), in the kernel's encoding; 0 when
// unknown.
func mountDevice(fd int) uint32 {
	var stx unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &stx); err != nil || stx.Mask&unix.STATX_MNT_ID == 0 {
		return 0
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	id := strconv.FormatUint(stx.Mnt_id, 10)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 || fields[0] != id {
			continue
		}
		maj, min, ok := strings.Cut(fields[2], ":")
		if !ok {
			return 0
		}
		a, err1 := strconv.ParseUint(maj, 10, 32)
		b, err2 := strconv.ParseUint(min, 10, 32)
		if err1 != nil || err2 != nil {
			return 0
		}
		return uint32(a)<<20 | uint32(b)&0xfffff
	}
	return 0
}

// heldBySandbox reports whether a process of this sandbox (the helper or
// a descendant of it) holds the socket whose sockfs inode is ino. Each
// holder found is checked again afterwards, through a pidfd, to be a
// descendant of the helper and still the same process, so a pid that
// changed hands while /proc was read does not count.
func (s *connectSupervisor) heldBySandbox(ino uint32) bool {
	want := "socket:[" + strconv.FormatUint(uint64(ino), 10) + "]"
	for _, pid := range sandboxPids(s.helper) {
		pidfd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue
		}
		held := holds(pid, want) && descendsFrom(pid, s.helper) && unix.PidfdSendSignal(pidfd, 0, nil, 0) == nil
		unix.Close(pidfd)
		if held {
			return true
		}
	}
	return false
}

// holds reports whether process pid has a descriptor whose link reads
// want.
func holds(pid int, want string) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if l, err := os.Readlink(dir + e.Name()); err == nil && l == want {
			return true
		}
	}
	return false
}

// sandboxPids lists the helper and its descendants, from one pass over
// /proc.
func sandboxPids(helper int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, err := proctree.ParentPID(pid); err == nil {
			children[ppid] = append(children[ppid], pid)
		}
	}
	out := []int{helper}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// descendsFrom reports whether pid is ancestor or a descendant of it,
// following parent pids through /proc; one that cannot be read does not.
func descendsFrom(pid, ancestor int) bool {
	for range 4096 { // far deeper than any real process tree
		if pid == ancestor {
			return true
		}
		if pid <= 1 {
			return false
		}
		ppid, err := proctree.ParentPID(pid)
		if err != nil {
			return false
		}
		pid = ppid
	}
	return false
}

// threadGroup is the process (thread group) that thread tid belongs to.
func threadGroup(tid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, errors.New("no Tgid in /proc status")
}

// sameNetNamespace reports whether the socket fd (one the helper made)
// belongs to ralph's own network namespace, by the namespaces' cookies,
// which need no privilege to read (/proc/PID/ns/net of the helper does:
// it is not dumpable). When it cannot be known, the answer is yes, the
// safe side: ralph then leaves every connect to the helper.
func sameNetNamespace(fd int) bool {
	theirs, err := unix.GetsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_NETNS_COOKIE)
	if err != nil {
		return true
	}
	own, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return true
	}
	defer unix.Close(own)
	mine, err := unix.GetsockoptUint64(own, unix.SOL_SOCKET, unix.SO_NETNS_COOKIE)
	return err != nil || mine == theirs
}
