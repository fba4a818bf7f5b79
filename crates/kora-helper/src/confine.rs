//! Confinement of a helper process: the seccomp denylist and RLIMIT_FSIZE on Linux, built before
//! the fork and installed between fork and exec.
//!
//! The claim is narrow on purpose (the record's "It is a denylist"): without `net` no socket
//! other than a Unix one and no connect/bind/listen/accept; without `write` no opening for
//! write or create, no renaming, unlinking, truncating or changing metadata, and no byte past
//! RLIMIT_FSIZE through a descriptor the helper inherited; always no ptrace, no reading or
//! writing another process's memory, no io_uring (its operations bypass the filter), and no x32
//! or i386 entry points (other syscall numbers the filter would not recognise). `execve` stays
//! allowed: the filter survives it, so a child is confined too.

use std::process::Command;

use crate::needs::Needs;

/// Whether this platform confines helpers; when not, the caller warns on stderr.
pub const CONFINED: bool = cfg!(all(
    target_os = "linux",
    any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64"
    )
));

/// The warning a person sees when a helper runs with Kora's own rights.
pub fn unconfined_warning(name: &str) -> String {
    format!(
        "warning: helper `{name}` runs unconfined: this platform offers no sandbox Kora can \
         apply, so it has Kora's own rights (network, files)"
    )
}

/// Arranges for `cmd`'s process to start confined to `needs`. The filter is compiled here,
/// before the fork; the child only makes the prctl, seccomp and setrlimit calls, which do not
/// allocate.
pub fn confine(cmd: &mut Command, needs: Needs) -> Result<(), String> {
    imp::confine(cmd, needs)
}

