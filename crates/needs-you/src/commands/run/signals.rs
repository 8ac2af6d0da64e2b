//! Signals while a command runs. A Ctrl-C from the terminal reaches the
//! command by itself (it is in the terminal's foreground group with us), so we forward only what
//! another process sent us (`kill`), told apart by `si_code`; forwarding the
//! terminal's too would give the command every Ctrl-C twice, which an agent
//! may read as "quit". A hang-up is passed on whoever sent it: a
//! pseudo-terminal's reaches its session's leader alone, which we are as a
//! tmux pane's first process, and an agent left without it outlives its
//! closed pane. A command in a tmux session of its own is in another
//! terminal: it gets our terminal's Ctrl-C and Ctrl-\ from us
//! (after a detach, needs-you still waits in the foreground), but never a
//! hang-up, which tmux is there to survive. Once the command has ended, the
//! signals have their default back: a Ctrl-C during the revoke ends us.
//!

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// The process that signals are forwarded to (0: none yet).
pub(super) static CHILD: AtomicI32 = AtomicI32::new(0);
/// Whether the command runs in a tmux session of its own, out of our
/// terminal's reach.
pub(super) static ELSEWHERE: AtomicBool = AtomicBool::new(false);
/// A signal to forward that came before the command's pid was known (a tmux
/// session's first moments): sent once it is.
pub(super) static PENDING: AtomicI32 = AtomicI32::new(0);

const FORWARDED: [libc::c_int; 4] = [libc::SIGINT, libc::SIGQUIT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn forward(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel hands a valid siginfo to an SA_SIGINFO handler.
    let code = unsafe { (*info).si_code };
    // SI_USER (0) and SI_QUEUE (< 0): another process. The terminal's
    // Ctrl-C and Ctrl-\ (SI_KERNEL, > 0) reached the command's group
    // already, unless the command is in tmux. A pseudo-terminal's hang-up
    // reaches its session's leader alone, which we may be (a tmux pane's
    // first process): passed on, unless the command is in a tmux of its own,
    // which is there to survive it.
    let from_terminal = code > 0;
    let in_tmux = ELSEWHERE.load(Ordering::SeqCst);
    let elsewhere = in_tmux && sig != libc::SIGHUP;
    let hung_up = sig == libc::SIGHUP && !in_tmux;
    let pid = CHILD.load(Ordering::SeqCst);
    if !from_terminal || elsewhere || hung_up {
        if pid > 0 {
            // SAFETY: kill is async-signal-safe.
            unsafe { libc::kill(pid, sig) };
        } else {
            PENDING.store(sig, Ordering::SeqCst);
        }
    }
}

pub(crate) fn install_forwarding() {
    for sig in FORWARDED {
        // SAFETY: a zeroed sigaction with a valid handler and an empty mask.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = forward as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// The default action back, once there is no command to forward to.
pub(crate) fn restore_defaults() {
    for sig in FORWARDED {
        // SAFETY: the default disposition is always valid.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
        }
    }
}
