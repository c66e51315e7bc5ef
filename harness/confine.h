/* SPDX-License-Identifier: GPL-2.0 */
/* confine.h — the guest process confined on the host side.
 *
 * The guest's read-only root is enforced by the guest kernel only: guest
 * root (or a kernel bug reached from BPF) can mount hostfs of any host path,
 * or remount a 9p share, and write there as the host user.  So the UML or
 * QEMU process itself is confined between fork and exec: it can read the
 * host's / (the guest's root) but write, create, remove or rename only
 * beneath its run directory and in the few device files the backends need.
 *
 * How, in order of preference (BPFUML_CONFINE=landlock|namespace forces one;
 * BPFUML_CONFINE=none runs unconfined, said on stderr each time):
 *   landlock   Landlock, where the host kernel has it (any user).
 *   namespace  a private mount namespace (in a user namespace) with / read-
 *              only, nodev, nosuid, and the run directory and device files
 *              bound read-write; locked by a second user namespace so the
 *              guest cannot undo it.
 * With neither, no guest boots: confine_prepare() says why and what to do.
 */
#ifndef BPFUML_CONFINE_H
#define BPFUML_CONFINE_H

#include <stddef.h>
#include <sys/types.h>

/* Decide, once per process, how guests are confined.  0, or a negative
 * errno with MSG saying why none is possible and what to do (-EINVAL: a
 * BPFUML_CONFINE value that is not one of ours). */
int confine_prepare(char *msg, size_t len);

/* What confines guests, for the JSON documents: "landlock-abi7",
 * "namespace" or "none"; NULL before confine_prepare() succeeded. */
const char *confine_name(void);

/* One line for `bpfuml help` about this host's confinement. */
void confine_describe(char *buf, size_t len);

/* In the child between fork and exec: confine this process so that it can
 * write only beneath RUN_DIR (NULL: nowhere) and the device files a backend
 * needs; file descriptors above 2 are closed on exec (an inherited writable
 * descriptor would bypass every rule).  Does not return when it fails: the
 * reason goes to stderr (the console log) and the child exits 126. */
void confine_child(const char *run_dir);

/* In a user namespace just made: UID and GID (the caller's, read before
 * unshare) mapped to themselves.  0 or a negative errno. */
int confine_map_own_ids(uid_t uid, gid_t gid);

#endif