#[cfg(all(
    target_os = "linux",
    any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64"
    )
))]
mod imp {
    use std::collections::BTreeMap;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch,
    };

    use crate::needs::Needs;

    #[cfg(target_arch = "x86_64")]
    const ARCH: TargetArch = TargetArch::x86_64;
    #[cfg(target_arch = "aarch64")]
    const ARCH: TargetArch = TargetArch::aarch64;
    #[cfg(target_arch = "riscv64")]
    const ARCH: TargetArch = TargetArch::riscv64;

    /// What a confined helper may write to a file it inherited: nothing, so a descriptor
    /// opened for writing before the fork (a redirected stderr) carries no bytes out.
    const FSIZE_WITHOUT_WRITE: libc::rlim_t = 0;

    pub fn confine(cmd: &mut Command, needs: Needs) -> Result<(), String> {
        let prog = filter(needs)?;
        let fsize = (!needs.write).then_some(FSIZE_WITHOUT_WRITE);
        // SAFETY: the closure runs between fork and exec; it calls only setrlimit, prctl and
        // seccomp on memory built before the fork, none of which allocates or takes a lock.
        unsafe {
            cmd.pre_exec(move || {
                if let Some(limit) = fsize {
                    let rl = libc::rlimit {
                        rlim_cur: limit,
                        rlim_max: limit,
                    };
                    if libc::setrlimit(libc::RLIMIT_FSIZE, &rl) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                // apply_filter sets PR_SET_NO_NEW_PRIVS first: an unprivileged process may
                // install a filter only then, and a setuid program cannot shed it.
                seccompiler::apply_filter(&prog).map_err(|e| match e {
                    seccompiler::Error::Prctl(e) | seccompiler::Error::Seccomp(e) => e,
                    _ => std::io::Error::from_raw_os_error(libc::EINVAL),
                })
            });
        }
        Ok(())
    }

    fn cond(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, String> {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(|e| e.to_string())
    }

    fn rule(conds: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
        SeccompRule::new(conds).map_err(|e| e.to_string())
    }

    /// Rules matching an open whose flags (argument `arg`) ask to write, create or truncate.
    fn writing_flags(arg: u8) -> Result<Vec<SeccompRule>, String> {
        let acc = libc::O_ACCMODE as u64;
        let mut rules = Vec::new();
        for (mask, value) in [
            (acc, libc::O_WRONLY as u64),
            (acc, libc::O_RDWR as u64),
            (libc::O_CREAT as u64, libc::O_CREAT as u64),
            (libc::O_TRUNC as u64, libc::O_TRUNC as u64),
            (libc::O_APPEND as u64, libc::O_APPEND as u64),
        ] {
            rules.push(rule(vec![cond(arg, SeccompCmpOp::MaskedEq(mask), value)?])?);
        }
        Ok(rules)
    }

    /// The denylist for `needs`, as a BPF program: a listed call fails with EPERM, any other
    /// runs.
    pub fn filter(needs: Needs) -> Result<BpfProgram, String> {
        let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
        let always = |r: &mut BTreeMap<i64, Vec<SeccompRule>>, nr: libc::c_long| {
            r.insert(nr, Vec::new());
        };
        for nr in [
            libc::SYS_ptrace,
            libc::SYS_process_vm_readv,
            libc::SYS_process_vm_writev,
            libc::SYS_io_uring_setup,
            libc::SYS_io_uring_enter,
            libc::SYS_io_uring_register,
            libc::SYS_pidfd_getfd,
            libc::SYS_kcmp,
            libc::SYS_bpf,
            libc::SYS_perf_event_open,
            libc::SYS_userfaultfd,
        ] {
            always(&mut rules, nr);
        }
        if !needs.net {
            // A Unix socket reaches nothing by itself; connect/bind/listen/accept are refused
            // whatever the family, so it cannot reach a local daemon either.
            let not_unix = || -> Result<Vec<SeccompRule>, String> {
                Ok(vec![rule(vec![cond(
                    0,
                    SeccompCmpOp::Ne,
                    libc::AF_UNIX as u64,
                )?])?])
            };
            rules.insert(libc::SYS_socket, not_unix()?);
            rules.insert(libc::SYS_socketpair, not_unix()?);
            for nr in [
                libc::SYS_connect,
                libc::SYS_bind,
                libc::SYS_listen,
                libc::SYS_accept,
                libc::SYS_accept4,
            ] {
                always(&mut rules, nr);
            }
        }
        if !needs.write {
            rules.insert(libc::SYS_openat, writing_flags(2)?);
            #[cfg(target_arch = "x86_64")]
            {
                rules.insert(libc::SYS_open, writing_flags(1)?);
                for nr in [
                    libc::SYS_creat,
                    libc::SYS_rename,
                    libc::SYS_unlink,
                    libc::SYS_rmdir,
                    libc::SYS_mkdir,
                    libc::SYS_link,
                    libc::SYS_symlink,
                    libc::SYS_chmod,
                    libc::SYS_chown,
                    libc::SYS_lchown,
                    libc::SYS_mknod,
                    libc::SYS_utime,
                    libc::SYS_utimes,
                    libc::SYS_futimesat,
                ] {
                    always(&mut rules, nr);
                }
            }
            // openat2 carries its flags behind a pointer, which seccomp cannot read: refused
            // whole (libc's open never uses it).
            for nr in [
                libc::SYS_openat2,
                libc::SYS_renameat,
                libc::SYS_renameat2,
                libc::SYS_unlinkat,
                libc::SYS_mkdirat,
                libc::SYS_linkat,
                libc::SYS_symlinkat,
                libc::SYS_truncate,
                libc::SYS_ftruncate,
                libc::SYS_fallocate,
                libc::SYS_fchmod,
                libc::SYS_fchmodat,
                libc::SYS_fchown,
                libc::SYS_fchownat,
                libc::SYS_mknodat,
                libc::SYS_utimensat,
                libc::SYS_setxattr,
                libc::SYS_lsetxattr,
                libc::SYS_fsetxattr,
                libc::SYS_removexattr,
                libc::SYS_lremovexattr,
                libc::SYS_fremovexattr,
                libc::SYS_name_to_handle_at,
                libc::SYS_open_by_handle_at,
            ] {
                always(&mut rules, nr);
            }
        }
        let f = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::EPERM as u32),
            super::imp::ARCH,
        )
        .map_err(|e| format!("the helper's seccomp filter: {e}"))?;
        let body: BpfProgram = f
            .try_into()
            .map_err(|e: seccompiler::BackendError| format!("the helper's seccomp filter: {e}"))?;
        Ok(with_abi_guard(body))
    }

    /// seccompiler checks the architecture (an i386 `int 0x80` call is killed) but compares
    /// syscall numbers exactly, and an x32 call is the x86_64 number with bit 30 set: every
    /// number at or past that bit is refused before the table is consulted.
    #[cfg(target_arch = "x86_64")]
    fn with_abi_guard(body: BpfProgram) -> BpfProgram {
        use seccompiler::sock_filter;
        const X32_SYSCALL_BIT: u32 = 0x4000_0000;
        // BPF_LD and BPF_W are both 0, so the load is BPF_ABS alone.
        const LD_W_ABS: u16 = 0x20;
        const JGE_K: u16 = 0x05 | 0x30;
        const RET_K: u16 = 0x06;
        let mut prog = vec![
            // seccomp_data.nr is at offset 0.
            sock_filter {
                code: LD_W_ABS,
                jt: 0,
                jf: 0,
                k: 0,
            },
            sock_filter {
                code: JGE_K,
                jt: 0,
                jf: 1,
                k: X32_SYSCALL_BIT,
            },
            sock_filter {
                code: RET_K,
                jt: 0,
                jf: 0,
                k: libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
            },
        ];
        prog.extend(body);
        prog
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn with_abi_guard(body: BpfProgram) -> BpfProgram {
        body
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn every_combination_of_needs_compiles() {
            for net in [false, true] {
                for write in [false, true] {
                    let p = filter(Needs { net, write }).expect("compiles");
                    assert!(p.len() < u16::MAX as usize, "fits a sock_fprog");
                }
            }
        }
    }
}

#[cfg(not(all(
    target_os = "linux",
    any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64"
    )
)))]
mod imp {
    use std::process::Command;

    use crate::needs::Needs;

    pub fn confine(_cmd: &mut Command, _needs: Needs) -> Result<(), String> {
        Ok(())
    }
}
