/* Symbolic constants usable in argument conditions.
 *
 * Every value is taken from the system headers by the compiler — nothing is
 * typed by hand — and a name the headers of the build host lack is simply
 * absent (#ifdef), so a policy naming it fails with "unknown constant"
 * instead of silently matching a wrong number. */
#include <config.h>

#include <asm/termbits.h> /* struct termios2, for TCGETS2 and friends */
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/socket.h>

#include "seccomp/seccomp.h"

/* CLONE_* flags newer than glibc's <sched.h> come from the kernel header;
 * it is not included directly because it redefines glibc's CLONE_*. */
#ifndef CLONE_CLEAR_SIGHAND
#define CLONE_CLEAR_SIGHAND 0x100000000ULL
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

struct const_entry {
  const char *name;
  uint64_t value;
};

/* Negative values (AT_FDCWD) are stored sign-extended, i.e. as the 64-bit
 * register value a C caller passes; the compiler masks 32-bit arguments. */
#define C(x) { #x, (uint64_t) (x) },
static const struct const_entry table[] = {
  /* Address families (socket arg0) */
#ifdef AF_UNSPEC
  C (AF_UNSPEC)
#endif
#ifdef AF_UNIX
  C (AF_UNIX)
#endif
#ifdef AF_LOCAL
  C (AF_LOCAL)
#endif
#ifdef AF_INET
  C (AF_INET)
#endif
#ifdef AF_INET6
  C (AF_INET6)
#endif
#ifdef AF_NETLINK
  C (AF_NETLINK)
#endif
#ifdef AF_PACKET
  C (AF_PACKET)
#endif
#ifdef AF_BLUETOOTH
  C (AF_BLUETOOTH)
#endif
#ifdef AF_ALG
  C (AF_ALG)
#endif
#ifdef AF_VSOCK
  C (AF_VSOCK)
#endif
#ifdef AF_KEY
  C (AF_KEY)
#endif
#ifdef AF_APPLETALK
  C (AF_APPLETALK)
#endif
#ifdef AF_AX25
  C (AF_AX25)
#endif
#ifdef AF_IPX
  C (AF_IPX)
#endif
#ifdef AF_X25
  C (AF_X25)
#endif
#ifdef AF_CAN
  C (AF_CAN)
#endif
#ifdef AF_TIPC
  C (AF_TIPC)
#endif
#ifdef AF_RDS
  C (AF_RDS)
#endif
#ifdef AF_LLC
  C (AF_LLC)
#endif
#ifdef AF_XDP
  C (AF_XDP)
#endif
#ifdef AF_MPLS
  C (AF_MPLS)
#endif
#ifdef AF_NFC
  C (AF_NFC)
#endif
#ifdef AF_KCM
  C (AF_KCM)
#endif
#ifdef AF_QIPCRTR
  C (AF_QIPCRTR)
#endif
#ifdef AF_SMC
  C (AF_SMC)
#endif
#ifdef AF_BRIDGE
  C (AF_BRIDGE)
#endif
#ifdef AF_ROSE
  C (AF_ROSE)
#endif
#ifdef AF_DECnet
  C (AF_DECnet)
#endif
#ifdef AF_NETROM
  C (AF_NETROM)
#endif
#ifdef AF_ATMPVC
  C (AF_ATMPVC)
#endif
#ifdef AF_ATMSVC
  C (AF_ATMSVC)
#endif
#ifdef AF_IRDA
  C (AF_IRDA)
#endif
#ifdef AF_PPPOX
  C (AF_PPPOX)
#endif
#ifdef AF_WANPIPE
  C (AF_WANPIPE)
#endif
#ifdef AF_ISDN
  C (AF_ISDN)
#endif
#ifdef AF_PHONET
  C (AF_PHONET)
#endif
#ifdef AF_IEEE802154
  C (AF_IEEE802154)
#endif
#ifdef AF_CAIF
  C (AF_CAIF)
#endif
#ifdef AF_SECURITY
  C (AF_SECURITY)
#endif
#ifdef AF_ECONET
  C (AF_ECONET)
#endif
#ifdef AF_ASH
  C (AF_ASH)
#endif
#ifdef AF_SNA
  C (AF_SNA)
#endif
#ifdef AF_RXRPC
  C (AF_RXRPC)
#endif
#ifdef AF_IUCV
  C (AF_IUCV)
#endif
#ifdef AF_IB
  C (AF_IB)
#endif
#ifdef AF_MCTP
  C (AF_MCTP)
#endif
  /* Socket types and flags (socket arg1) */
#ifdef SOCK_STREAM
  C (SOCK_STREAM)
#endif
#ifdef SOCK_DGRAM
  C (SOCK_DGRAM)
#endif
#ifdef SOCK_RAW
  C (SOCK_RAW)
#endif
#ifdef SOCK_RDM
  C (SOCK_RDM)
#endif
#ifdef SOCK_SEQPACKET
  C (SOCK_SEQPACKET)
#endif
#ifdef SOCK_DCCP
  C (SOCK_DCCP)
#endif
#ifdef SOCK_PACKET
  C (SOCK_PACKET)
#endif
#ifdef SOCK_NONBLOCK
  C (SOCK_NONBLOCK)
#endif
#ifdef SOCK_CLOEXEC
  C (SOCK_CLOEXEC)
#endif
  /* Protocols (socket arg2) */
#ifdef IPPROTO_IP
  C (IPPROTO_IP)
#endif
#ifdef IPPROTO_ICMP
  C (IPPROTO_ICMP)
#endif
#ifdef IPPROTO_TCP
  C (IPPROTO_TCP)
#endif
#ifdef IPPROTO_UDP
  C (IPPROTO_UDP)
#endif
#ifdef IPPROTO_IPV6
  C (IPPROTO_IPV6)
#endif
#ifdef IPPROTO_ICMPV6
  C (IPPROTO_ICMPV6)
#endif
#ifdef IPPROTO_RAW
  C (IPPROTO_RAW)
#endif
#ifdef IPPROTO_SCTP
  C (IPPROTO_SCTP)
#endif
#ifdef IPPROTO_UDPLITE
  C (IPPROTO_UDPLITE)
#endif
#ifdef IPPROTO_MPTCP
  C (IPPROTO_MPTCP)
#endif
#ifdef NETLINK_ROUTE
  C (NETLINK_ROUTE)
#endif
#ifdef NETLINK_USERSOCK
  C (NETLINK_USERSOCK)
#endif
#ifdef NETLINK_SOCK_DIAG
  C (NETLINK_SOCK_DIAG)
#endif
#ifdef NETLINK_NFLOG
  C (NETLINK_NFLOG)
#endif
#ifdef NETLINK_XFRM
  C (NETLINK_XFRM)
#endif
#ifdef NETLINK_SELINUX
  C (NETLINK_SELINUX)
#endif
#ifdef NETLINK_ISCSI
  C (NETLINK_ISCSI)
#endif
#ifdef NETLINK_AUDIT
  C (NETLINK_AUDIT)
#endif
#ifdef NETLINK_FIB_LOOKUP
  C (NETLINK_FIB_LOOKUP)
#endif
#ifdef NETLINK_CONNECTOR
  C (NETLINK_CONNECTOR)
#endif
#ifdef NETLINK_NETFILTER
  C (NETLINK_NETFILTER)
#endif
#ifdef NETLINK_IP6_FW
  C (NETLINK_IP6_FW)
#endif
#ifdef NETLINK_DNRTMSG
  C (NETLINK_DNRTMSG)
#endif
#ifdef NETLINK_KOBJECT_UEVENT
  C (NETLINK_KOBJECT_UEVENT)
#endif
#ifdef NETLINK_GENERIC
  C (NETLINK_GENERIC)
#endif
#ifdef NETLINK_SCSITRANSPORT
  C (NETLINK_SCSITRANSPORT)
#endif
#ifdef NETLINK_ECRYPTFS
  C (NETLINK_ECRYPTFS)
#endif
#ifdef NETLINK_RDMA
  C (NETLINK_RDMA)
#endif
#ifdef NETLINK_CRYPTO
  C (NETLINK_CRYPTO)
#endif
  /* Terminal ioctls (ioctl arg1) */
#ifdef TIOCSTI
  C (TIOCSTI)
#endif
#ifdef TIOCLINUX
  C (TIOCLINUX)
#endif
#ifdef TIOCSCTTY
  C (TIOCSCTTY)
#endif
#ifdef TIOCNOTTY
  C (TIOCNOTTY)
#endif
#ifdef TIOCGWINSZ
  C (TIOCGWINSZ)
#endif
#ifdef TIOCSWINSZ
  C (TIOCSWINSZ)
#endif
#ifdef TIOCGPGRP
  C (TIOCGPGRP)
#endif
#ifdef TIOCSPGRP
  C (TIOCSPGRP)
#endif
#ifdef TIOCGSID
  C (TIOCGSID)
#endif
#ifdef TIOCEXCL
  C (TIOCEXCL)
#endif
#ifdef TIOCNXCL
  C (TIOCNXCL)
#endif
#ifdef TIOCGEXCL
  C (TIOCGEXCL)
#endif
#ifdef TIOCOUTQ
  C (TIOCOUTQ)
#endif
#ifdef TIOCINQ
  C (TIOCINQ)
#endif
#ifdef TIOCMGET
  C (TIOCMGET)
#endif
#ifdef TIOCMSET
  C (TIOCMSET)
#endif
#ifdef TIOCMBIS
  C (TIOCMBIS)
#endif
#ifdef TIOCMBIC
  C (TIOCMBIC)
#endif
#ifdef TIOCCONS
  C (TIOCCONS)
#endif
#ifdef TIOCPKT
  C (TIOCPKT)
#endif
#ifdef TIOCGPKT
  C (TIOCGPKT)
#endif
#ifdef TIOCSETD
  C (TIOCSETD)
#endif
#ifdef TIOCGETD
  C (TIOCGETD)
#endif
#ifdef TIOCSBRK
  C (TIOCSBRK)
#endif
#ifdef TIOCCBRK
  C (TIOCCBRK)
#endif
#ifdef TIOCGPTN
  C (TIOCGPTN)
#endif
#ifdef TIOCSPTLCK
  C (TIOCSPTLCK)
#endif
#ifdef TIOCGPTLCK
  C (TIOCGPTLCK)
#endif
#ifdef TIOCGPTPEER
  C (TIOCGPTPEER)
#endif
#ifdef TIOCGDEV
  C (TIOCGDEV)
#endif
#ifdef TIOCVHANGUP
  C (TIOCVHANGUP)
#endif
#ifdef TIOCGLCKTRMIOS
  C (TIOCGLCKTRMIOS)
#endif
#ifdef TIOCSLCKTRMIOS
  C (TIOCSLCKTRMIOS)
#endif
#ifdef TIOCGSOFTCAR
  C (TIOCGSOFTCAR)
#endif
#ifdef TIOCSSOFTCAR
  C (TIOCSSOFTCAR)
#endif
#ifdef TIOCGRS485
  C (TIOCGRS485)
#endif
#ifdef TIOCSRS485
  C (TIOCSRS485)
#endif
#ifdef TIOCGSERIAL
  C (TIOCGSERIAL)
#endif
#ifdef TIOCSSERIAL
  C (TIOCSSERIAL)
#endif
#ifdef TIOCSERGETLSR
  C (TIOCSERGETLSR)
#endif
#ifdef TIOCGICOUNT
  C (TIOCGICOUNT)
#endif
#ifdef TIOCMIWAIT
  C (TIOCMIWAIT)
#endif
#ifdef TCGETS
  C (TCGETS)
#endif
#ifdef TCSETS
  C (TCSETS)
#endif
#ifdef TCSETSW
  C (TCSETSW)
#endif
#ifdef TCSETSF
  C (TCSETSF)
#endif
#ifdef TCGETS2
  C (TCGETS2)
#endif
#ifdef TCSETS2
  C (TCSETS2)
#endif
#ifdef TCSETSW2
  C (TCSETSW2)
#endif
#ifdef TCSETSF2
  C (TCSETSF2)
#endif
#ifdef TCGETA
  C (TCGETA)
#endif
#ifdef TCSETA
  C (TCSETA)
#endif
#ifdef TCSETAW
  C (TCSETAW)
#endif
#ifdef TCSETAF
  C (TCSETAF)
#endif
#ifdef TCSBRK
  C (TCSBRK)
#endif
#ifdef TCSBRKP
  C (TCSBRKP)
#endif
#ifdef TCXONC
  C (TCXONC)
#endif
#ifdef TCFLSH
  C (TCFLSH)
#endif
  /* File ioctls (ioctl arg1) */
#ifdef FIONREAD
  C (FIONREAD)
#endif
#ifdef FIONBIO
  C (FIONBIO)
#endif
#ifdef FIOCLEX
  C (FIOCLEX)
#endif
#ifdef FIONCLEX
  C (FIONCLEX)
#endif
#ifdef FIOASYNC
  C (FIOASYNC)
#endif
#ifdef FIOQSIZE
  C (FIOQSIZE)
#endif
#ifdef FIOSETOWN
  C (FIOSETOWN)
#endif
#ifdef FIOGETOWN
  C (FIOGETOWN)
#endif
#ifdef FIGETBSZ
  C (FIGETBSZ)
#endif
#ifdef FIBMAP
  C (FIBMAP)
#endif
  /* Socket ioctls (ioctl arg1) */
#ifdef SIOCGIFCONF
  C (SIOCGIFCONF)
#endif
#ifdef SIOCGIFFLAGS
  C (SIOCGIFFLAGS)
#endif
#ifdef SIOCSIFFLAGS
  C (SIOCSIFFLAGS)
#endif
#ifdef SIOCGIFINDEX
  C (SIOCGIFINDEX)
#endif
#ifdef SIOCGIFNAME
  C (SIOCGIFNAME)
#endif
#ifdef SIOCGIFADDR
  C (SIOCGIFADDR)
#endif
#ifdef SIOCSIFADDR
  C (SIOCSIFADDR)
#endif
#ifdef SIOCGIFMTU
  C (SIOCGIFMTU)
#endif
#ifdef SIOCSIFMTU
  C (SIOCSIFMTU)
#endif
#ifdef SIOCGIFHWADDR
  C (SIOCGIFHWADDR)
#endif
#ifdef SIOCADDRT
  C (SIOCADDRT)
#endif
#ifdef SIOCDELRT
  C (SIOCDELRT)
#endif
#ifdef SIOCATMARK
  C (SIOCATMARK)
#endif
#ifdef SIOCGSTAMP
  C (SIOCGSTAMP)
#endif
#ifdef SIOCSPGRP
  C (SIOCSPGRP)
#endif
#ifdef SIOCGPGRP
  C (SIOCGPGRP)
#endif
  /* clone/unshare/setns flags */
#ifdef CLONE_VM
  C (CLONE_VM)
#endif
#ifdef CLONE_FS
  C (CLONE_FS)
#endif
#ifdef CLONE_FILES
  C (CLONE_FILES)
#endif
#ifdef CLONE_SIGHAND
  C (CLONE_SIGHAND)
#endif
#ifdef CLONE_PIDFD
  C (CLONE_PIDFD)
#endif
#ifdef CLONE_PTRACE
  C (CLONE_PTRACE)
#endif
#ifdef CLONE_VFORK
  C (CLONE_VFORK)
#endif
#ifdef CLONE_PARENT
  C (CLONE_PARENT)
#endif
#ifdef CLONE_THREAD
  C (CLONE_THREAD)
#endif
#ifdef CLONE_NEWNS
  C (CLONE_NEWNS)
#endif
#ifdef CLONE_SYSVSEM
  C (CLONE_SYSVSEM)
#endif
#ifdef CLONE_SETTLS
  C (CLONE_SETTLS)
#endif
#ifdef CLONE_PARENT_SETTID
  C (CLONE_PARENT_SETTID)
#endif
#ifdef CLONE_CHILD_CLEARTID
  C (CLONE_CHILD_CLEARTID)
#endif
#ifdef CLONE_DETACHED
  C (CLONE_DETACHED)
#endif
#ifdef CLONE_UNTRACED
  C (CLONE_UNTRACED)
#endif
#ifdef CLONE_CHILD_SETTID
  C (CLONE_CHILD_SETTID)
#endif
#ifdef CLONE_NEWCGROUP
  C (CLONE_NEWCGROUP)
#endif
#ifdef CLONE_NEWUTS
  C (CLONE_NEWUTS)
#endif
#ifdef CLONE_NEWIPC
  C (CLONE_NEWIPC)
#endif
#ifdef CLONE_NEWUSER
  C (CLONE_NEWUSER)
#endif
#ifdef CLONE_NEWPID
  C (CLONE_NEWPID)
#endif
#ifdef CLONE_NEWNET
  C (CLONE_NEWNET)
#endif
#ifdef CLONE_IO
  C (CLONE_IO)
#endif
#ifdef CLONE_NEWTIME
  C (CLONE_NEWTIME)
#endif
#ifdef CLONE_CLEAR_SIGHAND
  C (CLONE_CLEAR_SIGHAND)
#endif
#ifdef CLONE_INTO_CGROUP
  C (CLONE_INTO_CGROUP)
#endif
  /* open flags */
#ifdef O_RDONLY
  C (O_RDONLY)
#endif
#ifdef O_WRONLY
  C (O_WRONLY)
#endif
#ifdef O_RDWR
  C (O_RDWR)
#endif
#ifdef O_ACCMODE
  C (O_ACCMODE)
#endif
#ifdef O_CREAT
  C (O_CREAT)
#endif
#ifdef O_EXCL
  C (O_EXCL)
#endif
#ifdef O_NOCTTY
  C (O_NOCTTY)
#endif
#ifdef O_TRUNC
  C (O_TRUNC)
#endif
#ifdef O_APPEND
  C (O_APPEND)
#endif
#ifdef O_NONBLOCK
  C (O_NONBLOCK)
#endif
#ifdef O_NDELAY
  C (O_NDELAY)
#endif
#ifdef O_DSYNC
  C (O_DSYNC)
#endif
#ifdef O_SYNC
  C (O_SYNC)
#endif
#ifdef O_RSYNC
  C (O_RSYNC)
#endif
#ifdef O_DIRECTORY
  C (O_DIRECTORY)
#endif
#ifdef O_NOFOLLOW
  C (O_NOFOLLOW)
#endif
#ifdef O_CLOEXEC
  C (O_CLOEXEC)
#endif
#ifdef O_ASYNC
  C (O_ASYNC)
#endif
#ifdef O_DIRECT
  C (O_DIRECT)
#endif
#ifdef O_LARGEFILE
  C (O_LARGEFILE)
#endif
#ifdef O_NOATIME
  C (O_NOATIME)
#endif
#ifdef O_PATH
  C (O_PATH)
#endif
#ifdef O_TMPFILE
  C (O_TMPFILE)
#endif
  /* *at() flags and the current-directory fd */
#ifdef AT_FDCWD
  C (AT_FDCWD)
#endif
#ifdef AT_SYMLINK_NOFOLLOW
  C (AT_SYMLINK_NOFOLLOW)
#endif
#ifdef AT_REMOVEDIR
  C (AT_REMOVEDIR)
#endif
#ifdef AT_SYMLINK_FOLLOW
  C (AT_SYMLINK_FOLLOW)
#endif
#ifdef AT_NO_AUTOMOUNT
  C (AT_NO_AUTOMOUNT)
#endif
#ifdef AT_EMPTY_PATH
  C (AT_EMPTY_PATH)
#endif
#ifdef AT_EACCESS
  C (AT_EACCESS)
#endif
#ifdef AT_RECURSIVE
  C (AT_RECURSIVE)
#endif
#ifdef AT_STATX_SYNC_AS_STAT
  C (AT_STATX_SYNC_AS_STAT)
#endif
#ifdef AT_STATX_FORCE_SYNC
  C (AT_STATX_FORCE_SYNC)
#endif
#ifdef AT_STATX_DONT_SYNC
  C (AT_STATX_DONT_SYNC)
#endif
  /* fcntl commands and seals */
#ifdef F_DUPFD
  C (F_DUPFD)
#endif
#ifdef F_DUPFD_CLOEXEC
  C (F_DUPFD_CLOEXEC)
#endif
#ifdef F_GETFD
  C (F_GETFD)
#endif
#ifdef F_SETFD
  C (F_SETFD)
#endif
#ifdef F_GETFL
  C (F_GETFL)
#endif
#ifdef F_SETFL
  C (F_SETFL)
#endif
#ifdef F_GETLK
  C (F_GETLK)
#endif
#ifdef F_SETLK
  C (F_SETLK)
#endif
#ifdef F_SETLKW
  C (F_SETLKW)
#endif
#ifdef F_OFD_GETLK
  C (F_OFD_GETLK)
#endif
#ifdef F_OFD_SETLK
  C (F_OFD_SETLK)
#endif
#ifdef F_OFD_SETLKW
  C (F_OFD_SETLKW)
#endif
#ifdef F_SETOWN
  C (F_SETOWN)
#endif
#ifdef F_GETOWN
  C (F_GETOWN)
#endif
#ifdef F_SETOWN_EX
  C (F_SETOWN_EX)
#endif
#ifdef F_GETOWN_EX
  C (F_GETOWN_EX)
#endif
#ifdef F_SETSIG
  C (F_SETSIG)
#endif
#ifdef F_GETSIG
  C (F_GETSIG)
#endif
#ifdef F_SETLEASE
  C (F_SETLEASE)
#endif
#ifdef F_GETLEASE
  C (F_GETLEASE)
#endif
#ifdef F_NOTIFY
  C (F_NOTIFY)
#endif
#ifdef F_SETPIPE_SZ
  C (F_SETPIPE_SZ)
#endif
#ifdef F_GETPIPE_SZ
  C (F_GETPIPE_SZ)
#endif
#ifdef F_ADD_SEALS
  C (F_ADD_SEALS)
#endif
#ifdef F_GET_SEALS
  C (F_GET_SEALS)
#endif
#ifdef F_SEAL_SEAL
  C (F_SEAL_SEAL)
#endif
#ifdef F_SEAL_SHRINK
  C (F_SEAL_SHRINK)
#endif
#ifdef F_SEAL_GROW
  C (F_SEAL_GROW)
#endif
#ifdef F_SEAL_WRITE
  C (F_SEAL_WRITE)
#endif
#ifdef F_SEAL_FUTURE_WRITE
  C (F_SEAL_FUTURE_WRITE)
#endif
#ifdef FD_CLOEXEC
  C (FD_CLOEXEC)
#endif
  /* memfd_create flags */
#ifdef MFD_CLOEXEC
  C (MFD_CLOEXEC)
#endif
#ifdef MFD_ALLOW_SEALING
  C (MFD_ALLOW_SEALING)
#endif
#ifdef MFD_HUGETLB
  C (MFD_HUGETLB)
#endif
#ifdef MFD_EXEC
  C (MFD_EXEC)
#endif
#ifdef MFD_NOEXEC_SEAL
  C (MFD_NOEXEC_SEAL)
#endif
  /* mmap/mprotect protections */
#ifdef PROT_NONE
  C (PROT_NONE)
#endif
#ifdef PROT_READ
  C (PROT_READ)
#endif
#ifdef PROT_WRITE
  C (PROT_WRITE)
#endif
#ifdef PROT_EXEC
  C (PROT_EXEC)
#endif
#ifdef PROT_GROWSDOWN
  C (PROT_GROWSDOWN)
#endif
#ifdef PROT_GROWSUP
  C (PROT_GROWSUP)
#endif
#ifdef PROT_SEM
  C (PROT_SEM)
#endif
  /* mmap flags */
#ifdef MAP_SHARED
  C (MAP_SHARED)
#endif
#ifdef MAP_PRIVATE
  C (MAP_PRIVATE)
#endif
#ifdef MAP_SHARED_VALIDATE
  C (MAP_SHARED_VALIDATE)
#endif
#ifdef MAP_TYPE
  C (MAP_TYPE)
#endif
#ifdef MAP_FIXED
  C (MAP_FIXED)
#endif
#ifdef MAP_ANONYMOUS
  C (MAP_ANONYMOUS)
#endif
#ifdef MAP_ANON
  C (MAP_ANON)
#endif
#ifdef MAP_FIXED_NOREPLACE
  C (MAP_FIXED_NOREPLACE)
#endif
#ifdef MAP_GROWSDOWN
  C (MAP_GROWSDOWN)
#endif
#ifdef MAP_DENYWRITE
  C (MAP_DENYWRITE)
#endif
#ifdef MAP_EXECUTABLE
  C (MAP_EXECUTABLE)
#endif
#ifdef MAP_LOCKED
  C (MAP_LOCKED)
#endif
#ifdef MAP_NORESERVE
  C (MAP_NORESERVE)
#endif
#ifdef MAP_POPULATE
  C (MAP_POPULATE)
#endif
#ifdef MAP_NONBLOCK
  C (MAP_NONBLOCK)
#endif
#ifdef MAP_STACK
  C (MAP_STACK)
#endif
#ifdef MAP_HUGETLB
  C (MAP_HUGETLB)
#endif
#ifdef MAP_SYNC
  C (MAP_SYNC)
#endif
#ifdef MAP_32BIT
  C (MAP_32BIT)
#endif
#ifdef MAP_UNINITIALIZED
  C (MAP_UNINITIALIZED)
#endif
  /* shmat flags */
#ifdef SHM_RDONLY
  C (SHM_RDONLY)
#endif
#ifdef SHM_RND
  C (SHM_RND)
#endif
#ifdef SHM_REMAP
  C (SHM_REMAP)
#endif
#ifdef SHM_EXEC
  C (SHM_EXEC)
#endif
  /* mount flags */
#ifdef MS_RDONLY
  C (MS_RDONLY)
#endif
#ifdef MS_NOSUID
  C (MS_NOSUID)
#endif
#ifdef MS_NODEV
  C (MS_NODEV)
#endif
#ifdef MS_NOEXEC
  C (MS_NOEXEC)
#endif
#ifdef MS_SYNCHRONOUS
  C (MS_SYNCHRONOUS)
#endif
#ifdef MS_REMOUNT
  C (MS_REMOUNT)
#endif
#ifdef MS_MANDLOCK
  C (MS_MANDLOCK)
#endif
#ifdef MS_DIRSYNC
  C (MS_DIRSYNC)
#endif
#ifdef MS_NOSYMFOLLOW
  C (MS_NOSYMFOLLOW)
#endif
#ifdef MS_NOATIME
  C (MS_NOATIME)
#endif
#ifdef MS_NODIRATIME
  C (MS_NODIRATIME)
#endif
#ifdef MS_BIND
  C (MS_BIND)
#endif
#ifdef MS_MOVE
  C (MS_MOVE)
#endif
#ifdef MS_REC
  C (MS_REC)
#endif
#ifdef MS_SILENT
  C (MS_SILENT)
#endif
#ifdef MS_POSIXACL
  C (MS_POSIXACL)
#endif
#ifdef MS_UNBINDABLE
  C (MS_UNBINDABLE)
#endif
#ifdef MS_PRIVATE
  C (MS_PRIVATE)
#endif
#ifdef MS_SLAVE
  C (MS_SLAVE)
#endif
#ifdef MS_SHARED
  C (MS_SHARED)
#endif
#ifdef MS_RELATIME
  C (MS_RELATIME)
#endif
#ifdef MS_KERNMOUNT
  C (MS_KERNMOUNT)
#endif
#ifdef MS_I_VERSION
  C (MS_I_VERSION)
#endif
#ifdef MS_STRICTATIME
  C (MS_STRICTATIME)
#endif
#ifdef MS_LAZYTIME
  C (MS_LAZYTIME)
#endif
#ifdef MNT_FORCE
  C (MNT_FORCE)
#endif
#ifdef MNT_DETACH
  C (MNT_DETACH)
#endif
#ifdef MNT_EXPIRE
  C (MNT_EXPIRE)
#endif
#ifdef UMOUNT_NOFOLLOW
  C (UMOUNT_NOFOLLOW)
#endif
  /* prctl options */
#ifdef PR_SET_PDEATHSIG
  C (PR_SET_PDEATHSIG)
#endif
#ifdef PR_GET_PDEATHSIG
  C (PR_GET_PDEATHSIG)
#endif
#ifdef PR_GET_DUMPABLE
  C (PR_GET_DUMPABLE)
#endif
#ifdef PR_SET_DUMPABLE
  C (PR_SET_DUMPABLE)
#endif
#ifdef PR_GET_UNALIGN
  C (PR_GET_UNALIGN)
#endif
#ifdef PR_SET_UNALIGN
  C (PR_SET_UNALIGN)
#endif
#ifdef PR_GET_KEEPCAPS
  C (PR_GET_KEEPCAPS)
#endif
#ifdef PR_SET_KEEPCAPS
  C (PR_SET_KEEPCAPS)
#endif
#ifdef PR_GET_FPEMU
  C (PR_GET_FPEMU)
#endif
#ifdef PR_SET_FPEMU
  C (PR_SET_FPEMU)
#endif
#ifdef PR_GET_FPEXC
  C (PR_GET_FPEXC)
#endif
#ifdef PR_SET_FPEXC
  C (PR_SET_FPEXC)
#endif
#ifdef PR_GET_TIMING
  C (PR_GET_TIMING)
#endif
#ifdef PR_SET_TIMING
  C (PR_SET_TIMING)
#endif
#ifdef PR_SET_NAME
  C (PR_SET_NAME)
#endif
#ifdef PR_GET_NAME
  C (PR_GET_NAME)
#endif
#ifdef PR_GET_ENDIAN
  C (PR_GET_ENDIAN)
#endif
#ifdef PR_SET_ENDIAN
  C (PR_SET_ENDIAN)
#endif
#ifdef PR_GET_SECCOMP
  C (PR_GET_SECCOMP)
#endif
#ifdef PR_SET_SECCOMP
  C (PR_SET_SECCOMP)
#endif
#ifdef PR_CAPBSET_READ
  C (PR_CAPBSET_READ)
#endif
#ifdef PR_CAPBSET_DROP
  C (PR_CAPBSET_DROP)
#endif
#ifdef PR_GET_TSC
  C (PR_GET_TSC)
#endif
#ifdef PR_SET_TSC
  C (PR_SET_TSC)
#endif
#ifdef PR_GET_SECUREBITS
  C (PR_GET_SECUREBITS)
#endif
#ifdef PR_SET_SECUREBITS
  C (PR_SET_SECUREBITS)
#endif
#ifdef PR_SET_TIMERSLACK
  C (PR_SET_TIMERSLACK)
#endif
#ifdef PR_GET_TIMERSLACK
  C (PR_GET_TIMERSLACK)
#endif
#ifdef PR_TASK_PERF_EVENTS_DISABLE
  C (PR_TASK_PERF_EVENTS_DISABLE)
#endif
#ifdef PR_TASK_PERF_EVENTS_ENABLE
  C (PR_TASK_PERF_EVENTS_ENABLE)
#endif
#ifdef PR_MCE_KILL
  C (PR_MCE_KILL)
#endif
#ifdef PR_MCE_KILL_GET
  C (PR_MCE_KILL_GET)
#endif
#ifdef PR_SET_MM
  C (PR_SET_MM)
#endif
#ifdef PR_SET_PTRACER
  C (PR_SET_PTRACER)
#endif
#ifdef PR_SET_CHILD_SUBREAPER
  C (PR_SET_CHILD_SUBREAPER)
#endif
#ifdef PR_GET_CHILD_SUBREAPER
  C (PR_GET_CHILD_SUBREAPER)
#endif
#ifdef PR_SET_NO_NEW_PRIVS
  C (PR_SET_NO_NEW_PRIVS)
#endif
#ifdef PR_GET_NO_NEW_PRIVS
  C (PR_GET_NO_NEW_PRIVS)
#endif
#ifdef PR_GET_TID_ADDRESS
  C (PR_GET_TID_ADDRESS)
#endif
#ifdef PR_SET_THP_DISABLE
  C (PR_SET_THP_DISABLE)
#endif
#ifdef PR_GET_THP_DISABLE
  C (PR_GET_THP_DISABLE)
#endif
#ifdef PR_MPX_ENABLE_MANAGEMENT
  C (PR_MPX_ENABLE_MANAGEMENT)
#endif
#ifdef PR_MPX_DISABLE_MANAGEMENT
  C (PR_MPX_DISABLE_MANAGEMENT)
#endif
#ifdef PR_SET_FP_MODE
  C (PR_SET_FP_MODE)
#endif
#ifdef PR_GET_FP_MODE
  C (PR_GET_FP_MODE)
#endif
#ifdef PR_CAP_AMBIENT
  C (PR_CAP_AMBIENT)
#endif
#ifdef PR_CAP_AMBIENT_IS_SET
  C (PR_CAP_AMBIENT_IS_SET)
#endif
#ifdef PR_CAP_AMBIENT_RAISE
  C (PR_CAP_AMBIENT_RAISE)
#endif
#ifdef PR_CAP_AMBIENT_LOWER
  C (PR_CAP_AMBIENT_LOWER)
#endif
#ifdef PR_CAP_AMBIENT_CLEAR_ALL
  C (PR_CAP_AMBIENT_CLEAR_ALL)
#endif
#ifdef PR_SVE_SET_VL
  C (PR_SVE_SET_VL)
#endif
#ifdef PR_SVE_GET_VL
  C (PR_SVE_GET_VL)
#endif
#ifdef PR_GET_SPECULATION_CTRL
  C (PR_GET_SPECULATION_CTRL)
#endif
#ifdef PR_SET_SPECULATION_CTRL
  C (PR_SET_SPECULATION_CTRL)
#endif
#ifdef PR_PAC_RESET_KEYS
  C (PR_PAC_RESET_KEYS)
#endif
#ifdef PR_SET_TAGGED_ADDR_CTRL
  C (PR_SET_TAGGED_ADDR_CTRL)
#endif
#ifdef PR_GET_TAGGED_ADDR_CTRL
  C (PR_GET_TAGGED_ADDR_CTRL)
#endif
#ifdef PR_SET_IO_FLUSHER
  C (PR_SET_IO_FLUSHER)
#endif
#ifdef PR_GET_IO_FLUSHER
  C (PR_GET_IO_FLUSHER)
#endif
#ifdef PR_SET_SYSCALL_USER_DISPATCH
  C (PR_SET_SYSCALL_USER_DISPATCH)
#endif
#ifdef PR_SCHED_CORE
  C (PR_SCHED_CORE)
#endif
#ifdef PR_SET_MDWE
  C (PR_SET_MDWE)
#endif
#ifdef PR_GET_MDWE
  C (PR_GET_MDWE)
#endif
#ifdef PR_SET_VMA
  C (PR_SET_VMA)
#endif
#ifdef PR_GET_AUXV
  C (PR_GET_AUXV)
#endif
#ifdef PR_SET_MEMORY_MERGE
  C (PR_SET_MEMORY_MERGE)
#endif
#ifdef PR_GET_MEMORY_MERGE
  C (PR_GET_MEMORY_MERGE)
#endif
#ifdef PR_SET_PTRACER_ANY
  C (PR_SET_PTRACER_ANY)
#endif
  /* personality values (an enum in glibc: always present) */
  C (PER_LINUX)
  C (PER_LINUX_32BIT)
  C (PER_LINUX_FDPIC)
  C (PER_SVR4)
  C (PER_SVR3)
  C (PER_SCOSVR3)
  C (PER_OSR5)
  C (PER_WYSEV386)
  C (PER_ISCR4)
  C (PER_BSD)
  C (PER_SUNOS)
  C (PER_XENIX)
  C (PER_LINUX32)
  C (PER_LINUX32_3GB)
  C (PER_IRIX32)
  C (PER_IRIXN32)
  C (PER_IRIX64)
  C (PER_RISCOS)
  C (PER_SOLARIS)
  C (PER_UW7)
  C (PER_OSF4)
  C (PER_HPUX)
  C (PER_MASK)
  C (UNAME26)
  C (ADDR_NO_RANDOMIZE)
  C (FDPIC_FUNCPTRS)
  C (MMAP_PAGE_ZERO)
  C (ADDR_COMPAT_LAYOUT)
  C (READ_IMPLIES_EXEC)
  C (ADDR_LIMIT_32BIT)
  C (SHORT_INODE)
  C (WHOLE_SECONDS)
  C (STICKY_TIMEOUTS)
  C (ADDR_LIMIT_3GB)
  /* seccomp() operations and flags */
#ifdef SECCOMP_MODE_DISABLED
  C (SECCOMP_MODE_DISABLED)
#endif
#ifdef SECCOMP_MODE_STRICT
  C (SECCOMP_MODE_STRICT)
#endif
#ifdef SECCOMP_MODE_FILTER
  C (SECCOMP_MODE_FILTER)
#endif
#ifdef SECCOMP_SET_MODE_STRICT
  C (SECCOMP_SET_MODE_STRICT)
#endif
#ifdef SECCOMP_SET_MODE_FILTER
  C (SECCOMP_SET_MODE_FILTER)
#endif
#ifdef SECCOMP_GET_ACTION_AVAIL
  C (SECCOMP_GET_ACTION_AVAIL)
#endif
#ifdef SECCOMP_GET_NOTIF_SIZES
  C (SECCOMP_GET_NOTIF_SIZES)
#endif
#ifdef SECCOMP_FILTER_FLAG_TSYNC
  C (SECCOMP_FILTER_FLAG_TSYNC)
#endif
#ifdef SECCOMP_FILTER_FLAG_LOG
  C (SECCOMP_FILTER_FLAG_LOG)
#endif
#ifdef SECCOMP_FILTER_FLAG_SPEC_ALLOW
  C (SECCOMP_FILTER_FLAG_SPEC_ALLOW)
#endif
#ifdef SECCOMP_FILTER_FLAG_NEW_LISTENER
  C (SECCOMP_FILTER_FLAG_NEW_LISTENER)
#endif
#ifdef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
  C (SECCOMP_FILTER_FLAG_TSYNC_ESRCH)
#endif
#ifdef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
  C (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
#endif
  /* signals (kill, tgkill arg) */
#ifdef SIGHUP
  C (SIGHUP)
#endif
#ifdef SIGINT
  C (SIGINT)
#endif
#ifdef SIGQUIT
  C (SIGQUIT)
#endif
#ifdef SIGILL
  C (SIGILL)
#endif
#ifdef SIGTRAP
  C (SIGTRAP)
#endif
#ifdef SIGABRT
  C (SIGABRT)
#endif
#ifdef SIGBUS
  C (SIGBUS)
#endif
#ifdef SIGFPE
  C (SIGFPE)
#endif
#ifdef SIGKILL
  C (SIGKILL)
#endif
#ifdef SIGUSR1
  C (SIGUSR1)
#endif
#ifdef SIGSEGV
  C (SIGSEGV)
#endif
#ifdef SIGUSR2
  C (SIGUSR2)
#endif
#ifdef SIGPIPE
  C (SIGPIPE)
#endif
#ifdef SIGALRM
  C (SIGALRM)
#endif
#ifdef SIGTERM
  C (SIGTERM)
#endif
#ifdef SIGSTKFLT
  C (SIGSTKFLT)
#endif
#ifdef SIGCHLD
  C (SIGCHLD)
#endif
#ifdef SIGCONT
  C (SIGCONT)
#endif
#ifdef SIGSTOP
  C (SIGSTOP)
#endif
#ifdef SIGTSTP
  C (SIGTSTP)
#endif
#ifdef SIGTTIN
  C (SIGTTIN)
#endif
#ifdef SIGTTOU
  C (SIGTTOU)
#endif
#ifdef SIGURG
  C (SIGURG)
#endif
#ifdef SIGXCPU
  C (SIGXCPU)
#endif
#ifdef SIGXFSZ
  C (SIGXFSZ)
#endif
#ifdef SIGVTALRM
  C (SIGVTALRM)
#endif
#ifdef SIGPROF
  C (SIGPROF)
#endif
#ifdef SIGWINCH
  C (SIGWINCH)
#endif
#ifdef SIGIO
  C (SIGIO)
#endif
#ifdef SIGPWR
  C (SIGPWR)
#endif
#ifdef SIGSYS
  C (SIGSYS)
#endif
  /* socket levels and message flags */
#ifdef SOL_SOCKET
  C (SOL_SOCKET)
#endif
#ifdef SOL_IP
  C (SOL_IP)
#endif
#ifdef SOL_IPV6
  C (SOL_IPV6)
#endif
#ifdef SOL_TCP
  C (SOL_TCP)
#endif
#ifdef SOL_UDP
  C (SOL_UDP)
#endif
#ifdef SOL_NETLINK
  C (SOL_NETLINK)
#endif
#ifdef SOL_PACKET
  C (SOL_PACKET)
#endif
#ifdef SO_PEERCRED
  C (SO_PEERCRED)
#endif
#ifdef SO_PASSCRED
  C (SO_PASSCRED)
#endif
#ifdef SO_REUSEADDR
  C (SO_REUSEADDR)
#endif
#ifdef SO_REUSEPORT
  C (SO_REUSEPORT)
#endif
#ifdef SO_BINDTODEVICE
  C (SO_BINDTODEVICE)
#endif
#ifdef SO_ATTACH_FILTER
  C (SO_ATTACH_FILTER)
#endif
#ifdef SO_ATTACH_BPF
  C (SO_ATTACH_BPF)
#endif
#ifdef MSG_OOB
  C (MSG_OOB)
#endif
#ifdef MSG_PEEK
  C (MSG_PEEK)
#endif
#ifdef MSG_DONTROUTE
  C (MSG_DONTROUTE)
#endif
#ifdef MSG_DONTWAIT
  C (MSG_DONTWAIT)
#endif
#ifdef MSG_NOSIGNAL
  C (MSG_NOSIGNAL)
#endif
#ifdef MSG_WAITALL
  C (MSG_WAITALL)
#endif
#ifdef MSG_TRUNC
  C (MSG_TRUNC)
#endif
#ifdef MSG_CMSG_CLOEXEC
  C (MSG_CMSG_CLOEXEC)
#endif
};
#undef C

#define N(x) #x,
static const char *const names[] = {
  /* Address families (socket arg0) */
#ifdef AF_UNSPEC
  N (AF_UNSPEC)
#endif
#ifdef AF_UNIX
  N (AF_UNIX)
#endif
#ifdef AF_LOCAL
  N (AF_LOCAL)
#endif
#ifdef AF_INET
  N (AF_INET)
#endif
#ifdef AF_INET6
  N (AF_INET6)
#endif
#ifdef AF_NETLINK
  N (AF_NETLINK)
#endif
#ifdef AF_PACKET
  N (AF_PACKET)
#endif
#ifdef AF_BLUETOOTH
  N (AF_BLUETOOTH)
#endif
#ifdef AF_ALG
  N (AF_ALG)
#endif
#ifdef AF_VSOCK
  N (AF_VSOCK)
#endif
#ifdef AF_KEY
  N (AF_KEY)
#endif
#ifdef AF_APPLETALK
  N (AF_APPLETALK)
#endif
#ifdef AF_AX25
  N (AF_AX25)
#endif
#ifdef AF_IPX
  N (AF_IPX)
#endif
#ifdef AF_X25
  N (AF_X25)
#endif
#ifdef AF_CAN
  N (AF_CAN)
#endif
#ifdef AF_TIPC
  N (AF_TIPC)
#endif
#ifdef AF_RDS
  N (AF_RDS)
#endif
#ifdef AF_LLC
  N (AF_LLC)
#endif
#ifdef AF_XDP
  N (AF_XDP)
#endif
#ifdef AF_MPLS
  N (AF_MPLS)
#endif
#ifdef AF_NFC
  N (AF_NFC)
#endif
#ifdef AF_KCM
  N (AF_KCM)
#endif
#ifdef AF_QIPCRTR
  N (AF_QIPCRTR)
#endif
#ifdef AF_SMC
  N (AF_SMC)
#endif
#ifdef AF_BRIDGE
  N (AF_BRIDGE)
#endif
#ifdef AF_ROSE
  N (AF_ROSE)
#endif
#ifdef AF_DECnet
  N (AF_DECnet)
#endif
#ifdef AF_NETROM
  N (AF_NETROM)
#endif
#ifdef AF_ATMPVC
  N (AF_ATMPVC)
#endif
#ifdef AF_ATMSVC
  N (AF_ATMSVC)
#endif
#ifdef AF_IRDA
  N (AF_IRDA)
#endif
#ifdef AF_PPPOX
  N (AF_PPPOX)
#endif
#ifdef AF_WANPIPE
  N (AF_WANPIPE)
#endif
#ifdef AF_ISDN
  N (AF_ISDN)
#endif
#ifdef AF_PHONET
  N (AF_PHONET)
#endif
#ifdef AF_IEEE802154
  N (AF_IEEE802154)
#endif
#ifdef AF_CAIF
  N (AF_CAIF)
#endif
#ifdef AF_SECURITY
  N (AF_SECURITY)
#endif
#ifdef AF_ECONET
  N (AF_ECONET)
#endif
#ifdef AF_ASH
  N (AF_ASH)
#endif
#ifdef AF_SNA
  N (AF_SNA)
#endif
#ifdef AF_RXRPC
  N (AF_RXRPC)
#endif
#ifdef AF_IUCV
  N (AF_IUCV)
#endif
#ifdef AF_IB
  N (AF_IB)
#endif
#ifdef AF_MCTP
  N (AF_MCTP)
#endif
  /* Socket types and flags (socket arg1) */
#ifdef SOCK_STREAM
  N (SOCK_STREAM)
#endif
#ifdef SOCK_DGRAM
  N (SOCK_DGRAM)
#endif
#ifdef SOCK_RAW
  N (SOCK_RAW)
#endif
#ifdef SOCK_RDM
  N (SOCK_RDM)
#endif
#ifdef SOCK_SEQPACKET
  N (SOCK_SEQPACKET)
#endif
#ifdef SOCK_DCCP
  N (SOCK_DCCP)
#endif
#ifdef SOCK_PACKET
  N (SOCK_PACKET)
#endif
#ifdef SOCK_NONBLOCK
  N (SOCK_NONBLOCK)
#endif
#ifdef SOCK_CLOEXEC
  N (SOCK_CLOEXEC)
#endif
  /* Protocols (socket arg2) */
#ifdef IPPROTO_IP
  N (IPPROTO_IP)
#endif
#ifdef IPPROTO_ICMP
  N (IPPROTO_ICMP)
#endif
#ifdef IPPROTO_TCP
  N (IPPROTO_TCP)
#endif
#ifdef IPPROTO_UDP
  N (IPPROTO_UDP)
#endif
#ifdef IPPROTO_IPV6
  N (IPPROTO_IPV6)
#endif
#ifdef IPPROTO_ICMPV6
  N (IPPROTO_ICMPV6)
#endif
#ifdef IPPROTO_RAW
  N (IPPROTO_RAW)
#endif
#ifdef IPPROTO_SCTP
  N (IPPROTO_SCTP)
#endif
#ifdef IPPROTO_UDPLITE
  N (IPPROTO_UDPLITE)
#endif
#ifdef IPPROTO_MPTCP
  N (IPPROTO_MPTCP)
#endif
#ifdef NETLINK_ROUTE
  N (NETLINK_ROUTE)
#endif
#ifdef NETLINK_USERSOCK
  N (NETLINK_USERSOCK)
#endif
#ifdef NETLINK_SOCK_DIAG
  N (NETLINK_SOCK_DIAG)
#endif
#ifdef NETLINK_NFLOG
  N (NETLINK_NFLOG)
#endif
#ifdef NETLINK_XFRM
  N (NETLINK_XFRM)
#endif
#ifdef NETLINK_SELINUX
  N (NETLINK_SELINUX)
#endif
#ifdef NETLINK_ISCSI
  N (NETLINK_ISCSI)
#endif
#ifdef NETLINK_AUDIT
  N (NETLINK_AUDIT)
#endif
#ifdef NETLINK_FIB_LOOKUP
  N (NETLINK_FIB_LOOKUP)
#endif
#ifdef NETLINK_CONNECTOR
  N (NETLINK_CONNECTOR)
#endif
#ifdef NETLINK_NETFILTER
  N (NETLINK_NETFILTER)
#endif
#ifdef NETLINK_IP6_FW
  N (NETLINK_IP6_FW)
#endif
#ifdef NETLINK_DNRTMSG
  N (NETLINK_DNRTMSG)
#endif
#ifdef NETLINK_KOBJECT_UEVENT
  N (NETLINK_KOBJECT_UEVENT)
#endif
#ifdef NETLINK_GENERIC
  N (NETLINK_GENERIC)
#endif
#ifdef NETLINK_SCSITRANSPORT
  N (NETLINK_SCSITRANSPORT)
#endif
#ifdef NETLINK_ECRYPTFS
  N (NETLINK_ECRYPTFS)
#endif
#ifdef NETLINK_RDMA
  N (NETLINK_RDMA)
#endif
#ifdef NETLINK_CRYPTO
  N (NETLINK_CRYPTO)
#endif
  /* Terminal ioctls (ioctl arg1) */
#ifdef TIOCSTI
  N (TIOCSTI)
#endif
#ifdef TIOCLINUX
  N (TIOCLINUX)
#endif
#ifdef TIOCSCTTY
  N (TIOCSCTTY)
#endif
#ifdef TIOCNOTTY
  N (TIOCNOTTY)
#endif
#ifdef TIOCGWINSZ
  N (TIOCGWINSZ)
#endif
#ifdef TIOCSWINSZ
  N (TIOCSWINSZ)
#endif
#ifdef TIOCGPGRP
  N (TIOCGPGRP)
#endif
#ifdef TIOCSPGRP
  N (TIOCSPGRP)
#endif
#ifdef TIOCGSID
  N (TIOCGSID)
#endif
#ifdef TIOCEXCL
  N (TIOCEXCL)
#endif
#ifdef TIOCNXCL
  N (TIOCNXCL)
#endif
#ifdef TIOCGEXCL
  N (TIOCGEXCL)
#endif
#ifdef TIOCOUTQ
  N (TIOCOUTQ)
#endif
#ifdef TIOCINQ
  N (TIOCINQ)
#endif
#ifdef TIOCMGET
  N (TIOCMGET)
#endif
#ifdef TIOCMSET
  N (TIOCMSET)
#endif
#ifdef TIOCMBIS
  N (TIOCMBIS)
#endif
#ifdef TIOCMBIC
  N (TIOCMBIC)
#endif
#ifdef TIOCCONS
  N (TIOCCONS)
#endif
#ifdef TIOCPKT
  N (TIOCPKT)
#endif
#ifdef TIOCGPKT
  N (TIOCGPKT)
#endif
#ifdef TIOCSETD
  N (TIOCSETD)
#endif
#ifdef TIOCGETD
  N (TIOCGETD)
#endif
#ifdef TIOCSBRK
  N (TIOCSBRK)
#endif
#ifdef TIOCCBRK
  N (TIOCCBRK)
#endif
#ifdef TIOCGPTN
  N (TIOCGPTN)
#endif
#ifdef TIOCSPTLCK
  N (TIOCSPTLCK)
#endif
#ifdef TIOCGPTLCK
  N (TIOCGPTLCK)
#endif
#ifdef TIOCGPTPEER
  N (TIOCGPTPEER)
#endif
#ifdef TIOCGDEV
  N (TIOCGDEV)
#endif
#ifdef TIOCVHANGUP
  N (TIOCVHANGUP)
#endif
#ifdef TIOCGLCKTRMIOS
  N (TIOCGLCKTRMIOS)
#endif
#ifdef TIOCSLCKTRMIOS
  N (TIOCSLCKTRMIOS)
#endif
#ifdef TIOCGSOFTCAR
  N (TIOCGSOFTCAR)
#endif
#ifdef TIOCSSOFTCAR
  N (TIOCSSOFTCAR)
#endif
#ifdef TIOCGRS485
  N (TIOCGRS485)
#endif
#ifdef TIOCSRS485
  N (TIOCSRS485)
#endif
#ifdef TIOCGSERIAL
  N (TIOCGSERIAL)
#endif
#ifdef TIOCSSERIAL
  N (TIOCSSERIAL)
#endif
#ifdef TIOCSERGETLSR
  N (TIOCSERGETLSR)
#endif
#ifdef TIOCGICOUNT
  N (TIOCGICOUNT)
#endif
#ifdef TIOCMIWAIT
  N (TIOCMIWAIT)
#endif
#ifdef TCGETS
  N (TCGETS)
#endif
#ifdef TCSETS
  N (TCSETS)
#endif
#ifdef TCSETSW
  N (TCSETSW)
#endif
#ifdef TCSETSF
  N (TCSETSF)
#endif
#ifdef TCGETS2
  N (TCGETS2)
#endif
#ifdef TCSETS2
  N (TCSETS2)
#endif
#ifdef TCSETSW2
  N (TCSETSW2)
#endif
#ifdef TCSETSF2
  N (TCSETSF2)
#endif
#ifdef TCGETA
  N (TCGETA)
#endif
#ifdef TCSETA
  N (TCSETA)
#endif
#ifdef TCSETAW
  N (TCSETAW)
#endif
#ifdef TCSETAF
  N (TCSETAF)
#endif
#ifdef TCSBRK
  N (TCSBRK)
#endif
#ifdef TCSBRKP
  N (TCSBRKP)
#endif
#ifdef TCXONC
  N (TCXONC)
#endif
#ifdef TCFLSH
  N (TCFLSH)
#endif
  /* File ioctls (ioctl arg1) */
#ifdef FIONREAD
  N (FIONREAD)
#endif
#ifdef FIONBIO
  N (FIONBIO)
#endif
#ifdef FIOCLEX
  N (FIOCLEX)
#endif
#ifdef FIONCLEX
  N (FIONCLEX)
#endif
#ifdef FIOASYNC
  N (FIOASYNC)
#endif
#ifdef FIOQSIZE
  N (FIOQSIZE)
#endif
#ifdef FIOSETOWN
  N (FIOSETOWN)
#endif
#ifdef FIOGETOWN
  N (FIOGETOWN)
#endif
#ifdef FIGETBSZ
  N (FIGETBSZ)
#endif
#ifdef FIBMAP
  N (FIBMAP)
#endif
  /* Socket ioctls (ioctl arg1) */
#ifdef SIOCGIFCONF
  N (SIOCGIFCONF)
#endif
#ifdef SIOCGIFFLAGS
  N (SIOCGIFFLAGS)
#endif
#ifdef SIOCSIFFLAGS
  N (SIOCSIFFLAGS)
#endif
#ifdef SIOCGIFINDEX
  N (SIOCGIFINDEX)
#endif
#ifdef SIOCGIFNAME
  N (SIOCGIFNAME)
#endif
#ifdef SIOCGIFADDR
  N (SIOCGIFADDR)
#endif
#ifdef SIOCSIFADDR
  N (SIOCSIFADDR)
#endif
#ifdef SIOCGIFMTU
  N (SIOCGIFMTU)
#endif
#ifdef SIOCSIFMTU
  N (SIOCSIFMTU)
#endif
#ifdef SIOCGIFHWADDR
  N (SIOCGIFHWADDR)
#endif
#ifdef SIOCADDRT
  N (SIOCADDRT)
#endif
#ifdef SIOCDELRT
  N (SIOCDELRT)
#endif
#ifdef SIOCATMARK
  N (SIOCATMARK)
#endif
#ifdef SIOCGSTAMP
  N (SIOCGSTAMP)
#endif
#ifdef SIOCSPGRP
  N (SIOCSPGRP)
#endif
#ifdef SIOCGPGRP
  N (SIOCGPGRP)
#endif
  /* clone/unshare/setns flags */
#ifdef CLONE_VM
  N (CLONE_VM)
#endif
#ifdef CLONE_FS
  N (CLONE_FS)
#endif
#ifdef CLONE_FILES
  N (CLONE_FILES)
#endif
#ifdef CLONE_SIGHAND
  N (CLONE_SIGHAND)
#endif
#ifdef CLONE_PIDFD
  N (CLONE_PIDFD)
#endif
#ifdef CLONE_PTRACE
  N (CLONE_PTRACE)
#endif
#ifdef CLONE_VFORK
  N (CLONE_VFORK)
#endif
#ifdef CLONE_PARENT
  N (CLONE_PARENT)
#endif
#ifdef CLONE_THREAD
  N (CLONE_THREAD)
#endif
#ifdef CLONE_NEWNS
  N (CLONE_NEWNS)
#endif
#ifdef CLONE_SYSVSEM
  N (CLONE_SYSVSEM)
#endif
#ifdef CLONE_SETTLS
  N (CLONE_SETTLS)
#endif
#ifdef CLONE_PARENT_SETTID
  N (CLONE_PARENT_SETTID)
#endif
#ifdef CLONE_CHILD_CLEARTID
  N (CLONE_CHILD_CLEARTID)
#endif
#ifdef CLONE_DETACHED
  N (CLONE_DETACHED)
#endif
#ifdef CLONE_UNTRACED
  N (CLONE_UNTRACED)
#endif
#ifdef CLONE_CHILD_SETTID
  N (CLONE_CHILD_SETTID)
#endif
#ifdef CLONE_NEWCGROUP
  N (CLONE_NEWCGROUP)
#endif
#ifdef CLONE_NEWUTS
  N (CLONE_NEWUTS)
#endif
#ifdef CLONE_NEWIPC
  N (CLONE_NEWIPC)
#endif
#ifdef CLONE_NEWUSER
  N (CLONE_NEWUSER)
#endif
#ifdef CLONE_NEWPID
  N (CLONE_NEWPID)
#endif
#ifdef CLONE_NEWNET
  N (CLONE_NEWNET)
#endif
#ifdef CLONE_IO
  N (CLONE_IO)
#endif
#ifdef CLONE_NEWTIME
  N (CLONE_NEWTIME)
#endif
#ifdef CLONE_CLEAR_SIGHAND
  N (CLONE_CLEAR_SIGHAND)
#endif
#ifdef CLONE_INTO_CGROUP
  N (CLONE_INTO_CGROUP)
#endif
  /* open flags */
#ifdef O_RDONLY
  N (O_RDONLY)
#endif
#ifdef O_WRONLY
  N (O_WRONLY)
#endif
#ifdef O_RDWR
  N (O_RDWR)
#endif
#ifdef O_ACCMODE
  N (O_ACCMODE)
#endif
#ifdef O_CREAT
  N (O_CREAT)
#endif
#ifdef O_EXCL
  N (O_EXCL)
#endif
#ifdef O_NOCTTY
  N (O_NOCTTY)
#endif
#ifdef O_TRUNC
  N (O_TRUNC)
#endif
#ifdef O_APPEND
  N (O_APPEND)
#endif
#ifdef O_NONBLOCK
  N (O_NONBLOCK)
#endif
#ifdef O_NDELAY
  N (O_NDELAY)
#endif
#ifdef O_DSYNC
  N (O_DSYNC)
#endif
#ifdef O_SYNC
  N (O_SYNC)
#endif
#ifdef O_RSYNC
  N (O_RSYNC)
#endif
#ifdef O_DIRECTORY
  N (O_DIRECTORY)
#endif
#ifdef O_NOFOLLOW
  N (O_NOFOLLOW)
#endif
#ifdef O_CLOEXEC
  N (O_CLOEXEC)
#endif
#ifdef O_ASYNC
  N (O_ASYNC)
#endif
#ifdef O_DIRECT
  N (O_DIRECT)
#endif
#ifdef O_LARGEFILE
  N (O_LARGEFILE)
#endif
#ifdef O_NOATIME
  N (O_NOATIME)
#endif
#ifdef O_PATH
  N (O_PATH)
#endif
#ifdef O_TMPFILE
  N (O_TMPFILE)
#endif
  /* *at() flags and the current-directory fd */
#ifdef AT_FDCWD
  N (AT_FDCWD)
#endif
#ifdef AT_SYMLINK_NOFOLLOW
  N (AT_SYMLINK_NOFOLLOW)
#endif
#ifdef AT_REMOVEDIR
  N (AT_REMOVEDIR)
#endif
#ifdef AT_SYMLINK_FOLLOW
  N (AT_SYMLINK_FOLLOW)
#endif
#ifdef AT_NO_AUTOMOUNT
  N (AT_NO_AUTOMOUNT)
#endif
#ifdef AT_EMPTY_PATH
  N (AT_EMPTY_PATH)
#endif
#ifdef AT_EACCESS
  N (AT_EACCESS)
#endif
#ifdef AT_RECURSIVE
  N (AT_RECURSIVE)
#endif
#ifdef AT_STATX_SYNC_AS_STAT
  N (AT_STATX_SYNC_AS_STAT)
#endif
#ifdef AT_STATX_FORCE_SYNC
  N (AT_STATX_FORCE_SYNC)
#endif
#ifdef AT_STATX_DONT_SYNC
  N (AT_STATX_DONT_SYNC)
#endif
  /* fcntl commands and seals */
#ifdef F_DUPFD
  N (F_DUPFD)
#endif
#ifdef F_DUPFD_CLOEXEC
  N (F_DUPFD_CLOEXEC)
#endif
#ifdef F_GETFD
  N (F_GETFD)
#endif
#ifdef F_SETFD
  N (F_SETFD)
#endif
#ifdef F_GETFL
  N (F_GETFL)
#endif
#ifdef F_SETFL
  N (F_SETFL)
#endif
#ifdef F_GETLK
  N (F_GETLK)
#endif
#ifdef F_SETLK
  N (F_SETLK)
#endif
#ifdef F_SETLKW
  N (F_SETLKW)
#endif
#ifdef F_OFD_GETLK
  N (F_OFD_GETLK)
#endif
#ifdef F_OFD_SETLK
  N (F_OFD_SETLK)
#endif
#ifdef F_OFD_SETLKW
  N (F_OFD_SETLKW)
#endif
#ifdef F_SETOWN
  N (F_SETOWN)
#endif
#ifdef F_GETOWN
  N (F_GETOWN)
#endif
#ifdef F_SETOWN_EX
  N (F_SETOWN_EX)
#endif
#ifdef F_GETOWN_EX
  N (F_GETOWN_EX)
#endif
#ifdef F_SETSIG
  N (F_SETSIG)
#endif
#ifdef F_GETSIG
  N (F_GETSIG)
#endif
#ifdef F_SETLEASE
  N (F_SETLEASE)
#endif
#ifdef F_GETLEASE
  N (F_GETLEASE)
#endif
#ifdef F_NOTIFY
  N (F_NOTIFY)
#endif
#ifdef F_SETPIPE_SZ
  N (F_SETPIPE_SZ)
#endif
#ifdef F_GETPIPE_SZ
  N (F_GETPIPE_SZ)
#endif
#ifdef F_ADD_SEALS
  N (F_ADD_SEALS)
#endif
#ifdef F_GET_SEALS
  N (F_GET_SEALS)
#endif
#ifdef F_SEAL_SEAL
  N (F_SEAL_SEAL)
#endif
#ifdef F_SEAL_SHRINK
  N (F_SEAL_SHRINK)
#endif
#ifdef F_SEAL_GROW
  N (F_SEAL_GROW)
#endif
#ifdef F_SEAL_WRITE
  N (F_SEAL_WRITE)
#endif
#ifdef F_SEAL_FUTURE_WRITE
  N (F_SEAL_FUTURE_WRITE)
#endif
#ifdef FD_CLOEXEC
  N (FD_CLOEXEC)
#endif
  /* memfd_create flags */
#ifdef MFD_CLOEXEC
  N (MFD_CLOEXEC)
#endif
#ifdef MFD_ALLOW_SEALING
  N (MFD_ALLOW_SEALING)
#endif
#ifdef MFD_HUGETLB
  N (MFD_HUGETLB)
#endif
#ifdef MFD_EXEC
  N (MFD_EXEC)
#endif
#ifdef MFD_NOEXEC_SEAL
  N (MFD_NOEXEC_SEAL)
#endif
  /* mmap/mprotect protections */
#ifdef PROT_NONE
  N (PROT_NONE)
#endif
#ifdef PROT_READ
  N (PROT_READ)
#endif
#ifdef PROT_WRITE
  N (PROT_WRITE)
#endif
#ifdef PROT_EXEC
  N (PROT_EXEC)
#endif
#ifdef PROT_GROWSDOWN
  N (PROT_GROWSDOWN)
#endif
#ifdef PROT_GROWSUP
  N (PROT_GROWSUP)
#endif
#ifdef PROT_SEM
  N (PROT_SEM)
#endif
  /* mmap flags */
#ifdef MAP_SHARED
  N (MAP_SHARED)
#endif
#ifdef MAP_PRIVATE
  N (MAP_PRIVATE)
#endif
#ifdef MAP_SHARED_VALIDATE
  N (MAP_SHARED_VALIDATE)
#endif
#ifdef MAP_TYPE
  N (MAP_TYPE)
#endif
#ifdef MAP_FIXED
  N (MAP_FIXED)
#endif
#ifdef MAP_ANONYMOUS
  N (MAP_ANONYMOUS)
#endif
#ifdef MAP_ANON
  N (MAP_ANON)
#endif
#ifdef MAP_FIXED_NOREPLACE
  N (MAP_FIXED_NOREPLACE)
#endif
#ifdef MAP_GROWSDOWN
  N (MAP_GROWSDOWN)
#endif
#ifdef MAP_DENYWRITE
  N (MAP_DENYWRITE)
#endif
#ifdef MAP_EXECUTABLE
  N (MAP_EXECUTABLE)
#endif
#ifdef MAP_LOCKED
  N (MAP_LOCKED)
#endif
#ifdef MAP_NORESERVE
  N (MAP_NORESERVE)
#endif
#ifdef MAP_POPULATE
  N (MAP_POPULATE)
#endif
#ifdef MAP_NONBLOCK
  N (MAP_NONBLOCK)
#endif
#ifdef MAP_STACK
  N (MAP_STACK)
#endif
#ifdef MAP_HUGETLB
  N (MAP_HUGETLB)
#endif
#ifdef MAP_SYNC
  N (MAP_SYNC)
#endif
#ifdef MAP_32BIT
  N (MAP_32BIT)
#endif
#ifdef MAP_UNINITIALIZED
  N (MAP_UNINITIALIZED)
#endif
  /* shmat flags */
#ifdef SHM_RDONLY
  N (SHM_RDONLY)
#endif
#ifdef SHM_RND
  N (SHM_RND)
#endif
#ifdef SHM_REMAP
  N (SHM_REMAP)
#endif
#ifdef SHM_EXEC
  N (SHM_EXEC)
#endif
  /* mount flags */
#ifdef MS_RDONLY
  N (MS_RDONLY)
#endif
#ifdef MS_NOSUID
  N (MS_NOSUID)
#endif
#ifdef MS_NODEV
  N (MS_NODEV)
#endif
#ifdef MS_NOEXEC
  N (MS_NOEXEC)
#endif
#ifdef MS_SYNCHRONOUS
  N (MS_SYNCHRONOUS)
#endif
#ifdef MS_REMOUNT
  N (MS_REMOUNT)
#endif
#ifdef MS_MANDLOCK
  N (MS_MANDLOCK)
#endif
#ifdef MS_DIRSYNC
  N (MS_DIRSYNC)
#endif
#ifdef MS_NOSYMFOLLOW
  N (MS_NOSYMFOLLOW)
#endif
#ifdef MS_NOATIME
  N (MS_NOATIME)
#endif
#ifdef MS_NODIRATIME
  N (MS_NODIRATIME)
#endif
#ifdef MS_BIND
  N (MS_BIND)
#endif
#ifdef MS_MOVE
  N (MS_MOVE)
#endif
#ifdef MS_REC
  N (MS_REC)
#endif
#ifdef MS_SILENT
  N (MS_SILENT)
#endif
#ifdef MS_POSIXACL
  N (MS_POSIXACL)
#endif
#ifdef MS_UNBINDABLE
  N (MS_UNBINDABLE)
#endif
#ifdef MS_PRIVATE
  N (MS_PRIVATE)
#endif
#ifdef MS_SLAVE
  N (MS_SLAVE)
#endif
#ifdef MS_SHARED
  N (MS_SHARED)
#endif
#ifdef MS_RELATIME
  N (MS_RELATIME)
#endif
#ifdef MS_KERNMOUNT
  N (MS_KERNMOUNT)
#endif
#ifdef MS_I_VERSION
  N (MS_I_VERSION)
#endif
#ifdef MS_STRICTATIME
  N (MS_STRICTATIME)
#endif
#ifdef MS_LAZYTIME
  N (MS_LAZYTIME)
#endif
#ifdef MNT_FORCE
  N (MNT_FORCE)
#endif
#ifdef MNT_DETACH
  N (MNT_DETACH)
#endif
#ifdef MNT_EXPIRE
  N (MNT_EXPIRE)
#endif
#ifdef UMOUNT_NOFOLLOW
  N (UMOUNT_NOFOLLOW)
#endif
  /* prctl options */
#ifdef PR_SET_PDEATHSIG
  N (PR_SET_PDEATHSIG)
#endif
#ifdef PR_GET_PDEATHSIG
  N (PR_GET_PDEATHSIG)
#endif
#ifdef PR_GET_DUMPABLE
  N (PR_GET_DUMPABLE)
#endif
#ifdef PR_SET_DUMPABLE
  N (PR_SET_DUMPABLE)
#endif
#ifdef PR_GET_UNALIGN
  N (PR_GET_UNALIGN)
#endif
#ifdef PR_SET_UNALIGN
  N (PR_SET_UNALIGN)
#endif
#ifdef PR_GET_KEEPCAPS
  N (PR_GET_KEEPCAPS)
#endif
#ifdef PR_SET_KEEPCAPS
  N (PR_SET_KEEPCAPS)
#endif
#ifdef PR_GET_FPEMU
  N (PR_GET_FPEMU)
#endif
#ifdef PR_SET_FPEMU
  N (PR_SET_FPEMU)
#endif
#ifdef PR_GET_FPEXC
  N (PR_GET_FPEXC)
#endif
#ifdef PR_SET_FPEXC
  N (PR_SET_FPEXC)
#endif
#ifdef PR_GET_TIMING
  N (PR_GET_TIMING)
#endif
#ifdef PR_SET_TIMING
  N (PR_SET_TIMING)
#endif
#ifdef PR_SET_NAME
  N (PR_SET_NAME)
#endif
#ifdef PR_GET_NAME
  N (PR_GET_NAME)
#endif
#ifdef PR_GET_ENDIAN
  N (PR_GET_ENDIAN)
#endif
#ifdef PR_SET_ENDIAN
  N (PR_SET_ENDIAN)
#endif
#ifdef PR_GET_SECCOMP
  N (PR_GET_SECCOMP)
#endif
#ifdef PR_SET_SECCOMP
  N (PR_SET_SECCOMP)
#endif
#ifdef PR_CAPBSET_READ
  N (PR_CAPBSET_READ)
#endif
#ifdef PR_CAPBSET_DROP
  N (PR_CAPBSET_DROP)
#endif
#ifdef PR_GET_TSC
  N (PR_GET_TSC)
#endif
#ifdef PR_SET_TSC
  N (PR_SET_TSC)
#endif
#ifdef PR_GET_SECUREBITS
  N (PR_GET_SECUREBITS)
#endif
#ifdef PR_SET_SECUREBITS
  N (PR_SET_SECUREBITS)
#endif
#ifdef PR_SET_TIMERSLACK
  N (PR_SET_TIMERSLACK)
#endif
#ifdef PR_GET_TIMERSLACK
  N (PR_GET_TIMERSLACK)
#endif
#ifdef PR_TASK_PERF_EVENTS_DISABLE
  N (PR_TASK_PERF_EVENTS_DISABLE)
#endif
#ifdef PR_TASK_PERF_EVENTS_ENABLE
  N (PR_TASK_PERF_EVENTS_ENABLE)
#endif
#ifdef PR_MCE_KILL
  N (PR_MCE_KILL)
#endif
#ifdef PR_MCE_KILL_GET
  N (PR_MCE_KILL_GET)
#endif
#ifdef PR_SET_MM
  N (PR_SET_MM)
#endif
#ifdef PR_SET_PTRACER
  N (PR_SET_PTRACER)
#endif
#ifdef PR_SET_CHILD_SUBREAPER
  N (PR_SET_CHILD_SUBREAPER)
#endif
#ifdef PR_GET_CHILD_SUBREAPER
  N (PR_GET_CHILD_SUBREAPER)
#endif
#ifdef PR_SET_NO_NEW_PRIVS
  N (PR_SET_NO_NEW_PRIVS)
#endif
#ifdef PR_GET_NO_NEW_PRIVS
  N (PR_GET_NO_NEW_PRIVS)
#endif
#ifdef PR_GET_TID_ADDRESS
  N (PR_GET_TID_ADDRESS)
#endif
#ifdef PR_SET_THP_DISABLE
  N (PR_SET_THP_DISABLE)
#endif
#ifdef PR_GET_THP_DISABLE
  N (PR_GET_THP_DISABLE)
#endif
#ifdef PR_MPX_ENABLE_MANAGEMENT
  N (PR_MPX_ENABLE_MANAGEMENT)
#endif
#ifdef PR_MPX_DISABLE_MANAGEMENT
  N (PR_MPX_DISABLE_MANAGEMENT)
#endif
#ifdef PR_SET_FP_MODE
  N (PR_SET_FP_MODE)
#endif
#ifdef PR_GET_FP_MODE
  N (PR_GET_FP_MODE)
#endif
#ifdef PR_CAP_AMBIENT
  N (PR_CAP_AMBIENT)
#endif
#ifdef PR_CAP_AMBIENT_IS_SET
  N (PR_CAP_AMBIENT_IS_SET)
#endif
#ifdef PR_CAP_AMBIENT_RAISE
  N (PR_CAP_AMBIENT_RAISE)
#endif
#ifdef PR_CAP_AMBIENT_LOWER
  N (PR_CAP_AMBIENT_LOWER)
#endif
#ifdef PR_CAP_AMBIENT_CLEAR_ALL
  N (PR_CAP_AMBIENT_CLEAR_ALL)
#endif
#ifdef PR_SVE_SET_VL
  N (PR_SVE_SET_VL)
#endif
#ifdef PR_SVE_GET_VL
  N (PR_SVE_GET_VL)
#endif
#ifdef PR_GET_SPECULATION_CTRL
  N (PR_GET_SPECULATION_CTRL)
#endif
#ifdef PR_SET_SPECULATION_CTRL
  N (PR_SET_SPECULATION_CTRL)
#endif
#ifdef PR_PAC_RESET_KEYS
  N (PR_PAC_RESET_KEYS)
#endif
#ifdef PR_SET_TAGGED_ADDR_CTRL
  N (PR_SET_TAGGED_ADDR_CTRL)
#endif
#ifdef PR_GET_TAGGED_ADDR_CTRL
  N (PR_GET_TAGGED_ADDR_CTRL)
#endif
#ifdef PR_SET_IO_FLUSHER
  N (PR_SET_IO_FLUSHER)
#endif
#ifdef PR_GET_IO_FLUSHER
  N (PR_GET_IO_FLUSHER)
#endif
#ifdef PR_SET_SYSCALL_USER_DISPATCH
  N (PR_SET_SYSCALL_USER_DISPATCH)
#endif
#ifdef PR_SCHED_CORE
  N (PR_SCHED_CORE)
#endif
#ifdef PR_SET_MDWE
  N (PR_SET_MDWE)
#endif
#ifdef PR_GET_MDWE
  N (PR_GET_MDWE)
#endif
#ifdef PR_SET_VMA
  N (PR_SET_VMA)
#endif
#ifdef PR_GET_AUXV
  N (PR_GET_AUXV)
#endif
#ifdef PR_SET_MEMORY_MERGE
  N (PR_SET_MEMORY_MERGE)
#endif
#ifdef PR_GET_MEMORY_MERGE
  N (PR_GET_MEMORY_MERGE)
#endif
#ifdef PR_SET_PTRACER_ANY
  N (PR_SET_PTRACER_ANY)
#endif
  /* personality values (an enum in glibc: always present) */
  N (PER_LINUX)
  N (PER_LINUX_32BIT)
  N (PER_LINUX_FDPIC)
  N (PER_SVR4)
  N (PER_SVR3)
  N (PER_SCOSVR3)
  N (PER_OSR5)
  N (PER_WYSEV386)
  N (PER_ISCR4)
  N (PER_BSD)
  N (PER_SUNOS)
  N (PER_XENIX)
  N (PER_LINUX32)
  N (PER_LINUX32_3GB)
  N (PER_IRIX32)
  N (PER_IRIXN32)
  N (PER_IRIX64)
  N (PER_RISCOS)
  N (PER_SOLARIS)
  N (PER_UW7)
  N (PER_OSF4)
  N (PER_HPUX)
  N (PER_MASK)
  N (UNAME26)
  N (ADDR_NO_RANDOMIZE)
  N (FDPIC_FUNCPTRS)
  N (MMAP_PAGE_ZERO)
  N (ADDR_COMPAT_LAYOUT)
  N (READ_IMPLIES_EXEC)
  N (ADDR_LIMIT_32BIT)
  N (SHORT_INODE)
  N (WHOLE_SECONDS)
  N (STICKY_TIMEOUTS)
  N (ADDR_LIMIT_3GB)
  /* seccomp() operations and flags */
#ifdef SECCOMP_MODE_DISABLED
  N (SECCOMP_MODE_DISABLED)
#endif
#ifdef SECCOMP_MODE_STRICT
  N (SECCOMP_MODE_STRICT)
#endif
#ifdef SECCOMP_MODE_FILTER
  N (SECCOMP_MODE_FILTER)
#endif
#ifdef SECCOMP_SET_MODE_STRICT
  N (SECCOMP_SET_MODE_STRICT)
#endif
#ifdef SECCOMP_SET_MODE_FILTER
  N (SECCOMP_SET_MODE_FILTER)
#endif
#ifdef SECCOMP_GET_ACTION_AVAIL
  N (SECCOMP_GET_ACTION_AVAIL)
#endif
#ifdef SECCOMP_GET_NOTIF_SIZES
  N (SECCOMP_GET_NOTIF_SIZES)
#endif
#ifdef SECCOMP_FILTER_FLAG_TSYNC
  N (SECCOMP_FILTER_FLAG_TSYNC)
#endif
#ifdef SECCOMP_FILTER_FLAG_LOG
  N (SECCOMP_FILTER_FLAG_LOG)
#endif
#ifdef SECCOMP_FILTER_FLAG_SPEC_ALLOW
  N (SECCOMP_FILTER_FLAG_SPEC_ALLOW)
#endif
#ifdef SECCOMP_FILTER_FLAG_NEW_LISTENER
  N (SECCOMP_FILTER_FLAG_NEW_LISTENER)
#endif
#ifdef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
  N (SECCOMP_FILTER_FLAG_TSYNC_ESRCH)
#endif
#ifdef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
  N (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
#endif
  /* signals (kill, tgkill arg) */
#ifdef SIGHUP
  N (SIGHUP)
#endif
#ifdef SIGINT
  N (SIGINT)
#endif
#ifdef SIGQUIT
  N (SIGQUIT)
#endif
#ifdef SIGILL
  N (SIGILL)
#endif
#ifdef SIGTRAP
  N (SIGTRAP)
#endif
#ifdef SIGABRT
  N (SIGABRT)
#endif
#ifdef SIGBUS
  N (SIGBUS)
#endif
#ifdef SIGFPE
  N (SIGFPE)
#endif
#ifdef SIGKILL
  N (SIGKILL)
#endif
#ifdef SIGUSR1
  N (SIGUSR1)
#endif
#ifdef SIGSEGV
  N (SIGSEGV)
#endif
#ifdef SIGUSR2
  N (SIGUSR2)
#endif
#ifdef SIGPIPE
  N (SIGPIPE)
#endif
#ifdef SIGALRM
  N (SIGALRM)
#endif
#ifdef SIGTERM
  N (SIGTERM)
#endif
#ifdef SIGSTKFLT
  N (SIGSTKFLT)
#endif
#ifdef SIGCHLD
  N (SIGCHLD)
#endif
#ifdef SIGCONT
  N (SIGCONT)
#endif
#ifdef SIGSTOP
  N (SIGSTOP)
#endif
#ifdef SIGTSTP
  N (SIGTSTP)
#endif
#ifdef SIGTTIN
  N (SIGTTIN)
#endif
#ifdef SIGTTOU
  N (SIGTTOU)
#endif
#ifdef SIGURG
  N (SIGURG)
#endif
#ifdef SIGXCPU
  N (SIGXCPU)
#endif
#ifdef SIGXFSZ
  N (SIGXFSZ)
#endif
#ifdef SIGVTALRM
  N (SIGVTALRM)
#endif
#ifdef SIGPROF
  N (SIGPROF)
#endif
#ifdef SIGWINCH
  N (SIGWINCH)
#endif
#ifdef SIGIO
  N (SIGIO)
#endif
#ifdef SIGPWR
  N (SIGPWR)
#endif
#ifdef SIGSYS
  N (SIGSYS)
#endif
  /* socket levels and message flags */
#ifdef SOL_SOCKET
  N (SOL_SOCKET)
#endif
#ifdef SOL_IP
  N (SOL_IP)
#endif
#ifdef SOL_IPV6
  N (SOL_IPV6)
#endif
#ifdef SOL_TCP
  N (SOL_TCP)
#endif
#ifdef SOL_UDP
  N (SOL_UDP)
#endif
#ifdef SOL_NETLINK
  N (SOL_NETLINK)
#endif
#ifdef SOL_PACKET
  N (SOL_PACKET)
#endif
#ifdef SO_PEERCRED
  N (SO_PEERCRED)
#endif
#ifdef SO_PASSCRED
  N (SO_PASSCRED)
#endif
#ifdef SO_REUSEADDR
  N (SO_REUSEADDR)
#endif
#ifdef SO_REUSEPORT
  N (SO_REUSEPORT)
#endif
#ifdef SO_BINDTODEVICE
  N (SO_BINDTODEVICE)
#endif
#ifdef SO_ATTACH_FILTER
  N (SO_ATTACH_FILTER)
#endif
#ifdef SO_ATTACH_BPF
  N (SO_ATTACH_BPF)
#endif
#ifdef MSG_OOB
  N (MSG_OOB)
#endif
#ifdef MSG_PEEK
  N (MSG_PEEK)
#endif
#ifdef MSG_DONTROUTE
  N (MSG_DONTROUTE)
#endif
#ifdef MSG_DONTWAIT
  N (MSG_DONTWAIT)
#endif
#ifdef MSG_NOSIGNAL
  N (MSG_NOSIGNAL)
#endif
#ifdef MSG_WAITALL
  N (MSG_WAITALL)
#endif
#ifdef MSG_TRUNC
  N (MSG_TRUNC)
#endif
#ifdef MSG_CMSG_CLOEXEC
  N (MSG_CMSG_CLOEXEC)
#endif
  NULL
};
#undef N

int
securer_const_lookup (const char *name, uint64_t *value)
{
  if (name == NULL)
    return -1;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp (table[i].name, name) == 0)
      {
        *value = table[i].value;
        return 0;
      }
  return -1;
}

const char *const *
securer_const_names (void)
{
  return names;
}
